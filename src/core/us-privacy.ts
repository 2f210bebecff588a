/**
 * US state privacy (docs/wire-format.md#us-state-privacy): whether a GPP US section lets ids be shared with a third
 * party. One rule set for the tag's provider modules and the ad server's forwarding policy, over a section's fields
 * as the IAB's GPP library (or a consent platform's `getSection`) gives them.
 *
 * Every section is first read as the national section (`usnat`): fields the state lacks stay absent (and an absent
 * field never refuses), the newer states' names map onto the national ones, and each `SensitiveDataProcessing` entry
 * is judged by the national category it stands for. Pure and small: it ships in the tag's provider modules.
 */

/** GPP section names of the US by section id: `uspv1` (6), `usnat` (7), then the states (8 to 27). */
export const US_SECTIONS =
  'uspv1 usnat usca usva usco usut usct usfl usmt usor ustx usde usia usne usnh usnj ustn usmn usmd usin usky usri'.split(
    ' ',
  );

/** The US section name of a GPP section id, or undefined outside the US sections eidkit reads. */
export const usSectionName = (sid: number): string | undefined => US_SECTIONS[sid - 6];

/** A section's fields, by the GPP field names (`SaleOptOut`, `SensitiveDataProcessing`, …). */
export type UsFields = Record<string, unknown>;

/**
 * What each `SensitiveDataProcessing` entry is, one letter per entry: `c` a category whose processing needs the
 * user's consent (1, no consent, refuses), `x` a category that must not be processed at all (any value but 0
 * refuses), `g` precise geolocation (it governs location, not ids). The national section's 16 categories; the states
 * list theirs in the national order (the first 8 of them), except California and Oregon, which order them otherwise.
 */
const CATEGORIES = 'cccccxxgxxcxcxcx';
const STATE_CATEGORIES: Record<string, string> = { usca: 'xxgcxxxcc', usor: 'ccccxccxxxg' };

/** A field value as a number: GPP booleans (`Gpc`) as 1 and 0; anything else that is not a number as -1. */
const num = (v: unknown): number => (v === true ? 1 : v === false ? 0 : typeof v == 'number' ? v : -1);
/** A field that may be one number or a list of them, as a list. */
const list = (v: unknown): unknown[] => (v == null ? [] : ([] as unknown[]).concat(v));

/**
 * Why `fields` of US section `name` forbid sharing ids with a third party, as `Field=value` (the first reason found,
 * in a fixed order), or `''` when they allow it. `uspv1` reads like the US Privacy string (its sale opt-out `Y`, in
 * either case). An unknown section name or a version other than 1 or 2 refuses (fail closed).
 * @example usDenial('usnat', { Version: 1, MspaServiceProviderMode: 1 }) // 'MspaServiceProviderMode=1'
 */
export function usDenial(name: string, fields: UsFields): string {
  if (name == 'uspv1') return /^y$/i.test(String(fields.OptOutSale)) ? 'OptOutSale=Y' : '';
  const i = US_SECTIONS.indexOf(name);
  if (i < 1) return 'section unknown';
  // The newer states' names for the national fields.
  const f: UsFields = {
    SharingNotice: fields.ProcessingNotice,
    PersonalDataConsents: fields.AdditionalDataProcessingConsent,
    SensitiveDataProcessingOptOutNotice: fields.SensitiveDataOptOutNotice,
    Version: fields.MspaVersion,
    MspaServiceProviderMode: fields.MspaMode == 2 ? 1 : undefined,
    ...fields,
  };
  const n = (k: string) => num(f[k]);
  const version = n('Version');
  if (version != 1 && version != 2) return `Version=${String(f.Version)}`;
  // The publisher acts as a service provider (no sale, sharing or targeting), GPC, a refused consent, or a
  // transaction the MSPA cannot cover (0 is no valid value).
  for (const k of ['MspaServiceProviderMode', 'Gpc']) if (n(k) == 1) return k + '=1';
  if (n('PersonalDataConsents') == 2) return 'PersonalDataConsents=2';
  if (n('MspaCoveredTransaction') == 0) return 'MspaCoveredTransaction=0';
  // Each opt-out: opted out, its notice not given, or "did not opt out" where no notice applied.
  for (const s of ['Sale', 'Sharing', 'TargetedAdvertising']) {
    const out = n(s + 'OptOut');
    const notice = n(s + 'OptOutNotice');
    if (out == 1) return s + 'OptOut=1';
    if (notice == 2) return s + 'OptOutNotice=2';
    if (out == 2 && !notice) return `${s}OptOut=2, ${s}OptOutNotice=0`;
  }
  const sharingNotice = n('SharingNotice');
  if (sharingNotice == 2) return 'SharingNotice=2';
  if (!sharingNotice && n('SharingOptOut') == 2) return 'SharingOptOut=2, SharingNotice=0';
  // Known children: nationally, 13–16 without consent, any under-13 value, 16–17 without consent; in a state
  // section, any value but 0 (each state's consents mean "a child's data is processed").
  const kids = list(f.KnownChildSensitiveDataConsents);
  for (let k = 0; k < kids.length; k++) {
    const v = num(kids[k]);
    if (i > 1 || k == 1 ? v && kids[k] != null : v == 1)
      return `KnownChildSensitiveDataConsents[${k}]=${String(kids[k])}`;
  }
  // Sensitive data: a notice not given; a category that must not be processed; a category without consent; consent
  // claimed where no notice applied.
  let noNotice = false;
  for (const k of ['SensitiveDataProcessingOptOutNotice', 'SensitiveDataLimitUseNotice']) {
    if (n(k) == 2) return k + '=2';
    noNotice ||= !n(k);
  }
  const sensitive = list(f.SensitiveDataProcessing);
  const kinds = STATE_CATEGORIES[name] || CATEGORIES;
  for (let k = 0; k < sensitive.length; k++) {
    const v = num(sensitive[k]);
    const kind = kinds[k];
    if (kind != 'g' && ((kind == 'x' && v > 0) || v == 1 || (v == 2 && noNotice)))
      return `SensitiveDataProcessing[${k}]=${String(sensitive[k])}`;
  }
  return '';
}
