// Prebid.js built from npm modules with the adapter from `eidkit/prebid` (the form for publishers who build
// Prebid themselves), bundled by npm-bundle.mjs. Same modules as the standalone demo (routes.mjs PREBID_MODULES).
import pbjs from 'prebid.js';
import 'prebid.js/modules/userId';
import 'prebid.js/modules/sharedIdSystem';
import 'prebid.js/modules/pubProvidedIdSystem';
import 'prebid.js/modules/consentManagementTcf';
import 'prebid.js/modules/tcfControl';
// In a publisher's project: import { register } from 'eidkit/prebid';
import { register } from '../../dist/prebid/index.js';

register(pbjs);
// npm builds boot Prebid themselves: this runs the page's queued commands (pbjs.que).
pbjs.processQueue();
