/** What a consent refusal says (decoder.ts for the US signals, tcf-rule.ts for GDPR). */

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
