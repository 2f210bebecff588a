/** What the ad server answers the page with: the Prebid.js adapter's response, the `pid` cookie, the CORS headers. */
export type { PrebidBidInput, PrebidResponseOptions, PrebidWireBid, PrebidWireResponse } from './prebid.js';
export { prebidBidResponse } from './prebid.js';
export type { PidCookieOptions } from './pid.js';
export { newPid, pidSetCookie } from './pid.js';
export type { CorsPolicy, CorsPolicyOptions, CorsPreflightAnswer, CorsPreflightRequest, CorsContext } from './cors.js';
export { createCorsPolicy, corsForNode, corsMiddleware, CorsPolicyError } from './cors.js';
