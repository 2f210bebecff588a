/** Consent on the server: the TC, US Privacy and GPP strings of an ad call, decoded within caps, per partner. */
export type { TcfRules, UsOptOut, ConsentRefusal, DecodedConsent, ConsentDecoder } from './decoder.js';
export { createConsentDecoder, TC_CAPS, GPP_CAPS } from './decoder.js';
