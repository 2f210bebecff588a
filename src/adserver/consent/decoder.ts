/**
 * Consent on the server (docs/ad-server.md "Forwarding policy"): the privacy signals an ad call carries, decoded and
 * turned into one question: may a partner with this GVL vendor id receive eids? Not every ad call comes from our
 * tag (GET calls built by other libraries, server-to-server), so the server cannot trust that the browser already
 * applied them.
 *
 * Every string comes from the network, so every decode is bounded in time and memory (docs/ad-server.md
 * "Forwarding policy", consent caps): TC strings are read by our own bounded reader (tc-string.ts; the
 * IAB's `@iabtcf/core` is its reference in the property test), GPP strings by `@iabgpp/cmpapi` once our header
 * reader has checked the section ids it would otherwise expand without bound (gpp-header.ts). What a decoded TC
 * string allows a vendor is worked out in tcf-verdict.ts.
 */
import { GppModel, Sections } from '@iabgpp/cmpapi';
import type { AdCallConsent } from '../parse/index.js';
import { BoundedCache } from './cache.js';
import { readGppHeader } from './gpp-header.js';
import { readTcString } from './tc-string.js';
import type { TcProblem } from './tc-string.js';
import { createTcfVerdicts, VERDICT_BYTES } from './tcf-verdict.js';
import type { TcfRules, TcfView } from './tcf-verdict.js';
import type { ConsentRefusal } from './refusal.js';

export { TC_CAPS } from './tc-string.js';
export { GPP_CAPS } from './gpp-header.js';
export type { TcfRules } from './tcf-verdict.js';
export type { ConsentRefusal } from './refusal.js';

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

/** GPP section ids of the US: `uspv1` (6), `usnat` (7) and the states (8 and up). */
const isUsSection = (id: number) => id >= 6 && id < 100;
/** The opt-out fields of the US sections: 1 means opted out (GPP US sections, "Opt-Out" fields). */
const US_FIELDS = ['SaleOptOut', 'SharingOptOut', 'TargetedAdvertisingOptOut'];

/** Default byte budget of each decode cache (estimated; docs/ad-server.md "Forwarding policy"). */
const CACHE_BYTES = 32 * 1024 * 1024;
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
 * Decodes the privacy signals of ad calls, caching decoded strings: the recently used ones, at most `cacheSize`
 * and `cacheBytes` (estimated) of each kind, TC and GPP.
 */
export function createConsentDecoder(rules: TcfRules = {}, cacheSize = 10_000, cacheBytes = CACHE_BYTES) {
  const tcfCache = new BoundedCache<TcfView | TcfProblem>(cacheSize, cacheBytes, tcfBytes);
  const gppCache = new BoundedCache<GppView>(cacheSize, cacheBytes, gppBytes);
  const gdprDefault = rules.gdprDefault ?? 'when-tc-string';
  const verdicts = createTcfVerdicts(rules);

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
      const r = verdicts.refusalOf(tcf as TcfView, vendorId);
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

  return { decode, refusal, stats, generation: verdicts.generation };
}

/** A consent decoder: `decode(call.consent)` once per call, then `refusal(decoded, vendorId)` per partner. */
export type ConsentDecoder = ReturnType<typeof createConsentDecoder>;
