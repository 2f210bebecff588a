/**
 * The two-step token flow: an identity-provider access token (`POST {authUrl}/oauth/token`), then the
 * user token (`GET {baseUrl}/authorize`). Tokens are cached until shortly before expiry, concurrent callers share
 * one refresh, and a local budget keeps the client under the service's 10 attempts per 5 minutes.
 */
import {
  AuthAttemptsExhaustedError,
  AuthenticationError,
  DealApiError,
  InvalidGrantError,
  type ErrorDetails,
} from './errors.js';
import { PASSWORD_REALM_GRANT } from '../rules/index.js';
import type { Redactor } from './redact.js';
import type { HttpRequest, HttpResponse, Logger, Transport } from './transport.js';
import { mapApiError, parseRetryAfter, type LooseBody } from './error-mapping.js';

/** The four confidential values a caller is given (username and password are not needed for client credentials). */
export interface Credentials {
  clientId: string;
  clientSecret: string;
  username?: string;
  password?: string;
}

/** The identity provider grant: Auth0's password-realm grant (default), or plain OAuth client credentials. */
export type Grant = 'password-realm' | 'client-credentials';

/** A user token with its expiry (epoch ms), as kept by a token cache. */
export interface CachedToken {
  token: string;
  expiresAt: number;
}

/**
 * Where the user token is kept between processes (the CLI uses a file only the user can read).
 * Errors thrown by a cache are logged and otherwise ignored.
 */
export interface TokenCache {
  load(): CachedToken | undefined | Promise<CachedToken | undefined>;
  save(token: CachedToken): void | Promise<void>;
  clear?(): void | Promise<void>;
}

/** The local authentication budget. */
export interface AuthBudget {
  /** Most token requests per window (default 9: the service refuses beyond 10 per 5 minutes). */
  maxAttempts?: number;
  /** Window length in ms (default 300,000). */
  windowMs?: number;
}

export interface TokenManagerSettings {
  transport: Transport;
  redactor: Redactor;
  baseUrl: URL;
  authUrl: URL;
  audience: string;
  grant: Grant;
  realm: string;
  credentials?: Credentials;
  /** A ready user token: skips the flow; a 401 on it is final. */
  token?: string;
  cache?: TokenCache;
  budget: Required<AuthBudget>;
  now: () => number;
  logger?: Logger;
  /** Refresh this long before expiry (default 60 s, at most half the lifetime). */
  refreshSkewMs: number;
}

/** Maps an identity-provider error response (`{ error, error_description }`) to a typed error. */
function mapAuthError(res: HttpResponse, req: HttpRequest, redact: (s: string) => string): DealApiError {
  const body = res.body as LooseBody;
  const code = body && typeof body === 'object' && typeof body.error === 'string' ? body.error : undefined;
  const details: ErrorDetails = {
    status: res.status,
    method: req.method,
    url: req.url.href,
    code,
    attempts: res.attempts,
    redact,
  };
  const where = `${req.method} ${req.url.pathname}`;
  // Only the identity provider's own lock-out (`too_many_attempts`) is final: any other 429 (a rate limiter in front
  // of it, an injected fault) is an ordinary rate limit, retried after its Retry-After within the local budget.
  if (code === 'too_many_attempts') {
    const wait = parseRetryAfter(res.headers.get('retry-after')) ?? 0;
    return new AuthAttemptsExhaustedError(
      `${where}: the identity provider refused: too many authentication attempts; retry in ${Math.ceil(wait / 1000)} s`,
      wait,
      details,
    );
  }
  if (code === 'invalid_grant')
    return new InvalidGrantError(
      `${where}: the identity provider refused the username or password (invalid_grant)`,
      details,
    );
  if (code === 'access_denied' || code === 'invalid_client' || code === 'unauthorized_client') {
    return new AuthenticationError(
      `${where}: the identity provider refused the client id or secret (${code})`,
      details,
    );
  }
  return mapApiError(res, req, redact);
}

