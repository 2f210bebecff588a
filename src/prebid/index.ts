/**
 * `eidkit/prebid`: the eidkit Prebid.js bid adapter (docs/wire-format.md#how-eids-reach-an-ad-call), for
 * publishers who build Prebid from npm. Publishers who load Prebid from a CDN add `dist/prebid/eidkit-adapter.js`.
 * @example
 * import pbjs from 'prebid.js';
 * import 'prebid.js/modules/userId';
 * import { register } from 'eidkit/prebid';
 * register(pbjs);
 * @packageDocumentation
 */
import { createSpec } from './spec.js';

export type {
  EidkitBidParams,
  EidkitSpec,
  SpecOptions,
  PrebidBid,
  PrebidBidderRequest,
  PrebidServerRequest,
  PrebidBidResponse,
  PrebidUserSync,
} from './spec.js';
export type { PrebidWireRequest, PrebidWireUnit, PrebidWireResponse, PrebidWireBid } from './wire.js';
export type { PrebidGlobal } from './register.js';
export { createSpec } from './spec.js';
export { register } from './register.js';

/** The default spec: bidder code `eidkit`, GVL id 45, no log. For `registerBidder(spec)` style setups. */
export const spec = createSpec();
