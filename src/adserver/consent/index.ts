/** Consent on the server: the TC, US Privacy and GPP strings of an ad call, decoded within caps, per partner. */
export type { UsOptOut, DecodedConsent, ConsentDecoder } from './decoder.js';
export { createConsentDecoder, consentRefusal } from './decoder.js';
export type { ConsentRefusal } from './refusal.js';
export type { TcfRules } from './tcf-rule.js';
export { tcfRuleSet, tcfVerdict, tcfRefusal } from './tcf-rule.js';
export { TC_CAPS } from './tc-string.js';
export { GPP_CAPS } from './gpp-header.js';
/** The IAB Global Vendor List: the vendors' declared purposes, checked on every GDPR decision. */
export type { GvlVendor, VendorListSource } from './gvl.js';
export { GlobalVendorList, GvlError, parseVendorList } from './gvl.js';
export type { GvlFetchOptions, GvlFetchFailure, FetchedVendorList } from './gvl-fetch.js';
export {
  fetchVendorList,
  writeFileAtomic,
  GvlFetchError,
  GVL_LATEST_URL,
  GVL_ARCHIVE_URL,
  GVL_FETCH_DEFAULTS,
} from './gvl-fetch.js';
export type { GvlLoader, GvlLoaderOptions, GvlLoaderStatus } from './gvl-loader.js';
export type { GvlLoaderEvent } from './gvl-held.js';
export { createGvlLoader } from './gvl-loader.js';
