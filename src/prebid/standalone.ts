/**
 * The standalone adapter script (`dist/prebid/eidkit-adapter.js`) for pages that load Prebid.js from a CDN: add it
 * after (or before) Prebid; it registers the bidder through `pbjs.que` once Prebid is ready. Script attributes
 * pick another Prebid global (`data-global`), bidder code (`data-code`) or GVL id (`data-gvlid`).
 */
import { register } from './register.js';
import type { PrebidGlobal } from './register.js';

const d = (document.currentScript as HTMLScriptElement | null)?.dataset || {};
const w = window as unknown as Record<string, { que?: Array<() => void> } | undefined>;
const name = d.global || 'pbjs';
const pbjs = (w[name] = w[name] || {});
(pbjs.que = pbjs.que || []).push(() => register(pbjs as unknown as PrebidGlobal, { code: d.code, gvlid: +d.gvlid! }));
