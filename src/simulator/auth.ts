/**
 * The simulator's authentication (spec 5): Auth0-style `POST /oauth/token`, `GET /authorize`, opaque expiring
 * tokens, and the limit of 10 attempts per 5 minutes per user.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { SimulatorUser } from './users.js';

/** The Auth0 password-realm grant type (domain notes: the real identity provider is Auth0). */
export const PASSWORD_REALM_GRANT = 'http://auth0.com/oauth/grant-type/password-realm';
/** The realm the password-realm grant names. */
export const REALM = 'Username-Password-Authentication';
/** The default audience the simulator expects. */
export const DEFAULT_AUDIENCE = 'https://deal-api.eidkit.test';

/** An issued token. */
interface TokenRecord {
  kind: 'access' | 'user';
  username: string;
  expiresAt: number;
}

/** Outcome of a token look-up. */
export type TokenCheck =
  | { ok: true; user: SimulatorUser }
  | { ok: false; code: 'MISSING_TOKEN' | 'INVALID_TOKEN' | 'TOKEN_EXPIRED'; message: string };

/** Compares two secrets in constant time. */
export function sameSecret(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb);
}

/** Tokens, users and the attempt limiter of one simulator. */
export class AuthService {
  private readonly tokens = new Map<string, TokenRecord>();
  private readonly attempts = new Map<string, number[]>();
  private readonly byName = new Map<string, SimulatorUser>();

  constructor(
    readonly users: readonly SimulatorUser[],
    private readonly now: () => number,
    readonly limits: { attempts: number; windowMs: number; tokenTtlSeconds: number; clientCredentialsTtlSeconds: number },
  ) {
    for (const u of users) this.byName.set(u.username.toLowerCase(), u);
  }

  /** Finds a user by username, case-insensitively. */
  user(username: string): SimulatorUser | undefined {
    return this.byName.get(username.toLowerCase());
  }

  /** True when some user authenticates with this client id. */
  knowsClient(clientId: string): boolean {
    return this.users.some((u) => u.clientId === clientId);
  }

  /** True when the secret belongs to the client id. */
  clientSecretMatches(clientId: string, secret: string): boolean {
    const u = this.users.find((x) => x.clientId === clientId);
    return !!u && sameSecret(u.clientSecret, secret);
  }

  /** Counts one attempt for `key`; returns the seconds to wait when the limit (10 per 5 minutes) is exceeded. */
  countAttempt(key: string): number | null {
    const now = this.now();
    const recent = (this.attempts.get(key) ?? []).filter((t) => t > now - this.limits.windowMs);
    if (recent.length >= this.limits.attempts) {
      this.attempts.set(key, recent);
      return Math.max(1, Math.ceil((recent[0] + this.limits.windowMs - now) / 1000));
    }
    recent.push(now);
    this.attempts.set(key, recent);
    return null;
  }

  /** Issues a token of the given kind for a user. */
  issue(kind: 'access' | 'user', user: SimulatorUser, ttlSeconds: number): string {
    const token = `sim_${kind === 'access' ? 'at' : 'ut'}_${randomBytes(24).toString('base64url')}`;
    this.tokens.set(token, { kind, username: user.username, expiresAt: this.now() + ttlSeconds * 1000 });
    return token;
  }

  /** Checks an `Authorization` header for a live token of the given kind. */
  check(header: string | undefined, kind: 'access' | 'user'): TokenCheck {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
    if (!m) return { ok: false, code: 'MISSING_TOKEN', message: 'missing "Authorization: Bearer <token>" header' };
    const rec = this.tokens.get(m[1]);
    if (!rec || rec.kind !== kind) {
      const hint = kind === 'user' ? ' (API calls need the user token from GET /authorize)' : ' (GET /authorize needs the access token from POST /oauth/token)';
      return { ok: false, code: 'INVALID_TOKEN', message: `invalid token${rec ? hint : ''}` };
    }
    if (rec.expiresAt <= this.now()) {
      this.tokens.delete(m[1]);
      return { ok: false, code: 'TOKEN_EXPIRED', message: `the ${kind} token has expired; authenticate again` };
    }
    const user = this.user(rec.username);
    if (!user) return { ok: false, code: 'INVALID_TOKEN', message: 'invalid token' };
    return { ok: true, user };
  }
}
