// A real TCF v2.2 CMP for the demo and the e2e tests, built from npm @iabtcf/core + @iabtcf/cmpapi (not a
// hand-written stub). `window.demoCmp` plays the user's choice; with `ui` it shows a consent banner whose buttons
// make the choice, as a real CMP would.
import { CmpApi } from '@iabtcf/cmpapi';
import { CMP_ID, CMP_VERSION, encodeTcString as encode } from '../../test/support/tcf/tc-string.mjs';

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
  /** The CMP shows its UI (a banner with "Accept all" and "Reject all") and waits for the user. */
  showUi() {
    api.update('', true);
    showBanner();
  },
  /** GDPR does not apply to this user. */
  noGdpr() {
    api.update(null);
  },
};
/** The consent banner: fixed at the bottom of the page; a click records the choice and removes it. */
function showBanner() {
  if (!document.body) return void document.addEventListener('DOMContentLoaded', showBanner, { once: true });
  const banner = document.createElement('div');
  banner.id = 'demo-cmp-banner';
  banner.setAttribute('role', 'dialog');
  banner.setAttribute('aria-label', 'Consent');
  banner.style.cssText =
    'position:fixed;left:0;right:0;bottom:0;padding:1rem;background:#223;color:#fff;font:15px system-ui,sans-serif;z-index:2147483647';
  banner.textContent =
    'This demo site and its partners would like to store and read ids on your device (TCF purposes 1-4, 7, 9, 10). ';
  for (const [text, choose] of [
    ['Accept all', () => window.demoCmp.consent()],
    ['Reject all', () => window.demoCmp.refuse()],
  ]) {
    const button = document.createElement('button');
    button.type = 'button';
    button.textContent = text;
    button.style.cssText = 'margin-left:.5rem;padding:.3rem .9rem;font:inherit';
    button.addEventListener('click', () => {
      banner.remove();
      choose();
    });
    banner.append(button);
  }
  document.body.append(banner);
}

// The page says what the user chose before load: <script src=".../cmp.js" data-choice="consent|refuse|ui|none">.
const choice = document.currentScript?.dataset.choice || 'ui';
if (choice === 'consent') window.demoCmp.consent();
else if (choice === 'refuse') window.demoCmp.refuse();
else if (choice === 'none') window.demoCmp.noGdpr();
else window.demoCmp.showUi();
