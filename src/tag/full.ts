/**
 * The full tag: the core, every provider module and the experiments add-on in one script (`dist/sas.full.js`), kept
 * for the full-tag size budget (≤ 11,540 B gzip, test/size-modules.test.ts). Modules still run only when the operator
 * enables them.
 */
import './index.js';
import './modules/identityLink.js';
import './modules/idLinking.js';
import './modules/criteo.js';
import './modules/uid2.js';
import './modules/prebid.js';
import './modules/experiments.js';
