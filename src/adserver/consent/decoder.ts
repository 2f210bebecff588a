/**
 * Consent on the server (docs/ad-server.md "Forwarding policy"): the privacy signals an ad call carries, decoded and
 * turned into one question: may a partner with this GVL vendor id receive eids? Not every ad call comes from our
 * tag (GET calls built by other libraries, server-to-server), so the server cannot trust that the browser already
 * applied them.
 *
 * Every string comes from the network, so every decode is bounded in time and memory (docs/ad-server.md
 * "Forwarding policy", consent caps): TC strings are read by our own bounded reader (tc-string.ts; the
 * IAB's `@iabtcf/core` is its reference in the property test), GPP strings by our header reader (gpp-header.ts)
 * and US section reader (gpp-us.ts), both held to the IAB's `@iabgpp/cmpapi` by the property test. What a decoded
 * TC string allows a vendor is the rule of tcf-rule.ts, kept per string and vendor by tcf-verdict.ts.
 */
import { usDenial, usSectionName } from '../../core/index.js';
import type { AdCallConsent } from '../parse/index.js';
import { BoundedCache } from './cache.js';
import { readGppHeader } from './gpp-header.js';
import { readUsSection } from './gpp-us.js';
import { readTcString } from './tc-string.js';
import type { TcProblem } from './tc-string.js';
import { createTcfVerdicts, VERDICT_BYTES } from './tcf-verdict.js';
import type { TcfView } from './tcf-verdict.js';
import type { TcfRules } from './tcf-rule.js';
import type { ConsentRefusal } from './refusal.js';

/** A TC string that could not be used, and why (the field, for a string over a cap). */
type TcfProblem = TcProblem;

/** One US signal that forbids sharing ids with a third party, found in the call's signals. */
export interface UsOptOut {
  /** `usp` for the `us_privacy` string, `gpc` for the browser's Global Privacy Control, else the GPP section name. */
  section: string;
  /** The field that says so (`SaleOptOut`, `MspaServiceProviderMode`, `Gpc`, `OptOutSale`, `us_privacy`, …). */
  field: string;
  /** What decided, `Field=value` (docs/wire-format.md#us-state-privacy), e.g. `MspaServiceProviderMode=1`. */
  value: string;
}

/** The call's privacy signals, decoded once and shared by every partner. */
export interface DecodedConsent {
  /** True when GDPR applies to the call (`gdpr` = 1, or `gpp_sid` names the EU section, or `gdprDefault`). */
  gdprApplies: boolean;
  /** The TC string decoded, or why it could not be (`missing`, `unreadable: …`); only when GDPR applies. */
  tcf?: TcfView | TcfProblem;
  /** Every US signal that forbids sharing ids (US Privacy, GPP US sections, GPC); empty when none. */
  usOptOuts: UsOptOut[];
  /** Why the GPP string (or an applicable section of it) could not be read: its US sections then refuse. */
  gppProblem?: string;
}

/**
 * Section ids that must be read when named applicable: all but the EU TCF section (2, read by the GDPR rules) and
 * Canada's TCF (5, not enforced: docs/wire-format.md#us-state-privacy). The US sections are 6 to 27; an id eidkit
 * does not know may be a newer state, so it fails closed.
 */
const mustRead = (id: number) => id !== 2 && id !== 5;
/** A valid US Privacy string that signals an opt-out of sale. */
const US_PRIVACY_OPT_OUT = /^1[YN-]Y[YN-]$/i;
/** The field a denial names: `SaleOptOut=1` → `SaleOptOut`, `SensitiveDataProcessing[3]=1` → its name. */
const fieldOf = (denial: string) => /^[A-Za-z]+/.exec(denial)?.[0] ?? denial;

/** Default byte budget of each decode cache (estimated; docs/ad-server.md "Forwarding policy"). */
const CACHE_BYTES = 32 * 1024 * 1024;
const NO_TC_STRING = 'GDPR applies and the call carries no TC string';

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

/** A US section of a GPP string, with why it forbids sharing ids (`''`: it allows it). */
interface UsSectionView {
  sid: number;
  section: string;
  /** `Field=value` (core/us-privacy.ts), `unreadable (…)`, or `''`. */
  denial: string;
}

