/**
 * DealApiClient: the deal management API (docs/deal-rules.md) from Node. It wires the transport,
 * the tokens and the hooks, and composes the resources (deals.ts, lookups.ts) that hold the operations.
 */
import { inspect } from 'node:util';
import type { DealReference } from '../rules/index.js';
import { DEFAULT_REALM, AUTH_ATTEMPT_LIMIT, REDACTED } from '../rules/index.js';
import { TokenManager, type AuthBudget, type Credentials, type Grant, type TokenCache } from './auth.js';
import { ForbiddenError } from './errors.js';
import { Redactor } from './redact.js';
import { Hooks, type ClientEvents, type ClientListener } from './hooks.js';
import { Transport, type HttpRequest, type HttpResponse, type Logger, type RetryOptions } from './transport.js';
import type { ClientCore, Prepared } from './core.js';
import { DealsResource } from './deals.js';
import { LookupsResource } from './lookups.js';

/** Options of {@link DealApiClient}. */
export interface DealApiClientOptions {
  /** The service base address (`{base_url}`), e.g. `https://api.example.com/v1/`. */
  baseUrl: string | URL;
  /** The identity provider address (`{auth_url}`); required unless `token` is given. */
  authUrl?: string | URL;
  /** The audience string given to the caller with the credentials. */
  audience?: string;
  /** client id and secret, plus username and password for the password-realm grant. Kept out of every output. */
  credentials?: Credentials;
  /** `password-realm` (default, docs/deal-rules.md#authentication) or `client-credentials`. */
  grant?: Grant;
  /** The password-realm realm (default `Username-Password-Authentication`). */
  realm?: string;
  /** A ready user token; no token flow is run (a 401 is then final). */
  token?: string;
  /** Keeps the user token between processes. */
  tokenCache?: TokenCache;
  /** A fetch implementation (default: the global one); the simulator's in-process fetch works. */
  fetch?: typeof fetch;
  /** Per-attempt timeout in ms (default 30,000). */
  timeoutMs?: number;
  /** Retries: a count, or the full settings (default 3 retries, 500 ms base, 8 s cap, Retry-After up to 60 s). */
  retries?: number | RetryOptions;
  /** Receives one line per request, retry and token refresh; secrets are scrubbed first. */
  logger?: Logger;
  /** Pages fetched at once when listing (default 10; 1 = follow `Link: next` one page at a time). */
  concurrency?: number;
  /** The local authentication budget (default 9 token requests per 5 minutes). */
  authBudget?: AuthBudget;
  /**
   * Before each write, fetch the DSPs, buyers and identity providers the deal names so the rules that depend on
   * them run client-side too (default true). Pure rules always run first, with no request at all.
   */
  referenceChecks?: boolean;
  /** The clock (ms since the epoch), for tests. */
  now?: () => number;
  /** Jitter source, for tests. */
  random?: () => number;
  /** Refresh tokens this long before they expire (default 60,000 ms). */
  refreshSkewMs?: number;
  /** User-Agent header (default `eidkit-deals/<version>`). */
  userAgent?: string;
}

const VERSION = '0.1.0';
const REFERENCE_TTL_MS = 10 * 60_000;

function toUrl(value: string | URL, what: string): URL {
  let url: URL;
  try {
    url = new URL(String(value));
  } catch {
    throw new TypeError(`${what} must be an absolute URL`);
  }
  if (!url.pathname.endsWith('/')) url.pathname += '/';
  url.search = '';
  url.hash = '';
  return url;
}

/**
 * The deal management API client.
 *
 * @example
 * import { DealApiClient } from 'eidkit/deals';
 * const client = new DealApiClient({
 *   baseUrl: process.env.DEALS_BASE_URL, authUrl: process.env.DEALS_AUTH_URL, audience: process.env.DEALS_AUDIENCE,
 *   credentials: { clientId, clientSecret, username, password },
 * });
 * for await (const deal of client.deals.list()) console.log(deal.id, deal.name);
 */
