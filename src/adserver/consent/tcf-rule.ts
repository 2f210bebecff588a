/**
 * The GDPR rule for one vendor under a decoded TC string (docs/wire-format.md "Consent signals and rules", "Global
 * Vendor List"), as pure functions: the verdict (its legal bases per purpose, within the publisher's restrictions
 * and, with a Global Vendor List, the vendor's declarations) and the refusal that states it. What is kept between
 * calls is in tcf-verdict.ts.
 */
import { hasId } from './id-ranges.js';
import type { TcConsent } from './tc-string.js';
import type { VendorListSource } from './gvl.js';
import type { ConsentRefusal } from './refusal.js';

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

/** {@link TcfRules} with their defaults applied, as the verdict reads them. */
export interface TcfRuleSet {
  /** `purposes`, sorted, without repeats. */
  purposeList: readonly number[];
  /** `purposes` as bits, bit `p` for purpose `p`. */
  purposeMask: number;
  /** `requiredPurposes`, sorted, without repeats. */
  required: readonly number[];
  li: boolean;
  gvlFallback: 'refuse' | 'tc-string';
  gvlVersionMissing: 'refuse' | 'newest';
  requireDisclosed: boolean;
}

/** The rules with their defaults applied. */
export function tcfRuleSet(rules: TcfRules): TcfRuleSet {
  const purposeList = [...new Set(rules.purposes ?? [2, 3, 4, 5, 6, 7, 8, 9, 10])]
    .filter((p) => p > 0 && p < 32)
    .sort((a, b) => a - b);
  return {
    purposeList,
    purposeMask: purposeList.reduce((m, p) => m | (1 << p), 0),
    required: [...new Set(rules.requiredPurposes ?? [2])].filter((p) => p > 0 && p < 32).sort((a, b) => a - b),
    li: rules.legitimateInterest ?? true,
    gvlFallback: rules.gvlFallback ?? 'refuse',
    gvlVersionMissing: rules.gvlVersionMissing ?? 'refuse',
    requireDisclosed: rules.requireDisclosedVendors ?? true,
  };
}

/** What the verdict asks of the vendor lists: the list of a version, the newest one held. */
export type VendorLists = Pick<VendorListSource, 'list' | 'latest'>;

/**
 * The GDPR verdict for one vendor, one number: 0 a legal basis, else a kind (below) + 32 × the purpose it names +
 * 1,024 × the list version it names.
 */
export type TcfVerdict = number;
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
 * TCF's legal bases, per purpose: the vendor's consent with the purpose's consent, or (when allowed, and not for
 * purposes 1 and 3 to 6) the vendor's legitimate interest with the purpose's. With a Global Vendor List, only on
 * the basis the vendor declares there: consent for its `purposes`, legitimate interest for its `legIntPurposes`,
 * either for its `flexiblePurposes`; a vendor absent from or deleted in the list (the version the TC string names,
 * or the newest) has none. The publisher's restrictions that name the vendor all hold: a purpose not allowed has
 * no basis, consent only takes away legitimate interest, legitimate interest only takes away consent (both: no
 * basis). Each of `requiredPurposes` and at least one of `purposes` need a basis. 0: a legal basis; else a
 * kind + 32 × the purpose it names + 1,024 × the list version it names. `gvl` (absent: no list checked) is only
 * asked, never changed (a loader may start a download in the background when a version is missing).
 */
export function tcfVerdict(tcf: TcConsent, vendorId: number, rules: TcfRuleSet, gvl?: VendorLists): TcfVerdict {
  const { purposeMask, required, li, gvlFallback, gvlVersionMissing, requireDisclosed } = rules;
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
  const why = (wanted: number, p: number): TcfVerdict => {
    const lost = (byConsent | byLI) & wanted;
    if (lost) {
      // The lowest purpose the string allows and the list does not, on the basis the string gives it.
      const q = 31 - Math.clz32(lost & -lost);
      const kind = !(declared & (1 << q)) ? GVL_UNDECLARED : byConsent & (1 << q) ? GVL_NOT_ON_CONSENT : GVL_NOT_ON_LI;
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

/** The refusal stating a verdict other than 0, for `vendorId`. */
export function tcfRefusal(vendorId: number, verdict: TcfVerdict, rules: TcfRuleSet): ConsentRefusal {
  const { purposeList } = rules;
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
  return { code: 'gdpr', message: `GDPR applies: ${message}`, reason };
}
