/**
 * `eidkit/adserver`: the receiving side of ad calls (docs/wire-format.md).
 * Parse ad calls, log providers, report, forward eids to demand partners in OpenRTB, cap frequency by an
 * alternative id, and expand identity envelopes. Caps and reports live in memory for one process, or in Redis for
 * a fleet.
 * @packageDocumentation
 */
export type {
  AdCall,
  AdCallEndpoint,
  AdCallFormat,
  AdCallConsent,
  AdCallInput,
  AdCallLimits,
  HeadersLike,
  PageUrlOptions,
  ParseOptions,
} from './parse/index.js';
export {
  parseAdCall,
  parseAdCallRequest,
  parseIncomingMessage,
  endpointOf,
  readCookie,
  DEFAULT_LIMITS,
  resolveLimits,
  scrubPageUrl,
} from './parse/index.js';
export type {
  JsonLinesLogSink,
  JsonLinesLogSinkOptions,
  ProviderHit,
  ProviderLogRecord,
  ProviderLogSink,
  Report,
  ReportJson,
  ReportRow,
  ReportOptions,
  ReportGranularity,
  ReportReadOptions,
  ExtendedIdsCount,
  ForwardingCount,
  WithWithout,
  RedisReport,
  RedisReportOptions,
  RedisReportMetrics,
  DmpConfig,
} from './report/index.js';
export {
  providerHits,
  providerIdsOf,
  providerLogRecord,
  logProviders,
  memoryLogSink,
  jsonLinesLogSink,
  createReport,
  createRedisReport,
  DmpConfigError,
  parseDmpConfig,
  dmpIds,
} from './report/index.js';
export type {
  DemandPartner,
  BidRequestOptions,
  OrtbBidRequest,
  OrtbBidRequest25,
  OrtbBidRequest26,
  OrtbBidRequestBoth,
  OrtbBidRequestBase,
  OrtbEid,
  OrtbUid,
  OrtbImp,
  OrtbVideo,
  PermissionRule,
  ForwardingPolicyConfig,
  ForwardingPolicy,
  ForwardingReason,
  EidDecision,
  PartnerForwarding,
  ForwardingExplanation,
  DecisionLog,
  DecisionLogLine,
  DecisionLogOptions,
  EnvelopeDecryptor,
  ExpandOptions,
  ReferenceEnvelopeIds,
  EnvelopeKeys,
  ReferenceDecryptorOptions,
} from './forward/index.js';
export {
  eidsForPartner,
  preferredProviderOf,
  buildBidRequest,
  bidRequestsJson,
  createForwardingPolicy,
  explainForwarding,
  ForwardingPolicyError,
  createDecisionLog,
  decisionLines,
  decisionReason,
  expandEnvelopes,
  sealReferenceEnvelope,
  createReferenceEnvelopeDecryptor,
  envelopeKeysFromText,
  REFERENCE_ENVELOPE_SOURCES,
} from './forward/index.js';
export type {
  TcfRules,
  UsOptOut,
  ConsentRefusal,
  DecodedConsent,
  ConsentDecoder,
  GvlVendor,
  VendorListSource,
  GvlFetchOptions,
  GvlFetchFailure,
  FetchedVendorList,
  GvlLoader,
  GvlLoaderOptions,
  GvlLoaderEvent,
  GvlLoaderStatus,
} from './consent/index.js';
export {
  createConsentDecoder,
  GlobalVendorList,
  GvlError,
  parseVendorList,
  fetchVendorList,
  GvlFetchError,
  GVL_LATEST_URL,
  GVL_ARCHIVE_URL,
  GVL_FETCH_DEFAULTS,
  createGvlLoader,
} from './consent/index.js';
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
  CapPeriod,
  CapWindow,
  FrequencyCap,
  ResolvedCap,
  ResolvedWindow,
  RedisFrequencyCapStoreOptions,
} from './capping/index.js';
export {
  MemoryFrequencyCapStore,
  createFrequencyCapper,
  cappingUserOf,
  resolveAlternativeIds,
  DEFAULT_CAP_TIMEOUT_MS,
  defineFrequencyCap,
  resolveCap,
  periodStart,
  LIFETIME_MS,
  createRedisFrequencyCapStore,
} from './capping/index.js';
export type {
  PrebidBidInput,
  PrebidResponseOptions,
  PrebidWireBid,
  PrebidWireResponse,
  PidCookieOptions,
  CorsPolicy,
  CorsPolicyOptions,
  CorsPreflightAnswer,
  CorsPreflightRequest,
  CorsContext,
} from './answer/index.js';
export {
  prebidBidResponse,
  newPid,
  pidSetCookie,
  createCorsPolicy,
  corsForNode,
  corsMiddleware,
  CorsPolicyError,
} from './answer/index.js';
export type { IoredisLike, RedisClientInput, RedisClientLike } from './common/index.js';
/** The error of an options object that is not what the function takes; `field` names the option. */
export { OptionsError } from './common/index.js';
/** The CSV field writer of every eidkit CSV (defuses spreadsheet formulas). */
export { csvField } from '../core/csv.js';
export type { AdCallOutcome, AdCallReceiver, AdCallReceiverOptions } from './receiver/index.js';
export { createAdCallReceiver } from './receiver/index.js';
