/** What a consent refusal says (decoder.ts for the US signals, tcf-verdict.ts for GDPR). */

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
