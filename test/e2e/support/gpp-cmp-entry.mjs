// A real GPP CMP for the e2e tests (npm @iabgpp/cmpapi), carrying only the EU TCF section (tcfeuv2) with the
// user's choice: <script src="/gpp-cmp.js" data-choice="consent|refuse">. No TCF API on the page.
import { CmpApi } from '@iabgpp/cmpapi';
import { encodeTcString } from '../../support/tcf/tc-string.mjs';

const choice = document.currentScript?.dataset.choice || 'consent';
const api = new CmpApi(10, 1);
api.setSectionString(
  'tcfeuv2',
  choice === 'consent' ? encodeTcString([1, 2, 3, 4, 7, 9, 10], [21, 45, 91, 97, 131]) : encodeTcString([], []),
);
api.setApplicableSections([2]);
api.setSignalStatus('ready');
api.fireSectionChange('tcfeuv2');
