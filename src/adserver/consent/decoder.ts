/**
 * Consent on the server (docs/ad-server.md "Forwarding policy"): the privacy signals an ad call carries, decoded and
 * turned into one question: may a partner with this GVL vendor id receive eids? Not every ad call comes from our
 * tag (GET calls built by other libraries, server-to-server), so the server cannot trust that the browser already
 * applied them.
 *
 * Every string comes from the network, so every decode is bounded in time and memory (docs/ad-server.md
 * "Forwarding policy", consent caps): TC strings are read by our own bounded reader (tc-string.ts; the
 * IAB's `@iabtcf/core` is its reference in the property test), GPP strings by our header reader (gpp-header.ts)
 * and US section reader (gpp-us.ts), both held to the IAB's `@iabgpp/cmpapi` by the property test.
 */
import { usDenial, usSectionName } from '../../core/index.js';
import type { AdCallConsent } from '../parse/index.js';
import { BoundedCache } from './cache.js';
import { readGppHeader } from './gpp-header.js';
import { readUsSection } from './gpp-us.js';
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
  /**
   * Whether the browser's Global Privacy Control (`gpc=1`, `regs.gpc`, `Sec-GPC: 1`) withholds eids when no
   * applicable GPP US section speaks for the user. Default true (docs/wire-format.md#us-state-privacy).
   */
  gpc?: boolean;
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

/** Why a partner may not receive eids, or undefined when it may. */
export interface ConsentRefusal {
  /** `gdpr`: no legal basis for the partner's vendor; `usp` / `gpp` / `gpc`: a US signal. */
  code: 'gdpr' | 'usp' | 'gpp' | 'gpc';
  /** One sentence naming the signal. */
  message: string;
  /**
   * The signal and field that decided, short and stable enough to count by (docs/wire-format.md#explaining-decisions;
   * at most a section and field, or a vendor id and a purpose, vary): `gpp usnat MspaServiceProviderMode=1`,
   * `usp us_privacy[2]=Y`, `gpc gpc=1`, `tcf vendor 755 no consent`, `gvl vendor 755 does not declare purpose 2`, ….
   */
  reason: string;
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
/** Vendors whose refusal is kept per cached TC string (a network has tens of partners). */
const MAX_VENDOR_VERDICTS = 64;
/** What the refusal memo of one TC string may hold (references to shared refusals), counted in its entry. */
const VERDICT_BYTES = MAX_VENDOR_VERDICTS * 32;

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
  const gpcEnforced = rules.gpc ?? true;

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
    if (opt) return usRefusalOf(opt);
    if (consent.gppProblem) {
      const message = `${consent.gppProblem}; its US sections may forbid sharing ids`;
      return { code: 'gpp', message, reason: 'gpp unreadable' };
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
