/**
 * Consent on the server (docs/ad-server.md "Forwarding policy"): the privacy signals an ad call carries, decoded and
 * turned into one question: may a partner with this GVL vendor id receive eids? Not every ad call comes from our
 * tag (GET calls built by other libraries, server-to-server), so the server cannot trust that the browser already
 * applied them.
 *
 * Every string comes from the network, so every decode is bounded in time and memory (docs/ad-server.md
 * "Forwarding policy", consent caps): TC strings are read by our own bounded reader (tc-string.ts; the
 * IAB's `@iabtcf/core` is its reference in the property test), GPP strings by `@iabgpp/cmpapi` once our header
 * reader has checked the section ids it would otherwise expand without bound (gpp-header.ts).
 */
import { GppModel, Sections } from '@iabgpp/cmpapi';
import type { AdCallConsent } from '../parse/index.js';
import { BoundedCache } from './cache.js';
import { readGppHeader } from './gpp-header.js';
import { hasId } from './id-ranges.js';
import { readTcString } from './tc-string.js';
import type { TcConsent, TcProblem } from './tc-string.js';
import type { VendorListSource } from './gvl.js';

export { TC_CAPS } from './tc-string.js';
export { GPP_CAPS } from './gpp-header.js';

/** What decides the legal basis under GDPR; the defaults are those of the tag (src/tag/consent-rules.ts). */
export interface TcfRules {
  /** TCF purposes, one needing a legal basis. Default 2 to 10 (docs/wire-format.md#consent-signals-and-rules). */
  purposes?: readonly number[];
  /**
   * TCF purposes each needing a legal basis, besides one of `purposes`. Default [2]: without a basis for purpose 2
   * (selecting basic ads), Prebid Server sends the vendor no bid request, so no eids.
   */
  requiredPurposes?: readonly number[];
  /**
   * The Global Vendor List the vendors' declarations are checked against: a loader (`createGvlLoader`) or a fixed
   * list (`parseVendorList`). Without one, declarations are not checked (docs/wire-format.md#global-vendor-list).
   */
  gvl?: VendorListSource;
  /** With `gvl`, before any list is loaded: `refuse` (default) no legal basis; `tc-string`: the TC string alone. */
  gvlFallback?: 'refuse' | 'tc-string';
  /**
   * With `gvl`, when the list version the TC string names is not held (a loader fetches it in the background):
   * `refuse` (default) no legal basis; `newest`: decide with the newest list held.
   */
  gvlVersionMissing?: 'refuse' | 'newest';
  /**
   * TCF v2.3: a TC string created or updated from 1 March 2026 shows the vendor in its disclosed-vendors segment,
   * or the vendor has no legal basis. Default true.
   */
  requireDisclosedVendors?: boolean;
  /** Whether legitimate interest (vendor and purpose) is a legal basis. Default true; false requires consent. */
  legitimateInterest?: boolean;
  /** Whether GDPR applies to a call that does not say (`gdpr` absent). Default: when it carries a TC string. */
  gdprDefault?: 'applies' | 'does-not-apply' | 'when-tc-string';
}

/**
 * A decoded TC string, with the refusals worked out so far per vendor id (see `gdprRefusalOf`; null: none), for
 * the vendor lists' generation `gen`.
 */
interface TcfView extends TcConsent {
  byVendor?: Map<number, ConsentRefusal | null>;
  gen?: number;
}

/** A TC string that could not be used, and why (the field, for a string over a cap). */
type TcfProblem = TcProblem;

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
  /**
   * A short, stable phrase naming the signal and field that decided, for reports (at most a vendor id and a
   * purpose vary): `tcf vendor 755 no consent`, `gvl vendor 755 does not declare purpose 2`, `gvl not loaded`.
   */
  reason: string;
}

/** GPP section ids of the US: `uspv1` (6), `usnat` (7) and the states (8 and up). */
const isUsSection = (id: number) => id >= 6 && id < 100;
/** The opt-out fields of the US sections: 1 means opted out (GPP US sections, "Opt-Out" fields). */
const US_FIELDS = ['SaleOptOut', 'SharingOptOut', 'TargetedAdvertisingOptOut'];

/** Default byte budget of each decode cache (estimated; docs/ad-server.md "Forwarding policy"). */
const CACHE_BYTES = 32 * 1024 * 1024;
/** Vendors whose refusal is kept per cached TC string (a network has tens of partners). */
const MAX_VENDOR_VERDICTS = 64;
/** What the refusal memo of one TC string may hold (references to shared refusals), counted in its entry. */
const VERDICT_BYTES = MAX_VENDOR_VERDICTS * 32;

