/**
 * Consent rules: pure functions over a {@link ConsentState}, shared by the
 * built-in consent reader and every provider module.
 * See docs/wire-format.md#consent-signals-and-rules.
 */
import type { ConsentState } from './extension.js';

/** TCF Global Vendor List id of the ad service itself. */
export const AD_SERVICE_GVL = 45;

/** A consent map or an id list as `yes` reads it: an entry by id, or `includes` (lists only). */
interface IdMap {
  [id: number]: unknown;
  includes?: (id: number) => boolean;
}

// TCF gives `{ id: true }` maps; GPP's EU section gives vendors as a list of ids (consent.ts).
const yes = (map: Record<string, boolean> | boolean[] | number[] | undefined, id: number) =>
  !!map && ((map as IdMap)[id] === true || !!(map as IdMap).includes?.(id));

/**
 * True when a provider module with TCF vendor id `gvl` may touch storage, scrape the page and send its id:
 * every consent platform on the page has answered; US privacy allows sharing ids (`usDenial` empty: GPP US
 * sections, GPC; and no US Privacy opt-out of sale); and, where GDPR
 * applies, a consent string with purpose 1 (store/access device) and the vendor's consent.
 * @example
 * const consent = { ready: true, gdprApplies: true, tcString: 'C…', purposes: { 1: true }, vendors: { 131: true } };
 * mayRunModule(consent, 131); // true
 */
export function mayRunModule(c: ConsentState, gvl: number): boolean {
  if (!c.ready || c.usDenial || optedOutByUsp(c)) return false;
  if (c.gdprApplies !== true) return true;
  return !!c.tcString && yes(c.purposes, 1) && yes(c.vendors, gvl);
}

/** US Privacy: a valid string whose third character `Y` (either case) is an opt-out of sale (`1YYN`). */
export const optedOutByUsp = (c: ConsentState): boolean => /^1[yn-]y[yn-]$/i.test(c.usPrivacy || '');

/**
 * True when eids may go on the call at all. Where GDPR applies that needs a legal basis (consent or legitimate
 * interest) for the ad service (vendor 45) and for at least one of purposes 2–10; a consent platform that is on
 * the page but has not answered gives no basis.
 */
export function hasLegalBasis(c: ConsentState): boolean {
  if (!c.ready) return false;
  if (c.gdprApplies !== true) return true;
  if (!c.tcString || !(yes(c.vendors, AD_SERVICE_GVL) || yes(c.vendorLI, AD_SERVICE_GVL))) return false;
  for (let p = 2; p <= 10; p++) if (yes(c.purposes, p) || yes(c.purposeLI, p)) return true;
  return false;
}

/**
 * The consent signals every ad call carries: `gdpr`, `gdpr_consent`, `gpp`, `gpp_sid`, `us_privacy`, `gpc` (those
 * known).
 */
export function consentParams(c: ConsentState): Record<string, string> {
  const p: Record<string, string> = {};
  if (c.gdprApplies !== undefined) p.gdpr = c.gdprApplies ? '1' : '0';
  if (c.tcString) p.gdpr_consent = c.tcString;
  if (c.gppString) p.gpp = c.gppString;
  if (c.gppSid?.length) p.gpp_sid = c.gppSid.join();
  if (c.usPrivacy) p.us_privacy = c.usPrivacy;
  if (c.gpc) p.gpc = '1';
  return p;
}
