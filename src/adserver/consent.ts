/**
 * Consent on the server (issue 11; domain-notes.md "Consent"): the privacy signals an ad call carries, decoded
 * with the IAB's own libraries (npm `@iabtcf/core` for TCF v2, `@iabgpp/cmpapi` for GPP) rather than a
 * hand-written bit parser, and turned into one question: may a partner with this GVL vendor id receive eids?
 * Not every ad call comes from our tag (GET calls built by other libraries, server-to-server), so the server
 * cannot trust that the browser already applied them.
 */
import { TCString } from '@iabtcf/core';
import type { PurposeRestrictionVector } from '@iabtcf/core';
import { GppModel, Sections } from '@iabgpp/cmpapi';
import type { AdCallConsent } from './ad-call.js';

/** What decides the legal basis under GDPR; the defaults are those of the tag (src/tag/consent-rules.ts). */
export interface TcfRules {
  /** TCF purposes of which at least one needs a legal basis. Default 2 to 10 (domain-notes.md "Consent"). */
  purposes?: readonly number[];
  /** Whether legitimate interest (vendor and purpose) is a legal basis. Default true; false requires consent. */
  legitimateInterest?: boolean;
  /** Whether GDPR applies to a call that does not say (`gdpr` absent). Default: when it carries a TC string. */
  gdprDefault?: 'applies' | 'does-not-apply' | 'when-tc-string';
}

/** The part of a decoded TC string the decision needs, kept small so thousands can be cached. */
interface TcfView {
  purposeConsents: number;
  purposeLI: number;
  vendorConsents: Uint8Array;
  vendorLI: Uint8Array;
  /** The publisher's restrictions (a purpose not allowed, or only on consent / only on legitimate interest), if any. */
  restrictions?: PurposeRestrictionVector;
  /** The decision per vendor id, worked out once per cached string (null: a legal basis). */
  byVendor?: Map<number, ConsentRefusal | null>;
}

/** A TC string that could not be used, and why. */
interface TcfProblem {
  problem: string;
}

/** One US opt-out found in the call's signals. */
export interface UsOptOut {
  /** `usp` for the `us_privacy` string, else the GPP section name (`usnat`, `usca`, `uspv1`, …). */
  section: string;
  /** The field that says so (`SaleOptOut`, `SharingOptOut`, `TargetedAdvertisingOptOut`, `OptOutSale`). */
  field: string;
}

/** The call's privacy signals, decoded once and shared by every partner. */
export interface DecodedConsent {
  /** True when GDPR applies to the call (from `gdpr`, or `gdprDefault`). */
  gdprApplies: boolean;
  /** The TC string decoded, or why it could not be (`missing`, `unreadable: …`); only when GDPR applies. */
  tcf?: TcfView | TcfProblem;
  /** Every US opt-out signalled (USP `Y`, GPP US sections); empty when none. */
  usOptOuts: UsOptOut[];
  /** Why the GPP string could not be read, when it could not (its US sections then count as opted out). */
  gppProblem?: string;
}

/** Why a partner may not receive eids, or undefined when it may. */
export interface ConsentRefusal {
  /** `gdpr`: no legal basis for the partner's vendor; `usp` / `gpp`: a US opt-out. */
  code: 'gdpr' | 'usp' | 'gpp';
  /** One sentence naming the signal. */
  message: string;
}

/** GPP section ids of the US: `uspv1` (6), `usnat` (7) and the states (8 and up). */
const isUsSection = (id: number) => id >= 6 && id < 100;
/** The opt-out fields of the US sections: 1 means opted out (GPP US sections, "Opt-Out" fields). */
const US_FIELDS = ['SaleOptOut', 'SharingOptOut', 'TargetedAdvertisingOptOut'];

/**
 * A cache of decoded strings (decoding costs 20 to 100 µs; a user's calls repeat the same strings). Two
 * generations instead of a strict LRU, so a hit is one Map lookup: entries used since the last turnover survive
 * it, the others are dropped. Holds at most `max` entries.
 */
class Cache<V> {
  private young = new Map<string, V>();
  private old = new Map<string, V>();
  private readonly half: number;
  constructor(max: number) {
    this.half = Math.max(1, Math.floor(max / 2));
  }
  /** The value for `key`, made with `make` on a miss; kept unless `keep` says otherwise. */
  get(key: string, make: (key: string) => V, keep?: (v: V) => boolean): V {
    let v = this.young.get(key);
    if (v !== undefined) return v;
    v = this.old.get(key) ?? make(key);
    if (keep && !keep(v)) return v;
    if (this.young.size >= this.half) {
      this.old = this.young;
      this.young = new Map();
    }
    this.young.set(key, v);
    return v;
  }
}

