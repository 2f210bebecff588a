/**
 * The GDPR verdicts of a consent decoder, kept: the rule (tcf-rule.ts) worked out once per TC string and vendor
 * while the vendor lists do not change, and one refusal object per vendor and verdict shared by every call.
 */
import { tcfRefusal, tcfRuleSet, tcfVerdict } from './tcf-rule.js';
import type { TcfRules, TcfVerdict } from './tcf-rule.js';
import type { TcConsent } from './tc-string.js';
import type { ConsentRefusal } from './refusal.js';

/**
 * A decoded TC string, with the refusals worked out so far per vendor id (see `refusalOf`; null: none), for the
 * vendor lists' generation `gen`.
 */
export interface TcfView extends TcConsent {
  byVendor?: Map<number, ConsentRefusal | null>;
  gen?: number;
}

/** Vendors whose refusal is kept per cached TC string (a network has tens of partners). */
const MAX_VENDOR_VERDICTS = 64;
/** What the refusal memo of one TC string may hold (references to shared refusals), counted in its entry. */
export const VERDICT_BYTES = MAX_VENDOR_VERDICTS * 32;
/** Refusal objects kept, one per vendor and verdict (vendor ids come from partners). */
const MAX_REFUSALS = 4096;

/** The TCF verdicts of a decoder: `refusalOf(view, vendorId)` (null: a legal basis), kept on the view. */
export function createTcfVerdicts(rules: TcfRules) {
  const ruleSet = tcfRuleSet(rules);
  const gvl = rules.gvl;

  // One refusal object per vendor and verdict, shared by every call.
  const refusals = new Map<string, ConsentRefusal>();
  const refusal = (vendorId: number, verdict: TcfVerdict): ConsentRefusal => {
    const key = `${vendorId}:${verdict}`;
    let r = refusals.get(key);
    if (r) return r;
    r = tcfRefusal(vendorId, verdict, ruleSet);
    if (refusals.size < MAX_REFUSALS) refusals.set(key, r);
    return r;
  };

  /** Changes when the vendor lists change: refusals worked out before may differ now. */
  const generation = () => (gvl ? gvl.generation : 0);

  /**
   * The GDPR refusal for `vendorId` (null: a legal basis), kept on the cached view for up to 64 vendors while the
   * vendor lists do not change.
   */
  function refusalOf(view: TcfView, vendorId: number): ConsentRefusal | null {
    const gen = generation();
    if (view.gen !== gen) {
      view.gen = gen;
      view.byVendor = undefined;
    }
    const memo = (view.byVendor ??= new Map<number, ConsentRefusal | null>());
    let r = memo.get(vendorId);
    if (r === undefined) {
      const verdict = tcfVerdict(view, vendorId, ruleSet, gvl);
      r = verdict ? refusal(vendorId, verdict) : null;
      if (memo.size < MAX_VENDOR_VERDICTS) memo.set(vendorId, r);
    }
    return r;
  }

  return { refusalOf, generation };
}
