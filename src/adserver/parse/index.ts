/** Parsing ad calls: the entry points, the readers of each body shape, the eids fast path and the caps applied. */
export type {
  AdCall,
  AdCallEndpoint,
  AdCallFormat,
  AdCallConsent,
  AdCallInput,
  HeadersLike,
  ParseOptions,
} from './ad-call.js';
export { parseAdCall, parseAdCallRequest, parseIncomingMessage, endpointOf, readCookie } from './parse.js';
export type { AdCallLimits } from './limits.js';
export type { PageUrlOptions, PageUrlRules } from './page-url.js';
export { emailOnlyRules, pageUrlRules, scrubPageUrl, scrubWith } from './page-url.js';
export { DEFAULT_LIMITS, resolveLimits } from './limits.js';
export { isOrtbBody } from './ortb.js';
