/**
 * The simulator's authentication: Auth0-style `POST /oauth/token`, `GET /authorize`, opaque expiring tokens (at
 * most `maxTokens`, expired ones swept), and the service's limit of 10 attempts per 5 minutes per client id and
 * user, successful ones included, with 10 failed attempts per source address beside it (docs/simulator.md,
 * "Authentication limit").
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { SimulatorUser } from './users.js';

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

/** The limits of {@link AttemptLimiter}. */
export interface AttemptLimits {
  /** Attempts a key may make per window. */
  attempts: number;
  /** Window length in ms (sliding: an attempt counts until `windowMs` after it). */
  windowMs: number;
  /** Most keys remembered; beyond it the keys whose last attempt is oldest are forgotten first. */
  maxKeys: number;
}

/**
 * Attempts per key in a sliding window, in bounded memory: at most `attempts` timestamps per key and `maxKeys`
 * keys. The map is kept in order of last attempt, so expired keys are dropped from its front in amortised
 * constant time, and when live keys exceed the cap the least recently seen go first.
 */
export class AttemptLimiter {
  readonly #failures = new Map<string, number[]>();

  constructor(
    private readonly now: () => number,
    readonly limits: AttemptLimits,
  ) {}

  /** Keys remembered now (at most `maxKeys`). */
  get size(): number {
    return this.#failures.size;
  }

  /** Seconds until `key` may try again, or null when it may try now. */
  waitSeconds(key: string): number | null {
    const recent = this.#recent(key);
    if (recent.length < this.limits.attempts) return null;
    return Math.max(1, Math.ceil((recent[0] + this.limits.windowMs - this.now()) / 1000));
  }

  /** Counts one attempt of `key`. */
  count(key: string): void {
    const recent = this.#recent(key);
    recent.push(this.now());
    if (recent.length > this.limits.attempts) recent.shift();
    this.#failures.delete(key); // re-inserted last: the map stays in order of last failure
    this.#failures.set(key, recent);
    this.#sweep();
  }

  /** The failures of `key` still in the window (the key is forgotten when none is). */
  #recent(key: string): number[] {
    const list = this.#failures.get(key);
    if (!list) return [];
    const since = this.now() - this.limits.windowMs;
    while (list.length && list[0] <= since) list.shift();
    if (!list.length) this.#failures.delete(key);
    return list;
  }

  /** Drops the keys whose last failure left the window, then the oldest ones over the cap. */
  #sweep(): void {
    const since = this.now() - this.limits.windowMs;
    for (const [key, list] of this.#failures) {
      if (list[list.length - 1] > since && this.#failures.size <= this.limits.maxKeys) break;
      this.#failures.delete(key);
    }
  }
}

/**
 * The key an address is counted under: an IPv4 address as is (also when IPv4-mapped), an IPv6 address by its /64
 * prefix (one host usually holds a whole /64, so counting single addresses would give it 2^64 counters), and
 * `in-process` for calls through `simulator.fetch`.
 */
