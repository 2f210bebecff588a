/**
 * How a failed exchange with the deal API reads: an error response as the typed error of its status and code
 * ({@link mapApiError}), a network error's codes in words naming the host, the `Retry-After` header in milliseconds.
 * ./transport.ts sends the requests and decides on retries; this file only reads what came back.
 */
import { STATUS_CODES } from 'node:http';
import {
  AuthAttemptsExhaustedError,
  AuthenticationError,
  CreationQuotaExceededError,
  DealApiError,
  ForbiddenError,
  NotFoundError,
  PayloadTooLargeError,
  RateLimitedError,
  ServerError,
  TimeoutError,
  UpdateQuotaExceededError,
  ValidationError,
  type FieldIssue,
} from './errors.js';
import { clip } from './redact.js';

/** A response body as read: JSON (each field unknown until checked), text, or nothing. */
export type LooseBody = Record<string, unknown> | string | null | undefined;

/** The fields of a network error this code looks at (Node's `code`, an AggregateError's `errors`, `cause`). */
export type LooseError = { code?: unknown; errors?: unknown; cause?: unknown } | null | undefined;

/** What {@link mapApiError} reads of a response (an HttpResponse of ./transport.ts, whatever its status). */
export interface ErrorResponse {
  status: number;
  statusText: string;
  headers: Headers;
  body: unknown;
  attempts: number;
}

/** What {@link mapApiError} reads of the request that failed. */
export interface FailedRequest {
  method: string;
  url: URL;
}

/** Parses `Retry-After` (delta-seconds or an HTTP date) into milliseconds. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Every network error code of an error, its causes and an AggregateError's errors, outermost first. */
export function errorCodes(err: unknown): string[] {
  const codes: string[] = [];
  for (let e = err as LooseError, depth = 0; e && depth < 5; e = e.cause as LooseError, depth++) {
    if (typeof e.code === 'string') codes.push(e.code);
    if (Array.isArray(e.errors)) {
      for (const inner of e.errors as LooseError[]) if (typeof inner?.code === 'string') codes.push(inner.code);
    }
  }
  return codes;
}

/** A network error code in words naming the host (`connection refused by api.example:443 (ECONNREFUSED)`). */
export function networkWhy(code: string, url: URL): string {
  const host = url.host;
  const words: Record<string, string> = {
    ECONNREFUSED: `connection refused by ${host}`,
    ENOTFOUND: `host ${url.hostname} not found`,
    EAI_AGAIN: `looking up host ${url.hostname} failed for now`,
    EHOSTUNREACH: `host ${host} unreachable`,
    ENETUNREACH: `network unreachable for ${host}`,
    ECONNRESET: `connection reset by ${host}`,
    UND_ERR_CONNECT_TIMEOUT: `connecting to ${host} timed out`,
    UND_ERR_SOCKET: `connection to ${host} closed`,
  };
  return words[code] ? `${words[code]} (${code})` : `${code} (${host})`;
}

/** A URL's path and query, as messages name a request. */
export function pathOf(url: URL): string {
  return url.pathname + url.search;
}

function issuesFrom(body: LooseBody): FieldIssue[] {
  if (!body || typeof body !== 'object' || !Array.isArray(body.errors)) return [];
  return (body.errors as ({ field?: unknown; path?: unknown; message?: unknown } | null)[]).map((e) => ({
    path: String((e?.field ?? e?.path ?? '') as string),
    message: String((e?.message ?? 'invalid') as string),
  }));
}

/** The deal API's mapping of an error response to a typed error (statuses as documented in docs/simulator.md). */
export function mapApiError(res: ErrorResponse, req: FailedRequest, redact: (s: string) => string): DealApiError {
  const body = res.body as LooseBody;
  const serverMessage =
    typeof body === 'object' && body && typeof body.message === 'string'
      ? body.message
      : typeof body === 'string'
        ? clip(body, 200, redact)
        : '';
  const code = typeof body === 'object' && body && typeof body.code === 'string' ? body.code : undefined;
  const reason = res.statusText || STATUS_CODES[res.status] || '';
  const base = `${req.method} ${pathOf(req.url)} failed with ${res.status}${reason ? ' ' + reason : ''}`;
  const message = serverMessage ? `${base}: ${serverMessage}` : base;
  const details = { status: res.status, method: req.method, url: req.url.href, code, attempts: res.attempts, redact };
  const retryAfterMs = parseRetryAfter(res.headers.get('retry-after'));
  switch (res.status) {
    case 400:
    case 422: {
      const issues = issuesFrom(body);
      if (!issues.length) return new ValidationError(message, issues, details);
      // A server message that restates an issue would print it twice (three times in the CLI): keep the list only.
      const restates = issues.some((i) => serverMessage.includes(i.message));
      const summary = serverMessage && !restates ? message : base;
      const list = issues.map((i) => `${i.path || '(deal)'}: ${i.message}`).join('; ');
      return new ValidationError(`${summary} (${list})`, issues, { ...details, summary });
    }
    case 401:
      return new AuthenticationError(message, details);
    case 403:
      return new ForbiddenError(message, details);
    case 404:
      return new NotFoundError(message, details);
    case 408:
      return new TimeoutError(message, details);
    case 413:
      return new PayloadTooLargeError(message, details);
    case 429:
      if (code === 'CREATION_QUOTA_EXCEEDED') return new CreationQuotaExceededError(message, retryAfterMs, details);
      if (code === 'UPDATE_QUOTA_EXCEEDED') return new UpdateQuotaExceededError(message, retryAfterMs, details);
      if (code === 'TOO_MANY_AUTH_ATTEMPTS') return new AuthAttemptsExhaustedError(message, retryAfterMs ?? 0, details);
      return new RateLimitedError(message, retryAfterMs, details);
    default:
      if (res.status >= 500) {
        if (res.status === 503 && retryAfterMs !== undefined)
          return new RateLimitedError(message, retryAfterMs, details);
        return new ServerError(message, details);
      }
      return new DealApiError(message, details);
  }
}