const NO_TC_STRING = 'GDPR applies and the call carries no TC string';

/** A library error in one line and at most 200 characters (its messages quote the whole string). */
const shortError = (e: unknown) => {
  const m = (e instanceof Error ? e.message : String(e)).replace(/\s+/g, ' ');
  return m.length > 200 ? `${m.slice(0, 199)}…` : m;
};

function decodeTcf(tcString: string): TcfView | TcfProblem {
  const out = readTcString(tcString);
  return 'problem' in out ? { problem: `the TC string could not be used (${out.problem})` } : out;
}

/** Estimated bytes of a cached TC string: the key (2 bytes a character at most), the view, its verdict memo. */
function tcfBytes(key: string, v: TcfView | TcfProblem): number {
  if ('problem' in v) return 2 * key.length + 2 * v.problem.length + 128;
  let bytes = 2 * key.length + 256 + VERDICT_BYTES + v.vendorConsents.byteLength + v.vendorLI.byteLength;
  bytes += v.disclosedVendors?.byteLength ?? 0;
  for (const r of v.restrictions) bytes += 96 + r.vendors.byteLength;
  return bytes;
}

interface GppView {
  optOuts: (UsOptOut & { sid: number })[];
  /** The TC string of its `tcfeuv2` section, for a call that carries GDPR consent only in GPP. */
  tcString?: string;
  problem?: string;
}

function decodeGpp(gpp: string): GppView {
  // Our header reader first: the library would expand absurd section-id ranges id by id (gpp-header.ts).
  const header = readGppHeader(gpp);
  if (header && 'problem' in header) {
    return { optOuts: [], problem: `the GPP string could not be used (${header.problem})` };
  }
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
      for (const field of US_FIELDS) {
        const optedOut = model.hasField(section, field) && model.getFieldValue(section, field) === 1;
        if (optedOut) optOuts.push({ sid, section, field });
      }
    }
    const view: GppView = { optOuts };
    if (model.hasSectionId(2)) view.tcString = model.encodeSectionById(2);
    return view;
  } catch (e) {
    return { optOuts: [], problem: `the GPP string could not be decoded (${shortError(e)})` };
  }
}

/** Estimated bytes of a cached GPP string: the key, its EU section (counted apart), opt-outs, problem. */
const gppBytes = (key: string, v: GppView) =>
  4 * key.length + 128 + 96 * v.optOuts.length + 2 * (v.problem?.length ?? 0);

/**
 * The GDPR verdict for one vendor, one number: 0 a legal basis, else a kind (below) + 32 × the purpose it names +
 * 1,024 × the list version it names.
 */
type Verdict = number;
/** No vendor consent nor legitimate interest. */
const NO_CONSENT = 1;
/** Legitimate interest only, where the policy requires consent. */
const LI_ONLY = 2;
/** No basis for any of `purposes`; the same within publisher restrictions. */
const NO_BASIS = 3;
const NO_BASIS_RESTRICTED = 4;
/** No basis for a required purpose; the same within publisher restrictions. */
const NO_PURPOSE = 5;
const NO_PURPOSE_RESTRICTED = 6;
/** The vendor is not in the list; deleted from it; declares not the purpose (0: none of `purposes`). */
const GVL_ABSENT = 7;
const GVL_DELETED = 8;
const GVL_UNDECLARED = 9;
/** No list loaded yet; not the version the TC string names. */
const GVL_NOT_LOADED = 10;
const GVL_NO_VERSION = 11;
/** Not in the disclosed vendors of a TCF v2.3 string. */
const NOT_DISCLOSED = 12;
/** The string gives the purpose a basis the vendor does not declare it on: consent; legitimate interest. */
const GVL_NOT_ON_CONSENT = 13;
const GVL_NOT_ON_LI = 14;
/** Purposes legitimate interest may serve: not 1, nor 3 to 6 (TCF policy v4 and later, and Prebid Server Java). */
const LI_PURPOSES = ~((1 << 1) | (1 << 3) | (1 << 4) | (1 << 5) | (1 << 6));
/** From this date (UTC), TC strings carry the disclosed-vendors segment (TCF v2.3), as Prebid Server Java reads it. */
const TCF_23_FROM = Date.UTC(2026, 2, 1);

/**
 * Decodes the privacy signals of ad calls, caching decoded strings: the recently used ones, at most `cacheSize`
 * and `cacheBytes` (estimated) of each kind, TC and GPP.
 */