interface GppView {
  /** The section ids the string holds. */
  sids: number[];
  /** Its US sections, each with its verdict worked out once. */
  us: UsSectionView[];
  /** The TC string of its `tcfeuv2` section, for a call that carries GDPR consent only in GPP. */
  tcString?: string;
  problem?: string;
}

function decodeGpp(gpp: string): GppView {
  // Our header reader: the IAB library would expand absurd section-id ranges id by id (gpp-header.ts).
  const header = readGppHeader(gpp);
  if (header && 'problem' in header) {
    return { sids: [], us: [], problem: `the GPP string could not be used (${header.problem})` };
  }
  // A bare TC string is read as the EU section, as the IAB library reads it.
  if (!header) {
    return gpp.startsWith('C')
      ? { sids: [2], us: [], tcString: gpp }
      : { sids: [], us: [], problem: 'the GPP string could not be used (no GPP header)' };
  }
  const { sectionIds: sids } = header;
  const texts = gpp.split('~');
  const us: UsSectionView[] = [];
  const view: GppView = { sids, us };
  sids.forEach((sid, i) => {
    const text = texts[i + 1];
    if (sid === 2) view.tcString = text;
    const section = usSectionName(sid);
    if (!section) return;
    // Each US section by our bounded reader (gpp-us.ts); one it cannot read refuses on its own.
    const fields = readUsSection(section, text);
    us.push({ sid, section, denial: fields ? usDenial(section, fields) : 'unreadable' });
  });
  return view;
}

/** Estimated bytes of a cached GPP string: the key, its EU section (counted apart), US verdicts, problem. */
const gppBytes = (key: string, v: GppView) =>
  4 * key.length +
  128 +
  8 * v.sids.length +
  v.us.reduce((n, u) => n + 96 + 2 * u.denial.length, 0) +
  2 * (v.problem?.length ?? 0);

/** The refusal for one US signal (see `usRefusal`). */
function usRefusalOf(o: UsOptOut): ConsentRefusal {
  if (o.section === 'usp') {
    const message = 'US Privacy string signals an opt-out of sale (us_privacy third character Y)';
    return { code: 'usp', message, reason: `usp ${o.value}` };
  }
  if (o.section === 'gpc') {
    const message = 'the browser signals Global Privacy Control (GPC) and no applicable GPP US section says otherwise';
    return { code: 'gpc', message, reason: `gpc ${o.value}` };
  }
  return {
    code: 'gpp',
    message: `GPP section ${o.section} does not allow sharing ids with third parties (${o.value})`,
    reason: `gpp ${o.section} ${o.value}`,
  };
}

/**
 * Why a partner with GVL id `vendorId` may not receive eids under the call's decoded signals, or undefined when it
 * may: GDPR first (`gdpr` gives the vendor's TCF refusal, null for a legal basis), then the US signals.
 */
export function consentRefusal(
  consent: DecodedConsent,
  vendorId: number | undefined,
  gdpr: (tcf: TcfView, vendorId: number) => ConsentRefusal | null,
): ConsentRefusal | undefined {
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
    const r = gdpr(tcf as TcfView, vendorId);
    if (r) return r;
  }
  const opt = consent.usOptOuts[0];
  if (opt) return usRefusalOf(opt);
  if (consent.gppProblem) {
    const message = `${consent.gppProblem}; its US sections may forbid sharing ids`;
    return { code: 'gpp', message, reason: 'gpp unreadable' };
  }
  return undefined;
}

/**
 * Decodes the privacy signals of ad calls, caching decoded strings: the recently used ones, at most `cacheSize`
 * and `cacheBytes` (estimated) of each kind, TC and GPP.
 */
