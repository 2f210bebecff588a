/** Documented exit codes of the `eidkit` CLI (docs/deals.md "CLI exit codes"). */
export const EXIT = {
  /** Success. */
  OK: 0,
  /** Anything unexpected. */
  ERROR: 1,
  /** Bad command line: unknown command or option, missing argument. */
  USAGE: 2,
  /** Input refused by validation (a deal, an ad call that cannot be decoded). */
  VALIDATION: 3,
  /** Authentication failed: wrong credentials, expired token, auth attempts exhausted. */
  AUTH: 4,
  /** The API answered with an error (forbidden, not found, quota, rate limit). */
  API: 5,
  /** Network failure or timeout. */
  NETWORK: 6,
  /**
   * `deals plan --detailed-exitcode`: there are changes to apply; `deals apply`: work is left for a later day (daily
   * quota).
   */
  CHANGES: 7,
  /** `deals apply --skip-invalid`: some changes applied, some invalid deals skipped. */
  PARTIAL: 8,
} as const;
