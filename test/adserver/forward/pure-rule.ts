// The forwarding rule computed from its pure parts only (no policy object, nothing kept between calls): the
// compiled permission rules, the call's decoded signals, the TCF verdict, decideEidForwarding. The table test reads
// its rows through it, and the property test holds a policy serving call after call to it.
import { compilePolicy, decideEidForwarding, preferredOf, ruleFor } from '../../../src/adserver/forward/index.js';
import {
  consentRefusal,
  createConsentDecoder,
  tcfRefusal,
  tcfRuleSet,
  tcfVerdict,
} from '../../../src/adserver/consent/index.js';
import type { AdCall, DemandPartner, ForwardingPolicyConfig, ForwardingReason } from '../../../src/adserver/index.js';

/** Each eid of `call` (then `extra`) for `partner` under `config`: kept or not, and why. */
export function pureDecisions(
  config: ForwardingPolicyConfig,
  call: AdCall,
  partner: DemandPartner,
  extra: AdCall['eids'] = [],
): { kept: boolean; reason: ForwardingReason }[] {
  const rules = compilePolicy(config);
  const tcf = config.consent ?? {};
  const allow = new Set((tcf.allowSources ?? []).map((s) => s.toLowerCase()));
  const ruleSet = tcfRuleSet(tcf);
  // A new decoder for each call: its decoding is the reader's, the decision is made from what it read.
  const decoded = (tcf.enforce ?? true) ? createConsentDecoder(tcf).decode(call.consent) : undefined;
  const refusal =
    decoded &&
    consentRefusal(decoded, partner.gvlVendorId, (view, vendor) => {
      const verdict = tcfVerdict(view, vendor, ruleSet, tcf.gvl);
      return verdict ? tcfRefusal(vendor, verdict, ruleSet) : null;
    });
  const preferred = preferredOf(partner);
  return [...call.eids, ...extra].map((eid) =>
    decideEidForwarding({
      eid,
      partnerId: partner.id,
      preferred,
      rule: ruleFor(eid, rules),
      allowSource: allow.has(eid.source.toLowerCase()),
      refusal,
    }),
  );
}
