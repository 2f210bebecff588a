/** Consent on the server: the TC, US Privacy and GPP strings of an ad call, decoded within caps, per partner. */
export type { TcfRules, UsOptOut, ConsentRefusal, DecodedConsent, ConsentDecoder } from './decoder.js';
export { createConsentDecoder, TC_CAPS, GPP_CAPS } from './decoder.js';
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
export type { GvlLoader, GvlLoaderOptions, GvlLoaderEvent, GvlLoaderStatus } from './gvl-loader.js';
export { createGvlLoader } from './gvl-loader.js';