/** The vendor ids of a TCF vector as bits, `maxId / 8` bytes. */
function bitset(v: { maxId: number; values(): Iterable<number> }): Uint8Array {
  const out = new Uint8Array((v.maxId >> 3) + 1);
  for (const id of v.values()) out[id >> 3] |= 1 << (id & 7);
  return out;
}

/**
 * Vendor ids above this are real (the Global Vendor List is far below it) but a view that large is not cached: a
 * string can claim vendor 65,535 in a few bytes, and 10,000 such views would hold 160 MB.
 */
const MAX_CACHED_VENDOR_ID = 4096;

const hasBit = (set: Uint8Array, id: number) => id >= 0 && id >> 3 < set.length && (set[id >> 3] & (1 << (id & 7))) !== 0;

const mask = (ids: Iterable<number>) => {
  let m = 0;
  for (const id of ids) if (id > 0 && id < 32) m |= 1 << id;
  return m;
};

function decodeTcf(tcString: string): TcfView | TcfProblem {
  try {
    const m = TCString.decode(tcString);
    return {
      purposeConsents: mask(m.purposeConsents.values()),
      purposeLI: mask(m.purposeLegitimateInterests.values()),
      vendorConsents: bitset(m.vendorConsents),
      vendorLI: bitset(m.vendorLegitimateInterests),
      ...(m.publisherRestrictions.numRestrictions ? { restrictions: m.publisherRestrictions } : {}),
    };
  } catch (e) {
    return { problem: `the TC string could not be decoded (${e instanceof Error ? e.message : String(e)})` };
  }
}

interface GppView {
  optOuts: Array<UsOptOut & { sid: number }>;
  /** The TC string of its `tcfeuv2` section, for a call that carries GDPR consent only in GPP. */
  tcString?: string;
  problem?: string;
}

function decodeGpp(gpp: string): GppView {
  try {
    const model = new GppModel(gpp);
    const optOuts: GppView['optOuts'] = [];
    for (const sid of model.getSectionIds() as number[]) {
      if (!isUsSection(sid)) continue;
      const section = Sections.SECTION_ID_NAME_MAP.get(sid);
      if (!section) continue;
      if (sid === 6) {
        if (model.getFieldValue(section, 'OptOutSale') === 'Y') optOuts.push({ sid, section, field: 'OptOutSale' });
        continue;
      }
      for (const field of US_FIELDS) if (model.hasField(section, field) && model.getFieldValue(section, field) === 1) optOuts.push({ sid, section, field });
    }
    const view: GppView = { optOuts };
    if (model.hasSectionId(2)) view.tcString = model.encodeSectionById(2);
    return view;
  } catch (e) {
    return { optOuts: [], problem: `the GPP string could not be decoded (${e instanceof Error ? e.message : String(e)})` };
  }
}

const small = (v: TcfView | TcfProblem) => !('vendorConsents' in v) || (v.vendorConsents.length + v.vendorLI.length) * 8 <= 2 * (MAX_CACHED_VENDOR_ID + 8);

