// A real TCF v2.2 CMP for the demo and the e2e tests, built from npm @iabtcf/core + @iabtcf/cmpapi (not a
// hand-written stub). It has no UI: `window.demoCmp` plays the user's choice.
import { CmpApi } from '@iabtcf/cmpapi';
import { CMP_ID, CMP_VERSION, encodeTcString as encode } from './tc-string.mjs';

const api = new CmpApi(CMP_ID, CMP_VERSION, true);

window.demoCmp = {
  /** The user accepts these purposes and vendors. */
  consent(purposes = [1, 2, 3, 4, 7, 9, 10], vendors = [21, 45, 91, 97, 131]) {
    api.update(encode(purposes, vendors), false);
  },
  /** The user refuses everything. */
  refuse() {
    api.update(encode([], []), false);
  },
  /** The CMP shows its UI and waits for the user. */
  showUi() {
    api.update('', true);
  },
  /** GDPR does not apply to this user. */
  noGdpr() {
    api.update(null);
  },
};
// The page says what the user chose before load: <script src=".../cmp.js" data-choice="consent|refuse|ui|none">.
const choice = document.currentScript?.dataset.choice || 'ui';
if (choice === 'consent') window.demoCmp.consent();
else if (choice === 'refuse') window.demoCmp.refuse();
else if (choice === 'none') window.demoCmp.noGdpr();
else window.demoCmp.showUi();
