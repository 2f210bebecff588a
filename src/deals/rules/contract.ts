/**
 * The deal API's contract facts that are not about a deal's fields: how to authenticate, how often, the daily quotas
 * and the day they are counted in, and the marker written where a secret was. The client keeps under them and the
 * simulator enforces them, both from here (docs/deal-rules.md#authentication, #limits-and-quotas).
 */

/** The grant type of Auth0's password-realm extension grant, the identity provider's default grant. */
export const PASSWORD_REALM_GRANT = 'http://auth0.com/oauth/grant-type/password-realm';

/** The realm the password-realm grant names. */
export const DEFAULT_REALM = 'Username-Password-Authentication';

/** The service's authentication limit: attempts per client id and user per sliding window, successful ones included. */
export const AUTH_ATTEMPT_LIMIT = { attempts: 10, windowMs: 5 * 60_000 } as const;

/** Daily quota limits per company. */
export interface QuotaLimits {
  creationsPerDay: number;
  updatesPerDay: number;
}

/** The service's daily quotas per company: 15 creations and 500 updates, counted per UTC day. */
export const DEFAULT_QUOTAS: Readonly<QuotaLimits> = Object.freeze({ creationsPerDay: 15, updatesPerDay: 500 });

/** The UTC day (`YYYY-MM-DD`) of an instant: the day the quotas are counted in. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** Placeholder written where a secret was (the client's messages and logs, the simulator's recordings). */
export const REDACTED = '[REDACTED]';