/** Decodes the privacy signals of ad calls, caching decoded strings (the recently used ones, `cacheSize` of each kind). */
export function createConsentDecoder(rules: TcfRules = {}, cacheSize = 10_000) {
  const tcfCache = new Cache<TcfView | TcfProblem>(cacheSize);
  const gppCache = new Cache<GppView>(cacheSize);
  const purposeList = [...new Set(rules.purposes ?? [2, 3, 4, 5, 6, 7, 8, 9, 10])].filter((p) => p > 0 && p < 32).sort((a, b) => a - b);
  const li = rules.legitimateInterest ?? true;
  const gdprDefault = rules.gdprDefault ?? 'when-tc-string';

  /** Decodes the call's signals (cached per string). */
  function decode(c: AdCallConsent): DecodedConsent {
    const gpp = c.gpp ? gppCache.get(c.gpp, decodeGpp) : undefined;
    // GPP's EU TCF section (id 2) stands in for a missing gdpr_consent where the call says it applies.
    const tcString = c.gdprConsent ?? (!c.gppSid || c.gppSid.includes(2) ? gpp?.tcString : undefined);
    const gdprApplies = c.gdpr !== undefined ? c.gdpr === 1 : gdprDefault === 'applies' || (gdprDefault === 'when-tc-string' && !!tcString);
    const out: DecodedConsent = { gdprApplies, usOptOuts: [] };
    if (gdprApplies) out.tcf = tcString ? tcfCache.get(tcString, decodeTcf, small) : { problem: 'GDPR applies and the call carries no TC string' };
    // US Privacy: the third character is the opt-out of sale (`1YYN`).
    if (c.usPrivacy && c.usPrivacy.charAt(2).toUpperCase() === 'Y') out.usOptOuts.push({ section: 'usp', field: 'us_privacy' });
    if (gpp && (gpp.optOuts.length || gpp.problem)) {
      // Only the sections the call says apply count (gpp_sid); without gpp_sid, every US section in the string.
      const applies = (sid: number) => !c.gppSid || c.gppSid.includes(sid);
      for (const o of gpp.optOuts) if (applies(o.sid)) out.usOptOuts.push({ section: o.section, field: o.field });
      // An unreadable GPP string whose applicable sections include a US one fails closed.
      if (gpp.problem && (!c.gppSid || c.gppSid.some(isUsSection))) out.gppProblem = gpp.problem;
    }
    return out;
  }

  /**
   * TCF's legal bases, per purpose: the vendor's consent with the purpose's consent, or (when allowed) the vendor's
   * legitimate interest with the purpose's; a publisher restriction can forbid a purpose to the vendor or allow it
   * on one basis only. At least one of `purposes` needs a basis.
   */
  function gdprRefusal(tcf: TcfView, vendorId: number): ConsentRefusal | undefined {
    const vendorConsent = hasBit(tcf.vendorConsents, vendorId);
    const vendorLI = li && hasBit(tcf.vendorLI, vendorId);
    if (!vendorConsent && !vendorLI) {
      const onlyLI = !li && hasBit(tcf.vendorLI, vendorId);
      return { code: 'gdpr', message: `GDPR applies: vendor ${vendorId} has ${onlyLI ? 'legitimate interest only, and the policy requires consent' : 'no consent'} in the TC string` };
    }
    const restricted = new Map((tcf.restrictions?.getRestrictions(vendorId) ?? []).map((r) => [r.purposeId, r.restrictionType as number]));
    for (const p of purposeList) {
      const type = restricted.get(p); // 0 not allowed, 1 consent only, 2 legitimate interest only
      if (type === 0) continue;
      if (vendorConsent && type !== 2 && (tcf.purposeConsents & (1 << p)) !== 0) return undefined;
      if (vendorLI && type !== 1 && (tcf.purposeLI & (1 << p)) !== 0) return undefined;
    }
    const within = restricted.size ? ', within the publisher restrictions' : '';
    return { code: 'gdpr', message: `GDPR applies: vendor ${vendorId} has no legal basis for any of purposes ${purposeList.join(', ')} in the TC string${within}` };
  }

  /** Why a partner with GVL id `vendorId` may not receive eids under `consent`, or undefined when it may. */
  function refusal(consent: DecodedConsent, vendorId: number | undefined): ConsentRefusal | undefined {
    if (consent.gdprApplies) {
      const tcf = consent.tcf;
      if (!tcf || (tcf as TcfProblem).problem !== undefined) return { code: 'gdpr', message: `GDPR applies: ${(tcf as TcfProblem | undefined)?.problem ?? 'no TC string'}` };
      if (vendorId === undefined) return { code: 'gdpr', message: 'GDPR applies and the partner has no gvlVendorId: no legal basis can be shown' };
      const view = tcf as TcfView;
      const memo = (view.byVendor ??= new Map());
      let r = memo.get(vendorId);
      if (r === undefined) memo.set(vendorId, (r = gdprRefusal(view, vendorId) ?? null));
      if (r) return r;
    }
    const opt = consent.usOptOuts[0];
    if (opt) {
      return opt.section === 'usp'
        ? { code: 'usp', message: 'US Privacy string signals an opt-out of sale (us_privacy third character Y)' }
        : { code: 'gpp', message: `GPP section ${opt.section} signals ${opt.field}` };
    }
    if (consent.gppProblem) return { code: 'gpp', message: `${consent.gppProblem}; its US sections may hold an opt-out` };
    return undefined;
  }

  return { decode, refusal };
}

/** A consent decoder: `decode(call.consent)` once per call, then `refusal(decoded, vendorId)` per partner. */
export type ConsentDecoder = ReturnType<typeof createConsentDecoder>;
