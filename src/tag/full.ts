/**
 * The full tag: the core and every provider module in one script (`dist/sas.full.js`), kept for the
 * full-tag size budget (≤ 9,613 B gzip). Modules still run only when the operator enables them.
 */
import './index.js';
import './modules/identityLink.js';
import './modules/idLinking.js';
import './modules/criteo.js';
import './modules/uid2.js';
import './modules/prebid.js';
