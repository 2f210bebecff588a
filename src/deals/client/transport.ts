/**
 * The one place that calls `fetch`: timeout per attempt, retries with backoff and jitter that honour
 * `Retry-After`, one token refresh and replay on 401, every failure as a typed error (how an error response or a
 * network error reads: ./error-mapping.ts), and logging.
 */
import { AuthAttemptsExhaustedError, ConnectionError, DealApiError, RateLimitedError, TimeoutError } from './errors.js';
import type { Redactor } from './redact.js';
import { errorCodes, mapApiError, networkWhy, pathOf, type LooseError } from './error-mapping.js';
import type { Hooks } from './hooks.js';
import { sleep } from './sleep.js';

/** A console-compatible logger; every line it receives is already scrubbed of secrets. */
export interface Logger {
  debug?(message: string): void;
  info?(message: string): void;
  warn?(message: string): void;
  error?(message: string): void;
}

/** How failed requests are retried. */
export interface RetryOptions {
  /** Retries after the first attempt (default 3; 0 disables retries). */
  maxRetries?: number;
  /** First backoff step in ms (default 500); doubles per retry, full jitter. */
  baseDelayMs?: number;
  /** Largest backoff in ms (default 8,000). */
  maxDelayMs?: number;
  /** Longest `Retry-After` the client waits for (default 60,000 ms); longer ones raise RateLimitedError at once. */
  maxRetryAfterMs?: number;
}

/**
 * Which failures a request may be retried on.
 * - `idempotent` (GET, PUT, DELETE): network errors, timeouts, 408, 429, 502–504.
 * - `unsent-only` (create): only failures that prove the service did not act — no connection established, or an
 *   explicit 429 rate limit. The API has no idempotency key and creations are capped at 15 a day.
 * - `none`.
 */
export type RetryPolicy = 'idempotent' | 'unsent-only' | 'none';

/** One request as the client describes it. */
export interface HttpRequest {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  url: URL;
  headers?: Record<string, string>;
  /** A JSON body (serialised here) … */
  json?: unknown;
  /** … or a form body. */
  form?: URLSearchParams;
  retry: RetryPolicy;
  signal?: AbortSignal;
  /** Supplies the bearer token for each attempt (the user token, or a fixed one). */
  token?: () => Promise<string>;
  /** Called once with the refused token on a 401; the request is then replayed once with a fresh token. */
  onUnauthorized?: (token: string) => void;
  /** Runs before every attempt (retries included); throwing stops the request. */
  beforeAttempt?: () => void;
  /** Maps an error response to an error (defaults to the deal API's mapping). */
  mapError?: (res: HttpResponse, req: HttpRequest) => DealApiError;
  /**
   * A 2xx whose body then fails to arrive (connection dropped, timeout) still resolves, with `bodyCut` set: for a
   * create, the status and `Location` already say the deal exists.
   */
  keepCutBody?: boolean;
}

/** A response whose status was 2xx (or any status, when given to `mapError`). */
export interface HttpResponse {
  status: number;
  statusText: string;
  headers: Headers;
  /** Parsed JSON when the body was JSON, else the text ('' when empty). */
  body: unknown;
  /** HTTP attempts made, retries and replay included. */
  attempts: number;
  /** True when the status and headers arrived but the body did not (only with `keepCutBody`); `body` is then ''. */
  bodyCut?: boolean;
}

/** Settings shared by every request of one client. */
export interface TransportSettings {
  fetch: typeof fetch;
  timeoutMs: number;
  retry: Required<RetryOptions>;
  logger?: Logger;
  redactor: Redactor;
  userAgent: string;
  /** Injected for tests. */
  random?: () => number;
  /** The client's `request` / `response` / `retry` listeners. */
  hooks?: Hooks;
}

/** The codes that mean the TCP connection was never established, so the request cannot have been acted on. */
const NEVER_CONNECTED = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);
const RETRY_STATUSES = new Set([408, 429, 502, 503, 504]);

async function readBody(res: Response): Promise<unknown> {
  const text = await res.text();
  if (!text) return '';
  const type = res.headers.get('content-type') ?? '';
  if (type.includes('json') || text.startsWith('{') || text.startsWith('[')) {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }
  return text;
}

/** Sends requests; one instance per client. */
export class Transport {
  readonly #s: TransportSettings;

