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

export { TC_CAPS } from './tc-string.js';
export { GPP_CAPS } from './gpp-header.js';

/** What decides the legal basis under GDPR; the defaults are those of the tag (src/tag/consent-rules.ts). */
export interface TcfRules {
  /** TCF purposes, one needing a legal basis. Default 2 to 10 (docs/wire-format.md#consent-signals-and-rules). */
  purposes?: readonly number[];
  /** Whether legitimate interest (vendor and purpose) is a legal basis. Default true; false requires consent. */
  legitimateInterest?: boolean;
  /** Whether GDPR applies to a call that does not say (`gdpr` absent). Default: when it carries a TC string. */
  gdprDefault?: 'applies' | 'does-not-apply' | 'when-tc-string';
}

/** A decoded TC string, with the refusals worked out so far per vendor id (see `gdprRefusalOf`; null: none). */
interface TcfView extends TcConsent {
  byVendor?: Map<number, ConsentRefusal | null>;
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
 * The GDPR verdict for one vendor: 0 a legal basis; 1 no consent; 2 legitimate interest only where the policy
 * requires consent; 3 no basis for any purpose; 4 the same, within the publisher restrictions.
 */
type Verdict = 0 | 1 | 2 | 3 | 4;

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
  const li = rules.legitimateInterest ?? true;
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
   * TCF's legal bases, per purpose: the vendor's consent with the purpose's consent, or (when allowed) the vendor's
   * legitimate interest with the purpose's. The publisher's restrictions that name the vendor all hold: a purpose
   * not allowed has no basis, consent only takes away legitimate interest, legitimate interest only takes away
   * consent (both: no basis). At least one of `purposes` needs a basis.
   */
  function gdprVerdict(tcf: TcConsent, vendorId: number): Verdict {
    const vendorConsent = hasId(tcf.vendorConsents, vendorId);
    const vendorLI = li && hasId(tcf.vendorLI, vendorId);
    if (!vendorConsent && !vendorLI) return !li && hasId(tcf.vendorLI, vendorId) ? 2 : 1;
    // Purpose bit masks of the restrictions naming the vendor, by type.
    const restricted = [0, 0, 0];
    let named = false;
    for (const r of tcf.restrictions) {
      if (!hasId(r.vendors, vendorId)) continue;
      named = true;
      if (r.purpose < 32) restricted[r.type] |= 1 << r.purpose;
    }
    const allowed = purposeMask & ~restricted[0];
    if (vendorConsent && (allowed & ~restricted[2] & tcf.purposeConsents) !== 0) return 0;
    if (vendorLI && (allowed & ~restricted[1] & tcf.purposeLI) !== 0) return 0;
    return named ? 4 : 3;
  }

  // One refusal object per vendor and verdict, shared by every call (bounded: vendor ids come from partners).
  const refusals = new Map<number, ConsentRefusal>();
  const gdprRefusal = (vendorId: number, verdict: Verdict): ConsentRefusal => {
    const key = Number.isSafeInteger(vendorId * 8) ? vendorId * 8 + verdict : NaN;
    let r = refusals.get(key);
    if (r) return r;
    const purposes = `any of purposes ${purposeList.join(', ')}`;
    const why = [
      '',
      'has no consent in the TC string',
      'has legitimate interest only, and the policy requires consent in the TC string',
      `has no legal basis for ${purposes} in the TC string`,
      `has no legal basis for ${purposes} in the TC string, within the publisher restrictions`,
    ][verdict];
    r = { code: 'gdpr', message: `GDPR applies: vendor ${vendorId} ${why}` };
    if (refusals.size < 4096 && !Number.isNaN(key)) refusals.set(key, r);
    return r;
  };

  /** The GDPR refusal for `vendorId` (null: a legal basis), kept on the cached view for up to 64 vendors. */
  function gdprRefusalOf(view: TcfView, vendorId: number): ConsentRefusal | null {
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
        return { code: 'gdpr', message: problem.startsWith('GDPR applies') ? problem : `GDPR applies: ${problem}` };
      }
      if (vendorId === undefined) {
        const message = 'GDPR applies and the partner has no gvlVendorId: no legal basis can be shown';
        return { code: 'gdpr', message };
      }
      const r = gdprRefusalOf(tcf as TcfView, vendorId);
      if (r) return r;
    }
    const opt = consent.usOptOuts[0];
    if (opt) {
      return opt.section === 'usp'
        ? { code: 'usp', message: 'US Privacy string signals an opt-out of sale (us_privacy third character Y)' }
        : { code: 'gpp', message: `GPP section ${opt.section} signals ${opt.field}` };
    }
    if (consent.gppProblem) {
      return { code: 'gpp', message: `${consent.gppProblem}; its US sections may hold an opt-out` };
    }
    return undefined;
  }

  /** How many decoded strings each cache holds, and their estimated bytes. */
  const stats = () => ({ tcf: tcfCache.stats(), gpp: gppCache.stats() });

  return { decode, refusal, stats };
}

/** A consent decoder: `decode(call.consent)` once per call, then `refusal(decoded, vendorId)` per partner. */
export type ConsentDecoder = ReturnType<typeof createConsentDecoder>;