/** The `exp` claim (epoch ms) of a JWT, if the token is one. */
function jwtExpiry(token: string): number | undefined {
  const parts = token.split('.');
  if (parts.length !== 3) return undefined;
  try {
    const exp = (JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8')) as { exp?: unknown } | null)?.exp;
    return typeof exp === 'number' ? exp * 1000 : undefined;
  } catch {
    return undefined;
  }
}

/** Obtains, caches and refreshes the user token for one client. */
export class TokenManager {
  readonly #s: TokenManagerSettings;
  #user?: CachedToken;
  #access?: CachedToken;
  #inflight?: Promise<string>;
  #loaded = false;
  #attempts: number[] = [];
  /** Set when the credentials were refused: they will not become right, so nothing more is sent. */
  #fatal?: DealApiError;
  /** Counters, for tests and diagnostics. */
  readonly stats = { tokenRequests: 0, authorizeRequests: 0 };

  constructor(settings: TokenManagerSettings) {
    this.#s = settings;
    settings.redactor.add(settings.credentials?.password);
    settings.redactor.add(settings.credentials?.clientSecret);
    settings.redactor.add(settings.token);
    if (settings.token) this.#user = { token: settings.token, expiresAt: Infinity };
  }

  /** A valid user token: the cached one, or a fresh one shared by every concurrent caller. */
  getToken(): Promise<string> {
    const user = this.#user;
    if (user && this.#fresh(user)) return Promise.resolve(user.token);
    return (this.#inflight ??= this.#refresh().finally(() => {
      this.#inflight = undefined;
    }));
  }

  /** Forgets `token` after the service refused it (a newer token obtained meanwhile is kept). */
  invalidate(token: string): void {
    if (this.#s.token) return;
    if (this.#user?.token === token) {
      this.#user = undefined;
      void Promise.resolve(this.#s.cache?.clear?.()).catch(() => undefined);
    }
  }

  /** Milliseconds until the next token request fits the local budget (0 = now). */
  budgetWaitMs(): number {
    const { maxAttempts, windowMs } = this.#s.budget;
    const now = this.#s.now();
    this.#attempts = this.#attempts.filter((t) => t > now - windowMs);
    return this.#attempts.length < maxAttempts ? 0 : this.#attempts[0] + windowMs - now;
  }

  #fresh(t: CachedToken): boolean {
    return this.#s.now() < t.expiresAt;
  }

  async #refresh(): Promise<string> {
    if (this.#s.token) {
      throw new AuthenticationError('the fixed user token given to the client was refused; obtain a new one', {
        redact: this.#s.redactor.redact,
      });
    }
    if (!this.#loaded && this.#s.cache) {
      this.#loaded = true;
      try {
        const cached = await this.#s.cache.load();
        if (cached && typeof cached.token === 'string' && this.#fresh(cached)) {
          this.#s.redactor.add(cached.token);
          this.#user = cached;
          return cached.token;
        }
      } catch (err) {
        this.#s.logger?.warn?.(
          this.#s.redactor.redact(`token cache could not be read: ${(err as Error)?.message ?? err}`),
        );
      }
    }
    if (this.#fatal) throw this.#fatal;
    const reused = this.#access !== undefined && this.#fresh(this.#access);
    let access = reused ? this.#access! : await this.#requestAccessToken();
    let user: CachedToken;
    try {
      user = await this.#authorize(access);
    } catch (err) {
      // A cached access token refused by /authorize (revoked, expired early) is replaced once; a fresh one is final.
      if (!reused || !(err instanceof AuthenticationError) || err instanceof AuthAttemptsExhaustedError) throw err;
      this.#access = undefined;
      access = await this.#requestAccessToken();
      user = await this.#authorize(access);
    }
    this.#user = user;
    if (this.#s.cache) {
      try {
        await this.#s.cache.save(user);
      } catch (err) {
        this.#s.logger?.warn?.(
          this.#s.redactor.redact(`token cache could not be written: ${(err as Error)?.message ?? err}`),
        );
      }
    }
    return user.token;
  }

  #expiry(lifetimeMs: number): number {
    const skew = Math.min(this.#s.refreshSkewMs, lifetimeMs / 2);
    return this.#s.now() + lifetimeMs - skew;
  }

  async #requestAccessToken(): Promise<CachedToken> {
    const { credentials, grant, realm, audience, authUrl, budget } = this.#s;
    const redact = this.#s.redactor.redact;
    if (!credentials?.clientId || !credentials.clientSecret) {
      throw new AuthenticationError(
        'no credentials: give clientId and clientSecret (and username and password for the password-realm grant)',
        { redact, attempts: 0 },
      );
    }
    if (grant === 'password-realm' && (!credentials.username || !credentials.password)) {
      throw new AuthenticationError('the password-realm grant needs credentials.username and credentials.password', {
        redact,
        attempts: 0,
      });
    }
    // Every HTTP attempt, retries included, spends budget: the service counts what reaches it.
    const spend = () => {
      const wait = this.budgetWaitMs();
      if (wait > 0) {
        throw new AuthAttemptsExhaustedError(
          `local authentication budget spent (${budget.maxAttempts} attempts per ${Math.round(budget.windowMs / 1000)} s); retry in ${Math.ceil(wait / 1000)} s`,
          wait,
          { redact, attempts: 0 },
        );
      }
      this.#attempts.push(this.#s.now());
      this.stats.tokenRequests++;
    };
    const form = new URLSearchParams({
      grant_type: grant === 'password-realm' ? PASSWORD_REALM_GRANT : 'client_credentials',
    });
    if (grant === 'password-realm') {
      form.set('realm', realm);
      form.set('username', credentials.username!);
      form.set('password', credentials.password!);
    }
    form.set('audience', audience);
    form.set('client_id', credentials.clientId);
    form.set('client_secret', credentials.clientSecret);
    const url = new URL('oauth/token', authUrl);
    let res: HttpResponse;
    try {
      // A token request changes nothing but the attempt count, so transient failures are retried within the budget.
      res = await this.#s.transport.send({
        method: 'POST',
        url,
        form,
        retry: 'idempotent',
        beforeAttempt: spend,
        mapError: (r, q) => mapAuthError(r, q, redact),
      });
    } catch (err) {
      if (err instanceof AuthenticationError && !(err instanceof AuthAttemptsExhaustedError)) this.#fatal = err;
      if (err instanceof AuthAttemptsExhaustedError) {
        // The server's window is authoritative: fill the local budget until it reopens.
        const now = this.#s.now();
        const reopen = now + err.retryAfterMs - budget.windowMs;
        this.#attempts = Array.from({ length: budget.maxAttempts }, () => reopen);
      }
      throw err;
    }
    const body = res.body as { access_token?: unknown; expires_in?: unknown } | null | undefined;
    if (!body || typeof body.access_token !== 'string') {
      throw new AuthenticationError(`POST ${url.pathname}: the identity provider answered without an access_token`, {
        redact,
        status: res.status,
      });
    }
    this.#s.redactor.add(body.access_token);
    const lifetimeMs = (Number(body.expires_in) > 0 ? Number(body.expires_in) : 36_000) * 1000;
    this.#access = { token: body.access_token, expiresAt: this.#expiry(lifetimeMs) };
    return this.#access;
  }

  async #authorize(access: CachedToken): Promise<CachedToken> {
    const redact = this.#s.redactor.redact;
    const url = new URL('authorize', this.#s.baseUrl);
    this.stats.authorizeRequests++;
    const res = await this.#s.transport.send({
      method: 'GET',
      url,
      // The service answers the user token as text/plain (JSON `{ token }` is read too): a request that accepts
      // only JSON is refused with 406 by a validating proxy.
      headers: { accept: 'text/plain, application/json;q=0.9' },
      retry: 'idempotent',
      token: async () => access.token,
    });
    const answer = res.body as string | { token?: unknown } | null | undefined;
    const token = typeof answer === 'string' ? answer.trim() : typeof answer?.token === 'string' ? answer.token : '';
    if (!token)
      throw new AuthenticationError(`GET ${url.pathname}: the service answered without a user token`, {
        redact,
        status: res.status,
      });
    this.#s.redactor.add(token);
    // The user token is valid 10 hours; a JWT's own `exp` wins, and it is never kept past the access token.
    const jwtExp = jwtExpiry(token);
    const lifetimeMs = jwtExp !== undefined ? jwtExp - this.#s.now() : 36_000_000;
    return { token, expiresAt: Math.min(this.#expiry(lifetimeMs), access.expiresAt) };
  }
}