  constructor(settings: TransportSettings) {
    this.#s = settings;
  }

  #log(level: keyof Logger, message: string): void {
    // eslint-disable-next-line @typescript-eslint/unbound-method -- called with the logger as `this` below
    const fn = this.#s.logger?.[level];
    if (typeof fn === 'function') fn.call(this.#s.logger, this.#s.redactor.redact(message));
  }

  /** Backoff for retry number `retry` (0-based): full jitter over an exponential ceiling. */
  #backoff(retry: number): number {
    const { baseDelayMs, maxDelayMs } = this.#s.retry;
    const ceiling = Math.min(maxDelayMs, baseDelayMs * 2 ** retry);
    return Math.round((this.#s.random ?? Math.random)() * ceiling);
  }

  /** Sends the request with retries; resolves with a 2xx response or rejects with a DealApiError. */
  async send(req: HttpRequest): Promise<HttpResponse> {
    const redact = this.#s.redactor.redact;
    const { maxRetries, maxRetryAfterMs } = this.#s.retry;
    let attempts = 0;
    let retries = 0;
    let replayed = false;
    const started = performance.now();
    for (;;) {
      const token = req.token ? await req.token() : undefined;
      req.beforeAttempt?.();
      attempts++;
      let outcome: HttpResponse | DealApiError;
      try {
        outcome = await this.#attempt(req, token, attempts);
      } catch (err) {
        if (req.signal?.aborted) throw req.signal.reason ?? err;
        throw err;
      }
      if (!(outcome instanceof DealApiError) && outcome.status < 300) return outcome;

      let error: DealApiError;
      if (outcome instanceof DealApiError) error = outcome;
      else {
        if (outcome.status === 401 && token !== undefined && req.onUnauthorized && !replayed) {
          // One refresh and one replay, never a loop (a second 401 is final).
          replayed = true;
          req.onUnauthorized(token);
          this.#log('info', `${req.method} ${pathOf(req.url)} got 401; refreshing the token and replaying once`);
          continue;
        }
        error = (req.mapError ?? ((r, q) => mapApiError(r, q, redact)))(outcome, req);
      }

      const retryAfterMs = (error as Partial<RateLimitedError>).retryAfterMs;
      if (retries >= maxRetries || !this.#retriable(req.retry, error)) throw error;
      if (retryAfterMs !== undefined && retryAfterMs > maxRetryAfterMs) {
        this.#log(
          'warn',
          `${req.method} ${pathOf(req.url)}: Retry-After ${retryAfterMs} ms exceeds the ${maxRetryAfterMs} ms cap; giving up`,
        );
        throw error;
      }
      const delay = retryAfterMs ?? this.#backoff(retries);
      retries++;
      if (this.#s.hooks?.active)
        this.#s.hooks.emit('retry', {
          method: req.method,
          url: redact(req.url.href),
          attempt: attempts,
          ...(error.status !== undefined ? { status: error.status } : {}),
          error: error.name,
          delayMs: delay,
          elapsedMs: Math.round(performance.now() - started),
        });
      this.#log(
        'warn',
        `${req.method} ${pathOf(req.url)} failed (${error.status ?? error.name}); retry ${retries} of ${maxRetries} in ${delay} ms`,
      );
      await sleep(delay, req.signal);
    }
  }

  #retriable(policy: RetryPolicy, error: DealApiError): boolean {
    if (policy === 'none') return false;
    const rateLimited = error instanceof RateLimitedError && !(error as RateLimitedError & { quota?: unknown }).quota;
    if (error instanceof AuthAttemptsExhaustedError) return false;
    if (policy === 'unsent-only') {
      return (error instanceof ConnectionError && !error.mayHaveReachedServer) || (rateLimited && error.status === 429);
    }
    if (error instanceof ConnectionError || error instanceof TimeoutError) return true;
    if (error.status !== undefined && RETRY_STATUSES.has(error.status)) return error.status !== 429 || rateLimited;
    return false;
  }

  /** One HTTP attempt: a response (any status), or a ConnectionError / TimeoutError. Rethrows user aborts. */
  async #attempt(req: HttpRequest, token: string | undefined, attempts: number): Promise<HttpResponse | DealApiError> {
    const redact = this.#s.redactor.redact;
    const headers: Record<string, string> = {
      accept: 'application/json',
      'user-agent': this.#s.userAgent,
      ...req.headers,
    };
    let body: string | undefined;
    if (req.json !== undefined) {
      body = JSON.stringify(req.json);
      headers['content-type'] = 'application/json';
    } else if (req.form) {
      body = req.form.toString();
      headers['content-type'] = 'application/x-www-form-urlencoded';
    }
    if (token !== undefined) headers.authorization = `Bearer ${token}`;

    const controller = new AbortController();
    const signal = req.signal ? AbortSignal.any([req.signal, controller.signal]) : controller.signal;
    const timer = setTimeout(() => controller.abort(new Error('timeout')), this.#s.timeoutMs);
    // Node's fetch honours the signal; any other fetch (a test double, an in-process handler) is also raced, so
    // one that ignores the signal still cannot hang the call.
    let aborted: Promise<never> | undefined;
    if (this.#s.fetch !== globalThis.fetch) {
      aborted = new Promise<never>((_, reject) => {
        if (signal.aborted) reject(signal.reason);
        else signal.addEventListener('abort', () => reject(signal.reason ?? new Error('aborted')), { once: true });
      });
      aborted.catch(() => undefined);
    }
    const debug = typeof this.#s.logger?.debug === 'function';
    // The URL is scrubbed only when someone listens: most clients have no hooks, and every request passes here.
    const hooks = this.#s.hooks?.active ? this.#s.hooks : undefined;
    const event = hooks && { method: req.method, url: redact(req.url.href), attempt: attempts };
    if (hooks && event) hooks.emit('request', event);
    const started = performance.now();
    try {
      const sent = this.#s.fetch(req.url, { method: req.method, headers, body, signal });
      const res = aborted ? await Promise.race([sent, aborted]) : await sent;
      let parsed: unknown;
      try {
        parsed = aborted ? await Promise.race([readBody(res), aborted]) : await readBody(res);
      } catch (err) {
        if (!(req.keepCutBody && res.ok) || req.signal?.aborted) throw err;
        this.#log(
          'warn',
          `${req.method} ${pathOf(req.url)} → ${res.status}, but the body was cut: ${errorCodes(err)[0] ?? (err as Error)?.message ?? err}`,
        );
        if (hooks && event)
          hooks.emit('response', { ...event, status: res.status, elapsedMs: Math.round(performance.now() - started) });
        return {
          status: res.status,
          statusText: res.statusText,
          headers: res.headers,
          body: '',
          attempts,
          bodyCut: true,
        };
      }
      const elapsedMs = Math.round(performance.now() - started);
      if (hooks && event) hooks.emit('response', { ...event, status: res.status, elapsedMs });
      if (debug) this.#log('debug', `${req.method} ${pathOf(req.url)} → ${res.status} (${elapsedMs} ms)`);
      return { status: res.status, statusText: res.statusText, headers: res.headers, body: parsed, attempts };
    } catch (err) {
      if (req.signal?.aborted) throw req.signal.reason ?? err;
      const details = { method: req.method, url: req.url.href, attempts, redact };
      const elapsedMs = Math.round(performance.now() - started);
      if (hooks && event)
        hooks.emit('response', {
          ...event,
          error: controller.signal.aborted ? 'TimeoutError' : 'ConnectionError',
          elapsedMs,
        });
      if (controller.signal.aborted) {
        this.#log('debug', `${req.method} ${pathOf(req.url)} timed out after ${this.#s.timeoutMs} ms`);
        return new TimeoutError(`${req.method} ${pathOf(req.url)} timed out after ${this.#s.timeoutMs} ms`, {
          ...details,
          cause: err,
        });
      }
      const codes = errorCodes(err);
      const neverConnected = codes.some((c) => NEVER_CONNECTED.has(c));
      let inner = err as LooseError;
      while (inner?.cause instanceof Error) inner = inner.cause;
      const why =
        codes[0] !== undefined ? networkWhy(codes[0], req.url) : inner instanceof Error ? inner.message : String(err);
      this.#log('debug', `${req.method} ${pathOf(req.url)} failed: ${why}`);
      return new ConnectionError(`${req.method} ${pathOf(req.url)} failed: ${why}`, !neverConnected, {
        ...details,
        cause: err,
      });
    } finally {
      clearTimeout(timer);
    }
  }
}
