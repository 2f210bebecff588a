/**
 * The standalone adapter script (`dist/prebid/eidkit-adapter.js`) for pages that load Prebid.js from a CDN. It
 * may load before or after Prebid, async or not: once Prebid is there it registers the bidder at once; before,
 * it goes to the head of `pbjs.que`, so it is registered before the page's own queued `requestBids` runs.
 * Script attributes pick another Prebid global (`data-global`), bidder code (`data-code`) or GVL id (`data-gvlid`).
 */
import { register } from './register.js';
import type { PrebidGlobal } from './register.js';

const d = (document.currentScript as HTMLScriptElement | null)?.dataset ?? {};
const w = window as unknown as Record<string, { que?: (() => void)[]; libLoaded?: boolean } | undefined>;
const name = d.global || 'pbjs';
const pbjs = (w[name] ??= {});
const run = () => register(pbjs as unknown as PrebidGlobal, { code: d.code, gvlid: +d.gvlid! });
if (pbjs.libLoaded) run();
else (pbjs.que ??= []).unshift(run);
