/** Forwarding eids to demand partners: the partners, the policy of who receives which eid, the OpenRTB requests. */
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
  ForwardingPolicyConfig,
  ForwardingPolicy,
  EidDecision,
  PartnerForwarding,
  ForwardingExplanation,
} from './policy.js';
export { createForwardingPolicy, explainForwarding } from './policy.js';
export type { ForwardingReason, EidForwardingInput } from './decide.js';
export { decideEidForwarding, ruleFor, preferredOf } from './decide.js';
export type { PermissionRule } from './permissions.js';
export { ForwardingPolicyError, compilePolicy } from './permissions.js';
export type {
  EnvelopeDecryptor,
  ExpandOptions,
  ReferenceEnvelopeIds,
  EnvelopeKeys,
  ReferenceDecryptorOptions,
} from './envelope.js';
export {
  expandEnvelopes,
  sealReferenceEnvelope,
  createReferenceEnvelopeDecryptor,
  envelopeKeysFromText,
  REFERENCE_ENVELOPE_SOURCES,
} from './envelope.js';
export type { DecisionLog, DecisionLogLine, DecisionLogOptions } from './decisions.js';
export { createDecisionLog, decisionLines, decisionReason } from './decisions.js';
