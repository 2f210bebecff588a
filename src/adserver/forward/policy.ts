/**
 * The eid forwarding policy: which partner may receive which eid. One declarative object, validated with zod
 * when created:
 *
 * - `permissions`: rules `{ source?, inserter?, matcher?, mm?, partners: [...] | '*' }` naming at least one of
 *   the four fields; a rule matches the eids that have every field it names. For each eid the most specific
 *   matching rule decides: specificity is the number of fields a rule names, so a rule naming all four beats one
 *   naming three, which beats one naming two, which beats one naming one (Prebid Server's eid permissions order).
 *   Two rules that are equally specific and could both decide one eid are a configuration error, unless a more
 *   specific rule covers every eid they share. Partner ids match case-insensitively, as Prebid Server matches
 *   bidder names. An eid no rule matches goes to every partner (docs/ad-server.md, "Forwarding policy").
 * - `consent`: the call's TC string, US Privacy and GPP strings are decoded on the server (consent/decoder.ts) and
 *   applied per partner through its `gvlVendorId`; `allowSources` lists sources sent whatever the signals
 *   (a publisher's own first-party id, say).
 *
 * The rule for one eid and one partner is decide.ts (a DMP receives only its preferred provider; then the
 * permission rule; then consent), pure; this policy applies it with what it keeps between partners and calls
 * (call-memo.ts, eid-codes.ts, partner-slots.ts), and never decides otherwise. The policy itself never appears in
 * a bid request: it only decides which of the received eid objects are passed on, unchanged.
 */
import type { Eid } from '../../core/index.js';
import { createConsentDecoder } from '../consent/index.js';
import type { ConsentRefusal, TcfRules } from '../consent/index.js';
import type { AdCall } from '../parse/index.js';
import { CallMemo } from './call-memo.js';
import type { Prepared } from './call-memo.js';
import { decideEidForwarding, eidVerdict, matchRule, preferredOf } from './decide.js';
import type { EidForwardingInput, ForwardingReason } from './decide.js';
import { EidCodes, partnerBits } from './eid-codes.js';
import { PartnerSlots } from './partner-slots.js';
import type { DemandPartner } from './partners.js';
import { compilePolicy } from './permissions.js';
import type { PermissionRule } from './permissions.js';

/** The declarative forwarding policy given to {@link createForwardingPolicy}. */
export interface ForwardingPolicyConfig {
  /** Permission rules; the most specific matching rule decides (see the module comment). */
  permissions?: readonly PermissionRule[];
  /** Consent enforcement: on by default; the TCF rules and the sources exempt from it. */
  consent?: TcfRules & {
    /** Set false to forward without looking at consent signals (for traffic already checked upstream). */
    enforce?: boolean;
    /** Sources sent to permitted partners whatever the consent signals (case-insensitive). */
    allowSources?: readonly string[];
  };
  /** The known partners: when given, a rule naming another partner id (case-insensitively) is refused as a typo. */
  partners?: readonly DemandPartner[];
  /** Most decoded consent strings of each kind kept in memory (those not used lately go first). Default 10,000. */
  cacheSize?: number;
}

/** The decision about one eid for one partner. */
export interface EidDecision {
  /** Position of the eid among the call's eids followed by the extra eids. */
  index: number;
  /** The eid, as received. */
  eid: Eid;
  /** Why it is kept or removed. */
  reason: ForwardingReason;
}

/** What one partner receives, and why. */
export interface PartnerForwarding {
  /** The partner id. */
  partner: string;
  /** Where its bid request puts the eids. */
  openrtb: '2.5' | '2.6' | 'both';
  /** The consent refusal that applies to this partner, if any (eids of `allowSources` still go). */
  consent?: ConsentRefusal;
  /** The eids it receives. */
  kept: EidDecision[];
  /** The eids it does not receive. */
  removed: EidDecision[];
}

/** What {@link explainForwarding} returns. */
export interface ForwardingExplanation {
  /** Per partner, in the order given. */
  partners: PartnerForwarding[];
}

/** A validated, compiled forwarding policy. Pass it to `buildBidRequest(call, partner, { policy })`. */
export interface ForwardingPolicy {
  /** The configuration as validated (a frozen copy). */
  readonly config: Readonly<ForwardingPolicyConfig>;
  /** The eids `partner` receives from `call` (the received ones, then `extraEids`), as the same objects. */
  eidsFor(call: AdCall, partner: DemandPartner, extraEids?: readonly Eid[]): Eid[];
  /** For each partner, each eid kept or removed with the rule or consent reason. */
  explain(call: AdCall, partners: readonly DemandPartner[], extraEids?: readonly Eid[]): ForwardingExplanation;
}