export function addressKey(address: string | undefined): string {
  if (!address) return 'in-process';
  const v4 = /^(?:::ffff:)?(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  if (v4) return v4[1];
  const [head = '', tail] = address.split('%')[0].toLowerCase().split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const zeros = Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0');
  const groups = tail === undefined ? left : [...left, ...zeros, ...right];
  return `${groups
    .slice(0, 4)
    .map((g) => (parseInt(g, 16) || 0).toString(16))
    .join(':')}::/64`;
}

/** The limits of one simulator's authentication. */
export interface AuthLimits {
  /**
   * Token requests per window per client id and user, successful ones included, and failed ones per source address
   * (default 10).
   */
  attempts: number;
  /** Window length in ms (default 5 minutes). */
  windowMs: number;
  /** Source addresses remembered at most (default 10,000). */
  maxTrackedAddresses: number;
  /** Live tokens kept at most, access and user tokens together; beyond, the oldest is forgotten (default 10,000). */
  maxTokens: number;
  /** Token lifetime in seconds. */
  tokenTtlSeconds: number;
  /** Lifetime of client-credentials tokens in seconds. */
  clientCredentialsTtlSeconds: number;
}

/** Tokens, users and the attempt limiters of one simulator. */
export class AuthService {
  /** Issued tokens, oldest first. */
  private readonly tokens = new Map<string, TokenRecord>();
  private readonly byName = new Map<string, SimulatorUser>();
  /**
   * Every attempt per known client id and user, as the service counts them: bounded by the users list (the
   * attempts naming a user it does not know share one key per client id).
   */
  private readonly byLogin: AttemptLimiter;
  /** Failures per source address (IPv6 by /64): what a caller cannot choose freely, whatever names it claims. */
  readonly byAddress: AttemptLimiter;

  constructor(
    readonly users: readonly SimulatorUser[],
    private readonly now: () => number,
    readonly limits: AuthLimits,
  ) {
    for (const u of users) this.byName.set(u.username.toLowerCase(), u);
    const { attempts, windowMs } = limits;
    const clients = new Set(users.map((u) => u.clientId)).size;
    this.byLogin = new AttemptLimiter(now, { attempts, windowMs, maxKeys: users.length + 2 * clients });
    this.byAddress = new AttemptLimiter(now, { attempts, windowMs, maxKeys: limits.maxTrackedAddresses });
  }

  /**
   * The key a token request counts under with the service's limit, or undefined for a client id nobody uses
   * (counted by its address only): the client id and the user (`<client>\n<username>`, the name in lower case), one
   * key per client id for the users it does not have, and one for a client-credentials request (no user).
   */
  loginKey(clientId: string, username: string | undefined): string | undefined {
    if (!this.knowsClient(clientId)) return undefined;
    if (username === undefined) return `${clientId}\n`;
    const user = this.user(username);
    return user?.clientId === clientId ? `${clientId}\n${user.username.toLowerCase()}` : `${clientId}\n?`;
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
    // An unknown client costs the same comparison as a known one.
    return sameSecret(u?.clientSecret ?? '\0unknown', secret) && !!u;
  }

  /** Seconds to wait before the address may make a token request, or null: its failures are under the limit. */
  addressWait(address: string): number | null {
    return this.byAddress.waitSeconds(address);
  }

  /**
   * Seconds to wait before a token request under `loginKey` from `address` may be checked, or null: the longer
   * wait of the login's and the address's limits. A limited caller is refused before any secret is compared, so
   * even a right guess learns nothing.
   */
  attemptWait(loginKey: string | undefined, address: string): number | null {
    const byLogin = loginKey === undefined ? null : this.byLogin.waitSeconds(loginKey);
    const worst = Math.max(this.byAddress.waitSeconds(address) ?? 0, byLogin ?? 0);
    return worst > 0 ? worst : null;
  }

  /** Counts a token request that is checked against the service's limit, whether it then succeeds or not. */
  attempted(loginKey: string | undefined): void {
    if (loginKey !== undefined) this.byLogin.count(loginKey);
  }

  /** Counts a failed token request (refused, malformed, over size) against its source address. */
  failed(address: string): void {
    this.byAddress.count(address);
  }

  /** Issues a token of the given kind for a user; the oldest tokens go past `maxTokens`, expired ones on the way. */
  issue(kind: 'access' | 'user', user: SimulatorUser, ttlSeconds: number): string {
    const token = `sim_${kind === 'access' ? 'at' : 'ut'}_${randomBytes(24).toString('base64url')}`;
    const now = this.now();
    this.tokens.set(token, { kind, username: user.username, expiresAt: now + ttlSeconds * 1000 });
    // Oldest first: expired tokens at the front go at once, two per token issued (amortised: the map never holds
    // more expired tokens than it issued since), and past the cap the oldest live one goes too.
    for (let i = 0; i < 2; i++) {
      const [oldest, record] = this.tokens.entries().next().value!;
      if (record.expiresAt > now && this.tokens.size <= this.limits.maxTokens) break;
      this.tokens.delete(oldest);
    }
    return token;
  }

  /** Tokens held now (at most `maxTokens`). */
  get tokenCount(): number {
    return this.tokens.size;
  }

  /** Checks an `Authorization` header for a live token of the given kind. */
  check(header: string | undefined, kind: 'access' | 'user'): TokenCheck {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
    if (!m) return { ok: false, code: 'MISSING_TOKEN', message: 'missing "Authorization: Bearer <token>" header' };
    const rec = this.tokens.get(m[1]);
    if (rec?.kind !== kind) {
      const hint =
        kind === 'user'
          ? ' (API calls need the user token from GET /authorize)'
          : ' (GET /authorize needs the access token from POST /oauth/token)';
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