export function createConsentDecoder(rules: TcfRules = {}, cacheSize = 10_000, cacheBytes = CACHE_BYTES) {
  const tcfCache = new BoundedCache<TcfView | TcfProblem>(cacheSize, cacheBytes, tcfBytes);
  const gppCache = new BoundedCache<GppView>(cacheSize, cacheBytes, gppBytes);
  const gdprDefault = rules.gdprDefault ?? 'when-tc-string';
  const gpcEnforced = rules.gpc ?? true;
  const verdicts = createTcfVerdicts(rules);

  /** Decodes the call's signals (cached per string). */
  function decode(c: AdCallConsent): DecodedConsent {
    const gpp = c.gpp ? gppCache.get(c.gpp, decodeGpp) : undefined;
    const sids = c.gppSid;
    // GPP's EU TCF section (id 2) named applicable: GDPR applies whatever `gdpr` says (the stricter reading wins).
    const euNamed = !!sids?.includes(2);
    // GPP's EU TCF section stands in for a missing gdpr_consent where the call says it applies.
    const tcString = c.gdprConsent ?? (!sids || euNamed ? gpp?.tcString : undefined);
    // Without `gdpr`, the policy's default decides (worked out only then: this runs on every call).
    const gdprApplies =
      c.gdpr === 1 ||
      euNamed ||
      (c.gdpr === undefined && (gdprDefault === 'applies' || (gdprDefault === 'when-tc-string' && !!tcString)));
    const out: DecodedConsent = { gdprApplies, usOptOuts: [] };
    if (gdprApplies) {
      out.tcf = tcString ? tcfCache.get(tcString, decodeTcf) : { problem: NO_TC_STRING };
    }
    // US Privacy: a valid string (`1` then three of `Y`, `N`, `-`, either case) whose third character says the user
    // opted out of sale (`1YYN`). An invalid string says nothing, as the peers read it.
    if (c.usPrivacy && US_PRIVACY_OPT_OUT.test(c.usPrivacy)) {
      out.usOptOuts.push({ section: 'usp', field: 'us_privacy', value: 'us_privacy[2]=Y' });
    }
    // GPP: only the sections the call says apply count (gpp_sid); without gpp_sid, every US section in the string.
    const applies = (sid: number) => !sids || sids.includes(sid);
    let usSection = false;
    if (gpp?.problem) {
      // An unreadable GPP string whose applicable sections may include a US one fails closed.
      if (!sids || sids.some(mustRead)) out.gppProblem = gpp.problem;
    } else if (gpp) {
      for (const u of gpp.us) {
        if (!applies(u.sid)) continue;
        usSection = true;
        if (u.denial) out.usOptOuts.push({ section: u.section, field: fieldOf(u.denial), value: u.denial });
      }
    }
    // A section named applicable that the string does not hold, or that eidkit cannot read, fails closed.
    if (sids && !out.gppProblem) {
      for (const sid of sids) {
        if (!mustRead(sid)) continue;
        if (!gpp) {
          out.gppProblem = `gpp_sid names section ${sid}, and the call carries no GPP string`;
        } else if (!gpp.sids.includes(sid)) {
          out.gppProblem = `gpp_sid names section ${sid}, which the GPP string does not hold`;
        } else if (!usSectionName(sid)) {
          out.gppProblem = `gpp_sid names section ${sid}, which eidkit cannot read`;
        } else continue;
        usSection = true;
        break;
      }
    }
    // The browser's Global Privacy Control, unless an applicable US section of the GPP string speaks for the user
    // (its own Gpc field then decides).
    if (c.gpc && !usSection && gpcEnforced) out.usOptOuts.push({ section: 'gpc', field: 'gpc', value: 'gpc=1' });
    return out;
  }

  /** Why a partner with GVL id `vendorId` may not receive eids under `consent`, or undefined when it may. */
  const refusal = (consent: DecodedConsent, vendorId: number | undefined) =>
    consentRefusal(consent, vendorId, verdicts.refusalOf);

  /** How many decoded strings each cache holds, and their estimated bytes. */
  const stats = () => ({ tcf: tcfCache.stats(), gpp: gppCache.stats() });

  return { decode, refusal, stats, generation: verdicts.generation };
}

/** A consent decoder: `decode(call.consent)` once per call, then `refusal(decoded, vendorId)` per partner. */
export type ConsentDecoder = ReturnType<typeof createConsentDecoder>;