export function createConsentDecoder(rules: TcfRules = {}, cacheSize = 10_000, cacheBytes = CACHE_BYTES) {
  const tcfCache = new BoundedCache<TcfView | TcfProblem>(cacheSize, cacheBytes, tcfBytes);
  const gppCache = new BoundedCache<GppView>(cacheSize, cacheBytes, gppBytes);
  const purposeList = [...new Set(rules.purposes ?? [2, 3, 4, 5, 6, 7, 8, 9, 10])]
    .filter((p) => p > 0 && p < 32)
    .sort((a, b) => a - b);
  const purposeMask = purposeList.reduce((m, p) => m | (1 << p), 0);
  const required = [...new Set(rules.requiredPurposes ?? [2])].filter((p) => p > 0 && p < 32).sort((a, b) => a - b);
  const li = rules.legitimateInterest ?? true;
  const gvl = rules.gvl;
  const gvlFallback = rules.gvlFallback ?? 'refuse';
  const gvlVersionMissing = rules.gvlVersionMissing ?? 'refuse';
  const requireDisclosed = rules.requireDisclosedVendors ?? true;
  const gdprDefault = rules.gdprDefault ?? 'when-tc-string';

  /** Decodes the call's signals (cached per string). */
  function decode(c: AdCallConsent): DecodedConsent {
    const gpp = c.gpp ? gppCache.get(c.gpp, decodeGpp) : undefined;
    // GPP's EU TCF section (id 2) stands in for a missing gdpr_consent where the call says it applies.
    const tcString = c.gdprConsent ?? (!c.gppSid || c.gppSid.includes(2) ? gpp?.tcString : undefined);
    // Without `gdpr`, the policy's default decides (worked out only then: this runs on every call).
    const gdprApplies =
      c.gdpr !== undefined
        ? c.gdpr === 1
        : gdprDefault === 'applies' || (gdprDefault === 'when-tc-string' && !!tcString);
    const out: DecodedConsent = { gdprApplies, usOptOuts: [] };
    if (gdprApplies) {
      out.tcf = tcString ? tcfCache.get(tcString, decodeTcf) : { problem: NO_TC_STRING };
    }
    // US Privacy: the third character is the opt-out of sale (`1YYN`), `Y` or `y` (89, 121: no string made).
    const sale = c.usPrivacy ? c.usPrivacy.charCodeAt(2) : 0;
    if (sale === 89 || sale === 121) {
      out.usOptOuts.push({ section: 'usp', field: 'us_privacy' });
    }
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
   * TCF's legal bases, per purpose: the vendor's consent with the purpose's consent, or (when allowed, and not for
   * purposes 1 and 3 to 6) the vendor's legitimate interest with the purpose's. With a Global Vendor List, only on
   * the basis the vendor declares there: consent for its `purposes`, legitimate interest for its `legIntPurposes`,
   * either for its `flexiblePurposes`; a vendor absent from or deleted in the list (the version the TC string names,
   * or the newest) has none. The publisher's restrictions that name the vendor all hold: a purpose not allowed has
   * no basis, consent only takes away legitimate interest, legitimate interest only takes away consent (both: no
   * basis). Each of `requiredPurposes` and at least one of `purposes` need a basis.
   */
  function gdprVerdict(tcf: TcConsent, vendorId: number): Verdict {
    // Purposes the vendor may have on consent, on legitimate interest, at all: any, without a list.
    let onConsent = -1;
    let onLI = -1;
    let declared = -1;
    let version = 0;
    const latest = gvl?.latest();
    if (gvl && !latest && gvlFallback === 'refuse') return GVL_NOT_LOADED;
    if (latest) {
      // v3 lists serve TC strings of policy 4 and up (TCF v2.2); older strings name v2 lists, which are not read.
      let list = tcf.policyVersion >= 4 ? gvl!.list(tcf.vendorListVersion) : undefined;
      if (!list) {
        if (gvlVersionMissing === 'refuse') return GVL_NO_VERSION + 1024 * tcf.vendorListVersion;
        list = latest;
      }
      for (const l of list === latest ? [list] : [list, latest]) {
        const state = l.vendorState(vendorId);
        if (state !== 1) return (state === 0 ? GVL_ABSENT : GVL_DELETED) + 1024 * l.version;
      }
      const consent = list.consentPurposes(vendorId);
      const legInt = list.liPurposes(vendorId);
      const flexible = list.flexiblePurposes(vendorId);
      onConsent = consent | (legInt & flexible);
      onLI = legInt | (consent & flexible);
      declared = consent | legInt;
      version = list.version;
    }
    if (requireDisclosed && tcf.updatedMs >= TCF_23_FROM) {
      if (!tcf.disclosedVendors || !hasId(tcf.disclosedVendors, vendorId)) return NOT_DISCLOSED;
    }
    const vendorConsent = hasId(tcf.vendorConsents, vendorId);
    const vendorLI = li && hasId(tcf.vendorLI, vendorId);
    if (!vendorConsent && !vendorLI) return !li && hasId(tcf.vendorLI, vendorId) ? LI_ONLY : NO_CONSENT;
    // Purpose bit masks of the restrictions naming the vendor, by type.
    const restricted = [0, 0, 0];
    let named = false;
    for (const r of tcf.restrictions) {
      if (!hasId(r.vendors, vendorId)) continue;
      named = true;
      if (r.purpose < 32) restricted[r.type] |= 1 << r.purpose;
    }
    // The purposes with a basis on the TC string alone, by basis, then within the vendor's declarations.
    const byConsent = vendorConsent ? tcf.purposeConsents & ~restricted[2] & ~restricted[0] : 0;
    const byLI = vendorLI ? tcf.purposeLI & LI_PURPOSES & ~restricted[1] & ~restricted[0] : 0;
    const basis = (byConsent & onConsent) | (byLI & onLI);
    /** Why `wanted` (purpose bits) has no basis: the list when the string alone gives one, else the string. */
    const why = (wanted: number, p: number): Verdict => {
      const lost = (byConsent | byLI) & wanted;
      if (lost) {
        // The lowest purpose the string allows and the list does not, on the basis the string gives it.
        const q = 31 - Math.clz32(lost & -lost);
        const kind = !(declared & (1 << q))
          ? GVL_UNDECLARED
          : byConsent & (1 << q)
            ? GVL_NOT_ON_CONSENT
            : GVL_NOT_ON_LI;
        return kind + 32 * q + 1024 * version;
      }
      if (p)
        return ((restricted[0] | restricted[1] | restricted[2]) & wanted ? NO_PURPOSE_RESTRICTED : NO_PURPOSE) + 32 * p;
      return named ? NO_BASIS_RESTRICTED : NO_BASIS;
    };
    if (!(basis & purposeMask)) {
      return declared & purposeMask ? why(purposeMask, 0) : GVL_UNDECLARED + 1024 * version;
    }
    for (const p of required) {
      const bit = 1 << p;
      if (basis & bit) continue;
      return declared & bit ? why(bit, p) : GVL_UNDECLARED + 32 * p + 1024 * version;
    }
    return 0;
  }

  // One refusal object per vendor and verdict, shared by every call (bounded: vendor ids come from partners).
  const refusals = new Map<string, ConsentRefusal>();
  const gdprRefusal = (vendorId: number, verdict: Verdict): ConsentRefusal => {
    const key = `${vendorId}:${verdict}`;
    let r = refusals.get(key);
    if (r) return r;
    const kind = verdict & 31;
    const p = (verdict >> 5) & 31;
    const version = Math.floor(verdict / 1024);
    const v = `vendor ${vendorId}`;
    const purposes = `any of purposes ${purposeList.join(', ')}`;
    const [message, reason] = {
      [NO_CONSENT]: [`${v} has no consent in the TC string`, `tcf ${v} no consent`],
      [LI_ONLY]: [
        `${v} has legitimate interest only, and the policy requires consent in the TC string`,
        `tcf ${v} legitimate interest only`,
      ],
      [NO_BASIS]: [`${v} has no legal basis for ${purposes} in the TC string`, `tcf ${v} no legal basis`],
      [NO_BASIS_RESTRICTED]: [
        `${v} has no legal basis for ${purposes} in the TC string, within the publisher restrictions`,
        `tcf ${v} publisher restriction`,
      ],
      [NO_PURPOSE]: [
        `${v} has no legal basis for purpose ${p} in the TC string`,
        `tcf ${v} no legal basis for purpose ${p}`,
      ],
      [NO_PURPOSE_RESTRICTED]: [
        `${v} has no legal basis for purpose ${p} in the TC string, within the publisher restrictions`,
        `tcf ${v} publisher restriction on purpose ${p}`,
      ],
      [GVL_ABSENT]: [`gvl ${v} is not in the Global Vendor List (version ${version})`, `gvl ${v} not in list`],
      [GVL_DELETED]: [`gvl ${v} is deleted from the Global Vendor List (version ${version})`, `gvl ${v} deleted`],
      [GVL_UNDECLARED]: p
        ? [`gvl ${v} does not declare purpose ${p} (list version ${version})`, `gvl ${v} does not declare purpose ${p}`]
        : [
            `gvl ${v} declares none of purposes ${purposeList.join(', ')} (list version ${version})`,
            `gvl ${v} declares none of the purposes`,
          ],
      [GVL_NOT_ON_CONSENT]: [
        `gvl ${v} does not declare purpose ${p} on consent (list version ${version}), the basis the TC string gives`,
        `gvl ${v} does not declare purpose ${p} on consent`,
      ],
      [GVL_NOT_ON_LI]: [
        `gvl ${v} does not declare purpose ${p} on legitimate interest (list version ${version}), the basis the TC string gives`,
        `gvl ${v} does not declare purpose ${p} on legitimate interest`,
      ],
      [GVL_NOT_LOADED]: [
        'no Global Vendor List is loaded yet, so no vendor declaration can be checked',
        'gvl not loaded',
      ],
      [GVL_NO_VERSION]: [
        `the TC string names Global Vendor List version ${version}, which is not loaded`,
        'gvl version not loaded',
      ],
      [NOT_DISCLOSED]: [
        `${v} is not among the TC string's disclosed vendors (required of strings updated from 1 March 2026)`,
        `tcf ${v} not disclosed`,
      ],
    }[kind] ?? [`${v} has no legal basis`, `tcf ${v} no legal basis`];
    r = { code: 'gdpr', message: `GDPR applies: ${message}`, reason };
    if (refusals.size < 4096) refusals.set(key, r);
    return r;
  };

  /**
   * The GDPR refusal for `vendorId` (null: a legal basis), kept on the cached view for up to 64 vendors while the
   * vendor lists do not change.
   */
  function gdprRefusalOf(view: TcfView, vendorId: number): ConsentRefusal | null {
    const gen = gvl ? gvl.generation : 0;
    if (view.gen !== gen) {
      view.gen = gen;
      view.byVendor = undefined;
    }
    const memo = (view.byVendor ??= new Map<number, ConsentRefusal | null>());
    let r = memo.get(vendorId);
    if (r === undefined) {
      const verdict = gdprVerdict(view, vendorId);
      r = verdict ? gdprRefusal(vendorId, verdict) : null;
      if (memo.size < MAX_VENDOR_VERDICTS) memo.set(vendorId, r);
    }
    return r;
  }

  /** Why a partner with GVL id `vendorId` may not receive eids under `consent`, or undefined when it may. */
  function refusal(consent: DecodedConsent, vendorId: number | undefined): ConsentRefusal | undefined {
    if (consent.gdprApplies) {
      const tcf = consent.tcf;
      const problem = tcf ? (tcf as TcfProblem).problem : 'no TC string';
      if (problem !== undefined) {
        // Some problems already say that GDPR applies ("GDPR applies and the call carries no TC string").
        return problem.startsWith('GDPR applies')
          ? { code: 'gdpr', message: problem, reason: 'tcf missing' }
          : { code: 'gdpr', message: `GDPR applies: ${problem}`, reason: 'tcf unreadable' };
      }
      if (vendorId === undefined) {
        const message = 'GDPR applies and the partner has no gvlVendorId: no legal basis can be shown';
        return { code: 'gdpr', message, reason: 'tcf no vendor id' };
      }
      const r = gdprRefusalOf(tcf as TcfView, vendorId);
      if (r) return r;
    }
    const opt = consent.usOptOuts[0];
    if (opt) {
      return opt.section === 'usp'
        ? {
            code: 'usp',
            message: 'US Privacy string signals an opt-out of sale (us_privacy third character Y)',
            reason: 'usp opt-out',
          }
        : {
            code: 'gpp',
            message: `GPP section ${opt.section} signals ${opt.field}`,
            reason: `gpp ${opt.section} opt-out`,
          };
    }
    if (consent.gppProblem) {
      return {
        code: 'gpp',
        message: `${consent.gppProblem}; its US sections may hold an opt-out`,
        reason: 'gpp unreadable',
      };
    }
    return undefined;
  }

  /** How many decoded strings each cache holds, and their estimated bytes. */
  const stats = () => ({ tcf: tcfCache.stats(), gpp: gppCache.stats() });

  /** Changes when the vendor lists change: refusals worked out before may differ now. */
  const generation = () => (gvl ? gvl.generation : 0);

  return { decode, refusal, stats, generation };
}

/** A consent decoder: `decode(call.consent)` once per call, then `refusal(decoded, vendorId)` per partner. */
export type ConsentDecoder = ReturnType<typeof createConsentDecoder>;
