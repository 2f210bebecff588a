// A real GPP CMP for the e2e tests (npm @iabgpp/cmpapi). With data-choice="consent|refuse" it carries only the EU
// TCF section (tcfeuv2) with the user's choice; with data-choice="usnat-optin|usnat-spm" only the US national
// section (usnat), every notice given and opted in, the second in service-provider mode (no sharing of ids).
// No TCF API on the page.
import { CmpApi } from '@iabgpp/cmpapi';
import { encodeTcString } from '../../support/tcf/tc-string.mjs';

const choice = document.currentScript?.dataset.choice || 'consent';
const api = new CmpApi(10, 1);
if (choice.startsWith('usnat')) {
  for (const f of ['SharingNotice', 'SaleOptOutNotice', 'SharingOptOutNotice', 'TargetedAdvertisingOptOutNotice'])
    api.setFieldValue('usnat', f, 1);
  for (const f of ['SaleOptOut', 'SharingOptOut', 'TargetedAdvertisingOptOut']) api.setFieldValue('usnat', f, 2);
  if (choice === 'usnat-spm') api.setFieldValue('usnat', 'MspaServiceProviderMode', 1);
  api.setApplicableSections([7]);
  api.setSignalStatus('ready');
  api.fireSectionChange('usnat');
} else {
  api.setSectionString(
    'tcfeuv2',
    choice === 'consent' ? encodeTcString([1, 2, 3, 4, 7, 9, 10], [21, 45, 91, 97, 131]) : encodeTcString([], []),
  );
  api.setApplicableSections([2]);
  api.setSignalStatus('ready');
  api.fireSectionChange('tcfeuv2');
}
