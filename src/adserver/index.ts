/**
 * `eidkit/adserver`: the receiving side of ad calls (docs/wire-format.md).
 * Parse ad calls, log providers, report, forward eids to demand partners in OpenRTB, cap frequency by an
 * alternative id, and expand identity envelopes. Caps and reports live in memory for one process, or in Redis for
 * a fleet.
 * @packageDocumentation
 */
/** The error of an options object that is not what the function takes; `field` names the option. */
export { OptionsError } from './options.js';
export type { AdCallLimits } from './limits.js';
export { DEFAULT_LIMITS, resolveLimits } from './limits.js';
export type { AdCall, AdCallEndpoint, AdCallFormat, AdCallConsent, AdCallInput, HeadersLike, ParseOptions } from './ad-call.js';
export { parseAdCall, parseAdCallRequest, parseIncomingMessage, endpointOf, readCookie } from './parse.js';
export type { ProviderHit, ProviderLogRecord, ProviderLogSink } from './providers.js';
export { providerHits, providerIdsOf, providerLogRecord, logProviders, memoryLogSink, jsonLinesLogSink } from './providers.js';
export type { Report, ReportJson, ReportRow, ReportOptions, ReportGranularity, ReportReadOptions, ExtendedIdsCount, WithWithout } from './report.js';
export { createReport } from './report.js';
/** The CSV field writer of every eidkit CSV (defuses spreadsheet formulas). */
export { csvField } from '../core/csv.js';
export type { RedisReport, RedisReportOptions, RedisReportMetrics } from './redis-report.js';
export { createRedisReport } from './redis-report.js';
export type { DemandPartner } from './partners.js';
export { eidsForPartner, preferredProviderOf } from './partners.js';
export type {
  BidRequestOptions,
  OrtbBidRequest,
  OrtbBidRequest25,
  OrtbBidRequest26,
  OrtbBidRequestBoth,
  OrtbBidRequestBase,
  OrtbEid,
  OrtbUid,
} from './openrtb.js';
export { buildBidRequest } from './openrtb.js';
export type { OrtbImp, OrtbVideo } from './openrtb-imp.js';
export { bidRequestsJson } from './openrtb-json.js';
export type {
  PermissionRule,
  ForwardingPolicyConfig,
  ForwardingPolicy,
  ForwardingReason,
  EidDecision,
  PartnerForwarding,
  ForwardingExplanation,
} from './forwarding.js';
export { createForwardingPolicy, explainForwarding, ForwardingPolicyError } from './forwarding.js';
export type { TcfRules, UsOptOut, ConsentRefusal, DecodedConsent, ConsentDecoder } from './consent.js';
export { createConsentDecoder } from './consent.js';
export type {
  CappingUser,
  CappingUserKind,
  AlternativeIdConfig,
  CapCheck,
  CapOutcome,
  CapWindowState,
  CapperMetrics,
  FrequencyCapStore,
  MemoryStoreOptions,
  FrequencyCapperOptions,
  FrequencyCapper,
  CapDecision,
} from './capping.js';
export { MemoryFrequencyCapStore, createFrequencyCapper, cappingUserOf, resolveAlternativeIds } from './capping.js';
export { DEFAULT_CAP_TIMEOUT_MS } from './capping.js';
export type { CapPeriod, CapWindow, FrequencyCap, ResolvedCap, ResolvedWindow } from './cap-windows.js';
export { defineFrequencyCap, resolveCap, periodStart, LIFETIME_MS } from './cap-windows.js';
export type { IoredisLike, RedisClientInput, RedisClientLike } from './redis-client.js';
export type { RedisFrequencyCapStoreOptions } from './redis-capping.js';
export { createRedisFrequencyCapStore } from './redis-capping.js';
export type { EnvelopeDecryptor, ExpandOptions, ReferenceEnvelopeIds, EnvelopeKeys, ReferenceDecryptorOptions } from './envelope.js';
export {
  expandEnvelopes,
  sealReferenceEnvelope,
  createReferenceEnvelopeDecryptor,
  envelopeKeysFromText,
  REFERENCE_ENVELOPE_SOURCES,
} from './envelope.js';
export type { PrebidBidInput, PrebidResponseOptions, PrebidWireBid, PrebidWireResponse } from './prebid.js';
export { prebidBidResponse } from './prebid.js';
export type { DmpConfig } from './dmp.js';
export { DmpConfigError, parseDmpConfig, dmpIds } from './dmp.js';
export type { PidCookieOptions } from './pid.js';
export { newPid, pidSetCookie } from './pid.js';
export type { CorsPolicy, CorsPolicyOptions, CorsPreflightAnswer, CorsPreflightRequest, CorsContext } from './cors.js';
export { createCorsPolicy, corsForNode, corsMiddleware, CorsPolicyError } from './cors.js';