/**
 * Creates a forwarding policy; throws {@link ForwardingPolicyError} naming each bad rule or field.
 * @example
 * createForwardingPolicy({
 *   permissions: [{ source: 'id5-sync.com', partners: ['dsp-a'] }],
 *   consent: { allowSources: ['pubcid.org'] },
 * });
 */
export function createForwardingPolicy(config: ForwardingPolicyConfig = {}): ForwardingPolicy {
  const compiled = compilePolicy(config);
  const { cfg } = compiled;
  const bitOf = partnerBits(compiled.rules);
  const enforce = cfg.consent?.enforce ?? true;
  const allow = new Set((cfg.consent?.allowSources ?? []).map((s) => s.toLowerCase()));
  const decoder = createConsentDecoder(cfg.consent ?? {}, cfg.cacheSize);
  const codes = new EidCodes(compiled, allow);
  const calls = new CallMemo(codes, decoder, enforce);
  // Cheap per partner: the GDPR part is worked out once per vendor and TC string (consent/tcf-verdict.ts).
  const refusalFor = (p: Prepared, partner: DemandPartner) =>
    p.decoded ? decoder.refusal(p.decoded, partner.gvlVendorId) : undefined;
  const slots = bitOf && new PartnerSlots(bitOf, (p, partner) => refusalFor(p, partner) !== undefined);
  /** What decides each eid of a prepared call for `partner` (decide.ts), its rule found through the codes' table. */
  const inputsOf = (p: Prepared, partner: DemandPartner, refusal: ConsentRefusal | undefined) => {
    const preferred = preferredOf(partner);
    return p.all.map((eid): EidForwardingInput => {
      const entry = codes.entry(eid.source);
      const rule = entry.rules && matchRule(eid, entry.rules);
      return { eid, partnerId: partner.id, preferred, rule, allowSource: entry.exempt, refusal };
    });
  };

  return {
    // A copy, but the vendor list source itself (a loader holds functions and timers).
    config: Object.freeze(
      cfg.consent?.gvl
        ? { ...structuredClone({ ...cfg, consent: { ...cfg.consent, gvl: undefined } }), consent: { ...cfg.consent } }
        : structuredClone(cfg),
    ),
    eidsFor(call, partner, extraEids) {
      const p = calls.prepare(call, extraEids);
      if (slots && (partner.kind ?? 'dsp') !== 'dmp') {
        // The rule for the common case (a DSP), from the codes: an eid is kept when its code has the partner's bit
        // and, under a consent refusal, EXEMPT too.
        const { keep } = slots.slotFor(p, partner);
        // Every eid goes to this partner: one copy instead of a test per eid.
        if (keep === undefined) return p.all.slice();
        const out = new Array<Eid>(keep.length);
        for (let j = 0; j < keep.length; j++) out[j] = p.all[keep[j]];
        return out;
      }
      return inputsOf(p, partner, refusalFor(p, partner))
        .filter((input) => eidVerdict(input).kept)
        .map((input) => input.eid);
    },
    explain(call, partners, extraEids) {
      const p = calls.prepare(call, extraEids);
      return {
        partners: partners.map((partner) => {
          const refusal = refusalFor(p, partner);
          const out: PartnerForwarding = {
            partner: partner.id,
            openrtb: partner.openrtb ?? '2.6',
            kept: [],
            removed: [],
          };
          if (refusal) out.consent = refusal;
          inputsOf(p, partner, refusal).forEach((input, index) => {
            const { kept, reason } = decideEidForwarding(input);
            (kept ? out.kept : out.removed).push({ index, eid: input.eid, reason });
          });
          return out;
        }),
      };
    },
  };
}

/**
 * For each partner, each eid of the call kept or removed, with the permission rule or consent reason. Without a
 * policy, every eid goes to every DSP (a DMP: its preferred provider's), as `buildBidRequest` sends them.
 * @example explainForwarding(call, [{ id: 'dsp-a', gvlVendorId: 45 }], policy).partners[0].removed
 */
export function explainForwarding(
  call: AdCall,
  partners: readonly DemandPartner[],
  policy: ForwardingPolicy = NO_POLICY(),
  extraEids?: readonly Eid[],
): ForwardingExplanation {
  return policy.explain(call, partners, extraEids);
}

let noPolicy: ForwardingPolicy | undefined;
/** The empty policy without consent enforcement: today's behaviour of `buildBidRequest` without a policy. */
const NO_POLICY = () => (noPolicy ??= createForwardingPolicy({ consent: { enforce: false } }));
