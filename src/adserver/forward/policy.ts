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
 * Decisions go in this order, the first that removes an eid naming the reason: a DMP receives only its
 * preferred provider; then the permission rule; then consent. The policy itself never appears in a bid
 * request: it only decides which of the received eid objects are passed on, unchanged.
 */
import { providerForSource } from '../../core/index.js';
import type { Eid } from '../../core/index.js';
import { createConsentDecoder } from '../consent/index.js';
import { compilePolicy, describeRule } from './permissions.js';
import type { Compiled, PermissionRule } from './permissions.js';
import type { ConsentRefusal, DecodedConsent, TcfRules } from '../consent/index.js';
import { preferredProviderOf } from './partners.js';
import type { DemandPartner } from './partners.js';
import type { AdCall, AdCallConsent } from '../parse/index.js';

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

/** Why an eid was kept or removed for one partner. */
export interface ForwardingReason {
  /**
   * `no-rule`: kept, no permission rule matched (default); `rule`: kept or removed by `permissions[rule]`;
   * `dmp`: removed, a DMP receives only its preferred provider; `gdpr`, `usp`, `gpp`, `gpc`: removed by consent;
   * `allow-source`: kept although consent refused, because the source is in `allowSources`.
   */
  code: 'no-rule' | 'rule' | 'dmp' | 'gdpr' | 'usp' | 'gpp' | 'gpc' | 'allow-source';
  /** Index of the deciding rule in `permissions`, for `rule` (and for consent codes when a rule had allowed it). */
  rule?: number;
  /** One sentence a person can read. */
  message: string;
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

/** One eid of a call with what does not depend on the partner: its deciding rule, whether consent spares it. */
interface Item {
  eid: Eid;
  rule: Compiled | undefined;
  exempt: boolean;
}

/** A call prepared for its partners (see `prepare`). */
interface Prepared {
  call: AdCall;
  consent: AdCallConsent;
  eids: readonly Eid[];
  length: number;
  extra: readonly Eid[] | undefined;
  extraLength: number;
  /** The call's eids, then the extra ones. */
  all: readonly Eid[];
  /** Per eid: its deciding rule's partner bits (ALL without a rule), plus EXEMPT when consent spares it. */
  codes: number[];
  /** The bits every eid has: a partner holding one of them, without a consent refusal, receives every eid. */
  common: number;
  decoded: DecodedConsent | undefined;
  /** The vendor lists' generation the decoding was made for. */
  gen: number;
}

/** How an eid fares for a partner: kept or not, why, and the rule that matched (if any). */
interface Verdict {
  kept: boolean;
  code: ForwardingReason['code'];
  rule?: Compiled;
}

function reasonOf(v: Verdict, eid: Eid, partner: DemandPartner, refusal: ConsentRefusal | undefined): ForwardingReason {
  const r = v.rule;
  const rule = r ? `permissions[${r.index}] (${describeRule(r)})` : '';
  const allowed = r && (r.all ? 'every partner' : r.listed.length ? r.listed.join(', ') : 'no partner');
  const message =
    v.code === 'no-rule'
      ? `no permission rule matches ${eid.source}: every partner receives it (default)`
      : v.code === 'rule'
        ? `${rule} allows ${v.kept ? partner.id : allowed === 'no partner' ? allowed : `only ${allowed}`}`
        : v.code === 'dmp'
          ? `a DMP receives only its preferred provider's eids (${preferredProviderOf(partner).name})`
          : v.code === 'allow-source'
            ? `${eid.source} is in allowSources: sent although ${refusal?.message}`
            : (refusal?.message ?? v.code);
  return r ? { code: v.code, rule: r.index, message } : { code: v.code, message };
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
  const { cfg, rules, bySource, anySource } = compilePolicy(config);

  // Speed (docs/project.md, "Measured sizes and ratios"): each partner id named in a rule gets a bit, any other
  // partner the OTHER bit, and each rule the bits of its partners, so deciding an eid for a partner is one AND instead
  // of a Set lookup. The bits stay small integers (V8 Smis). With more than 28 named partners the Set lookups stay
  // (judge() below). Ids are lowercased (partners match case-insensitively); a partner is looked up as spelled, then
  // lowercased.
  const named = [...new Set(rules.flatMap((r) => [...r.partners]))];
  const OTHER = 1 << 28;
  const EXEMPT = 1 << 29;
  const ALL = EXEMPT - 1;
  const bitOf = named.length <= 28 ? new Map(named.map((id, i) => [id, 1 << i])) : undefined;
  if (bitOf) for (const r of rules) r.mask = r.all ? ALL : [...r.partners].reduce((m, id) => m | bitOf.get(id)!, 0);

  const enforce = cfg.consent?.enforce ?? true;
  const allow = new Set((cfg.consent?.allowSources ?? []).map((s) => s.toLowerCase()));
  const decoder = createConsentDecoder(cfg.consent ?? {}, cfg.cacheSize);

  // Per source as received: its rules and whether it is exempt from consent, so a call's eids are looked up
  // without lowercasing each source again. Bounded: past 10,000 distinct spellings, entries are not kept.
  // `plain`: the code of an eid of that source without inserter, matcher or mm (most eids), worked out once.
  const bySpelling = new Map<string, { rules: Compiled[] | undefined; exempt: boolean; plain?: number }>();
  const sourceEntry = (source: string) => {
    let entry = bySpelling.get(source);
    if (!entry) {
      const key = source.toLowerCase();
      entry = { rules: bySource.get(key) ?? anySource, exempt: allow.has(key) };
      if (bySpelling.size < 10_000) bySpelling.set(source, entry);
    }
    return entry;
  };
  const match = (eid: Eid, rules: readonly Compiled[]): Compiled | undefined => {
    for (const r of rules) {
      // Domains usually come lowercase already: compare as they are first, lowercase only when that fails.
      if (
        (r.inserter === undefined || r.inserter === eid.inserter || r.inserter === eid.inserter?.toLowerCase()) &&
        (r.matcher === undefined || r.matcher === eid.matcher || r.matcher === eid.matcher?.toLowerCase()) &&
        (r.mm === undefined || r.mm === eid.mm)
      )
        return r;
    }
    return undefined;
  };

  // What depends on the call only (decoded signals, each eid's rule) is worked out once and kept for the next
  // partner of the same call: bid requests go out in a loop over partners, and the policy must add little to it
  // (docs/project.md, "Measured sizes and ratios"). The call is taken as unchanged while its requests are built.
  let last: Prepared | undefined;
  // The code found at each position of the last call's eids, with what it was worked out from: a network's calls
  // mostly carry the same sources in the same order, so a call's eid at position i usually has the source and
  // provenance the last call's had there, and is decided by comparing four fields instead of a Map lookup and the
  // rules (docs/ad-server.md, "What a policy keeps between calls"). A code depends on nothing else (the rules are
  // fixed), so reusing it cannot change a decision. Bounded: 64 positions.
  const seen: { source: string; inserter?: string; matcher?: string; mm?: number; code: number }[] = [];
  let seenCodes: number[] = [];
  let seenCommon = ALL;
  // The last call's consent signals and their decoding: a user's calls repeat them, and each call is a new object.
  // Decoded anew when the vendor lists change (`gen`), so the partners' refusals kept in their slots are redone.
  let lastConsent: (AdCallConsent & { decoded: DecodedConsent; gen: number }) | undefined;
  const decodeConsent = (c: AdCallConsent): DecodedConsent => {
    const m = lastConsent;
    const gen = decoder.generation();
    if (
      m?.gen === gen &&
      m.gdpr === c.gdpr &&
      m.gdprConsent === c.gdprConsent &&
      m.usPrivacy === c.usPrivacy &&
      m.gpp === c.gpp &&
      m.gpc === c.gpc
    ) {
      const a = m.gppSid;
      const b = c.gppSid;
      if (a === b) return m.decoded;
      if (a && a.length === b?.length && a.every((sid, i) => sid === b[i])) return m.decoded;
    }
    const decoded = decoder.decode(c);
    const { gdpr, gdprConsent, usPrivacy, gpp, gppSid, gpc } = c;
    // A copy of gpp_sid: the caller's array may change after this call.
    lastConsent = { gdpr, gdprConsent, usPrivacy, gpp, gppSid: gppSid && [...gppSid], gpc, decoded, gen };
    return decoded;
  };
  // Small, so that it is inlined in eidsFor: the call's next partners cost these comparisons only.
  const prepare = (call: AdCall, extra: readonly Eid[] | undefined): Prepared => {
    const l = last;
    if (
      l?.call === call &&
      l.consent === call.consent &&
      l.eids === call.eids &&
      l.length === call.eids.length &&
      l.extra === extra &&
      l.extraLength === (extra?.length ?? 0) &&
      l.gen === decoder.generation()
    )
      return l;
    return (last = prepareCall(call, extra));
  };
  const prepareCall = (call: AdCall, extra: readonly Eid[] | undefined): Prepared => {
    const all = extra?.length ? [...call.eids, ...extra] : call.eids;
    // The last call's codes as they are when every eid matches its position's (arrays are never changed once made).
    let same = all.length === seenCodes.length;
    let codes = same ? seenCodes : [];
    let common = same ? seenCommon : ALL;
    for (let i = 0; i < all.length; i++) {
      const eid = all[i];
      const s = seen[i];
      let code: number;
      // The same source and provenance as the last call's eid at this position: the same code.
      const { source, inserter, matcher, mm } = eid;
      if (s?.source === source && s.inserter === inserter && s.matcher === matcher && s.mm === mm) {
        code = s.code;
      } else {
        const entry = sourceEntry(source);
        const plain = inserter === undefined && matcher === undefined && mm === undefined;
        const known = plain ? entry.plain : undefined;
        if (known === undefined) {
          const rule = entry.rules && match(eid, entry.rules);
          code = (rule ? rule.mask : ALL) | (entry.exempt ? EXEMPT : 0);
          if (plain) entry.plain = code;
        } else code = known;
        if (i < 64) seen[i] = { source, inserter, matcher, mm, code };
      }
      if (same && codes[i] !== code) {
        same = false;
        codes = seenCodes.slice(0, i);
        common = codes.reduce((m, c) => m & c, ALL);
      }
      if (!same) {
        codes.push(code);
        common &= code;
      }
    }
    if (!same) {
      seenCodes = codes;
      seenCommon = common;
    }
    const decoded = enforce ? decodeConsent(call.consent) : undefined;
    const { consent, eids } = call;
    const extraLength = extra?.length ?? 0;
    const gen = decoder.generation();
    return { call, consent, eids, length: eids.length, extra, extraLength, all, codes, common, decoded, gen };
  };
  /** The eids of a prepared call with their rules, for judge(). */
  const itemsOf = (p: Prepared): Item[] =>
    p.all.map((eid) => {
      const entry = sourceEntry(eid.source);
      return { eid, rule: entry.rules && match(eid, entry.rules), exempt: entry.exempt };
    });
  // Cheap per partner: the GDPR part is worked out once per vendor and TC string (consent/decoder.ts).
  const refusalFor = (p: Prepared, partner: DemandPartner) =>
    p.decoded ? decoder.refusal(p.decoded, partner.gvlVendorId) : undefined;
  const preferredOf = (partner: DemandPartner) =>
    (partner.kind ?? 'dsp') === 'dmp' ? preferredProviderOf(partner).id : undefined;

  // What the fast path of eidsFor needs of a partner, per partner object as the caller keeps it: its bit; what
  // consent requires of the eids it receives (its bit, plus EXEMPT under a refusal) for the decoding last seen, so
  // a user's calls (decoded once, see decodeConsent) cost no refusal lookup per partner; and the positions of the
  // eids it receives for the codes last seen (undefined: every eid), so that its list is made without testing each
  // eid. Partners come in the same order call after call, so the slot after the last one used is tried first.
  // Bounded: 64 slots, then reused.
  interface Slot {
    partner: DemandPartner;
    id: string;
    vendor: number | undefined;
    bit: number;
    decoded: DecodedConsent | undefined | null;
    need: number;
    codes: readonly number[] | undefined;
    keep: number[] | undefined;
  }
  const slots: Slot[] = [];
  let nextSlot = 0;
  let evict = 0;
  // Small, so that it is inlined in eidsFor: the slot tried first, when nothing it holds has changed.
  const slotFor = (p: Prepared, partner: DemandPartner, bitOf: ReadonlyMap<string, number>): Slot => {
    const s = nextSlot < slots.length ? slots[nextSlot] : undefined;
    const fresh = s?.partner === partner && s.id === partner.id && s.vendor === partner.gvlVendorId;
    if (!fresh || s.decoded !== p.decoded || s.codes !== p.codes) return refreshSlot(p, partner, bitOf);
    nextSlot = nextSlot + 1 < slots.length ? nextSlot + 1 : 0;
    return s;
  };
  const refreshSlot = (p: Prepared, partner: DemandPartner, bitOf: ReadonlyMap<string, number>): Slot => {
    let k = nextSlot < slots.length && slots[nextSlot].partner === partner ? nextSlot : -1;
    for (let i = 0; k < 0 && i < slots.length; i++) if (slots[i].partner === partner) k = i;
    let s = slots[k];
    // A new partner, or one whose id or vendor id (what its bit and refusal depend on) changed since.
    if (k < 0 || s.id !== partner.id || s.vendor !== partner.gvlVendorId) {
      if (k < 0) k = slots.length < 64 ? slots.length : evict++ & 63;
      const bit = bitOf.get(partner.id) ?? bitOf.get(partner.id.toLowerCase()) ?? OTHER;
      const vendor = partner.gvlVendorId;
      s = { partner, id: partner.id, vendor, bit, decoded: null, need: 0, codes: undefined, keep: undefined };
      slots[k] = s;
    }
    nextSlot = k + 1 < slots.length ? k + 1 : 0;
    if (s.decoded !== p.decoded) {
      s.need = refusalFor(p, partner) ? s.bit | EXEMPT : s.bit;
      s.decoded = p.decoded;
      s.codes = undefined;
    }
    if (s.codes !== p.codes) {
      const need = s.need;
      s.codes = p.codes;
      s.keep = (p.common & need) === need ? undefined : [];
      if (s.keep) for (let i = 0; i < p.codes.length; i++) if ((p.codes[i] & need) === need) s.keep.push(i);
    }
    return s;
  };

  /** The one decision procedure both eidsFor and explain use, so they cannot disagree. */
  const judge = (
    item: Item,
    partnerId: string,
    preferred: number | undefined,
    refusal: ConsentRefusal | undefined,
  ): Verdict => {
    const { eid, rule } = item;
    if (preferred !== undefined && providerForSource(eid.source).id !== preferred) return { kept: false, code: 'dmp' };
    if (rule && !rule.all && !rule.partners.has(partnerId.toLowerCase())) return { kept: false, code: 'rule', rule };
    if (refusal)
      return item.exempt ? { kept: true, code: 'allow-source', rule } : { kept: false, code: refusal.code, rule };
    return { kept: true, code: rule ? 'rule' : 'no-rule', rule };
  };

  return {
    // A copy, but the vendor list source itself (a loader holds functions and timers).
    config: Object.freeze(
      cfg.consent?.gvl
        ? { ...structuredClone({ ...cfg, consent: { ...cfg.consent, gvl: undefined } }), consent: { ...cfg.consent } }
        : structuredClone(cfg),
    ),
    eidsFor(call, partner, extraEids) {
      const p = prepare(call, extraEids);
      if (bitOf && (partner.kind ?? 'dsp') !== 'dmp') {
        // judge() for the common case (a DSP): the same tests, without building a verdict. An eid is kept when its
        // code has the partner's bit and, under a consent refusal, EXEMPT too.
        const { keep } = slotFor(p, partner, bitOf);
        // Every eid goes to this partner: one copy instead of a test per eid.
        if (keep === undefined) return p.all.slice();
        const out = new Array<Eid>(keep.length);
        for (let j = 0; j < keep.length; j++) out[j] = p.all[keep[j]];
        return out;
      }
      const preferred = preferredOf(partner);
      const refusal = refusalFor(p, partner);
      const out: Eid[] = [];
      for (const item of itemsOf(p)) if (judge(item, partner.id, preferred, refusal).kept) out.push(item.eid);
      return out;
    },
    explain(call, partners, extraEids) {
      const p = prepare(call, extraEids);
      const items = itemsOf(p);
      return {
        partners: partners.map((partner) => {
          const preferred = preferredOf(partner);
          const refusal = refusalFor(p, partner);
          const out: PartnerForwarding = {
            partner: partner.id,
            openrtb: partner.openrtb ?? '2.6',
            kept: [],
            removed: [],
          };
          if (refusal) out.consent = refusal;
          items.forEach((item, index) => {
            const v = judge(item, partner.id, preferred, refusal);
            (v.kept ? out.kept : out.removed).push({
              index,
              eid: item.eid,
              reason: reasonOf(v, item.eid, partner, refusal),
            });
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