export class DealApiClient implements ClientCore {
  /** Deal operations. */
  readonly deals: DealsResource;
  /** Reference lookups. */
  readonly lookups: LookupsResource;
  /** The service base address. */
  readonly baseUrl: URL;
  /** The identity provider address. */
  readonly authUrl?: URL;
  /** Pages fetched at once when listing. */
  readonly concurrency: number;
  /** Whether writes look up DSPs, buyers and identity providers for the rules first. */
  readonly referenceChecks: boolean;

  readonly #redactor = new Redactor();
  readonly #transport: Transport;
  readonly #tokens: TokenManager;
  readonly #now: () => number;
  readonly #logger?: Logger;
  readonly #grant: Grant;
  readonly #referenceCache = new Map<string, { at: number; item: unknown }>();
  readonly #hooks = new Hooks((event, err) =>
    this.log('warn', `a '${event}' listener threw: ${(err as Error)?.message ?? err}`),
  );
  /** @internal Retries after the first attempt (also the recoveries of a keyed create). */
  readonly maxRetries: number;

  constructor(options: DealApiClientOptions) {
    if (!options?.baseUrl) throw new TypeError('DealApiClient needs { baseUrl }');
    this.baseUrl = toUrl(options.baseUrl, 'baseUrl');
    if (options.authUrl) this.authUrl = toUrl(options.authUrl, 'authUrl');
    if (!options.token && !this.authUrl) throw new TypeError('DealApiClient needs { authUrl } (or a ready { token })');
    this.#now = options.now ?? Date.now;
    this.#logger = options.logger;
    this.#grant = options.grant ?? 'password-realm';
    this.concurrency = options.concurrency ?? 10;
    this.referenceChecks = options.referenceChecks ?? true;
    const retries = typeof options.retries === 'number' ? { maxRetries: options.retries } : (options.retries ?? {});
    this.maxRetries = retries.maxRetries ?? 3;
    const fetchImpl = options.fetch ?? globalThis.fetch;
    if (typeof fetchImpl !== 'function') throw new TypeError('no fetch: pass { fetch } on this runtime');
    this.#transport = new Transport({
      fetch: fetchImpl,
      timeoutMs: options.timeoutMs ?? 30_000,
      retry: {
        maxRetries: retries.maxRetries ?? 3,
        baseDelayMs: retries.baseDelayMs ?? 500,
        maxDelayMs: retries.maxDelayMs ?? 8_000,
        maxRetryAfterMs: retries.maxRetryAfterMs ?? 60_000,
      },
      logger: options.logger,
      redactor: this.#redactor,
      userAgent: options.userAgent ?? `eidkit-deals/${VERSION} node/${process.versions.node}`,
      random: options.random,
      hooks: this.#hooks,
    });
    this.#tokens = new TokenManager({
      transport: this.#transport,
      redactor: this.#redactor,
      baseUrl: this.baseUrl,
      authUrl: this.authUrl ?? this.baseUrl,
      audience: options.audience ?? '',
      grant: this.#grant,
      realm: options.realm ?? DEFAULT_REALM,
      credentials: options.credentials ? { ...options.credentials } : undefined,
      token: options.token,
      cache: options.tokenCache,
      budget: {
        // One under the service's limit, so the client is refused by its own budget, never by the service.
        maxAttempts: options.authBudget?.maxAttempts ?? AUTH_ATTEMPT_LIMIT.attempts - 1,
        windowMs: options.authBudget?.windowMs ?? AUTH_ATTEMPT_LIMIT.windowMs,
      },
      now: this.#now,
      logger: options.logger,
      refreshSkewMs: options.refreshSkewMs ?? 60_000,
    });
    this.deals = new DealsResource(this);
    this.lookups = new LookupsResource(this);
  }

  /**
   * Listens to every HTTP attempt: `request` (method, url, attempt), `response` (+ status or error, elapsedMs) and
   * `retry` (+ status, error, delayMs, elapsedMs). URLs are scrubbed; no header or body is ever passed.
   * @example
   * client.on('response', (e) => metrics.timing('deal_api', e.elapsedMs, { method: e.method, status: e.status }));
   */
  on<E extends keyof ClientEvents>(event: E, listener: ClientListener<E>): this {
    this.#hooks.on(event, listener);
    return this;
  }

  /** Removes a listener added with {@link on}. */
  off<E extends keyof ClientEvents>(event: E, listener: ClientListener<E>): this {
    this.#hooks.off(event, listener);
    return this;
  }

  /** Obtains (or returns the cached) user token; `eidkit login` uses it. */
  async authenticate(): Promise<void> {
    await this.#tokens.getToken();
  }

  /** Token and authorize request counts, for diagnostics. */
  get authStats(): { tokenRequests: number; authorizeRequests: number } {
    return { ...this.#tokens.stats };
  }

  /** @internal The clock. */
  now(): number {
    return this.#now();
  }

  /** @internal Scrubs secrets from text. */
  get redact(): (text: string) => string {
    return this.#redactor.redact;
  }

  /** @internal Writes a scrubbed log line. */
  log(level: keyof Logger, message: string): void {
    // eslint-disable-next-line @typescript-eslint/unbound-method -- called with the logger as `this` below
    const fn = this.#logger?.[level];
    if (typeof fn === 'function') fn.call(this.#logger, this.#redactor.redact(message));
  }

  /** @internal An authenticated request to the service. */
  request(req: Omit<HttpRequest, 'token' | 'onUnauthorized'>): Promise<HttpResponse> {
    return this.#transport.send({
      ...req,
      token: () => this.#tokens.getToken(),
      onUnauthorized: (t) => this.#tokens.invalidate(t),
    });
  }

  /** @internal Sends a prepared write. */
  send(p: Prepared, signal?: AbortSignal): Promise<HttpResponse> {
    return this.request({
      method: p.method,
      url: p.url,
      headers: p.headers,
      json: p.json,
      retry: p.retry,
      keepCutBody: p.keepCutBody,
      signal,
    });
  }

  /** @internal The reference items a deal names (DSPs, buyers of a guaranteed deal, its identity provider). */
  async reference(deal: Record<string, unknown>, signal?: AbortSignal): Promise<DealReference> {
    const wanted: [Extract<keyof DealReference, string>, number[]][] = [];
    const ids = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is number => Number.isSafeInteger(x)) : []);
    if (ids(deal.dspIds).length) wanted.push(['dsps', ids(deal.dspIds)]);
    if (deal.pricingModel === 3 && ids(deal.buyerIds).length) wanted.push(['buyers', ids(deal.buyerIds)]);
    if (Number.isSafeInteger(deal.identityProviderId))
      wanted.push(['identityProviders', [deal.identityProviderId as number]]);
    const reference: DealReference = {};
    await Promise.all(
      wanted.map(async ([resource, list]) => {
        const items: { id: number }[] = [];
        const missing: number[] = [];
        for (const id of list) {
          const hit = this.#referenceCache.get(`${resource}:${id}`);
          if (hit && this.#now() - hit.at < REFERENCE_TTL_MS) items.push(hit.item as { id: number });
          else missing.push(id);
        }
        if (missing.length) {
          try {
            for await (const item of this.lookups.list<{ id: number }>(resource, { ids: missing, signal })) {
              this.#referenceCache.set(`${resource}:${item.id}`, { at: this.#now(), item });
              items.push(item);
            }
          } catch (err) {
            // DSP callers may not read identity providers (docs/deal-rules.md#dsp-callers): the service checks.
            if (!(err instanceof ForbiddenError)) throw err;
          }
        }
        (reference as Record<string, unknown>)[resource] = items;
      }),
    );
    return reference;
  }

  /** A secret-free description. */
  toJSON(): Record<string, unknown> {
    return { baseUrl: this.baseUrl.href, authUrl: this.authUrl?.href, grant: this.#grant, credentials: REDACTED };
  }

  [inspect.custom](): string {
    return `DealApiClient ${inspect(this.toJSON())}`;
  }
}
