/**
 * The deal API client's error family: one base class, one subclass per meaning.
 *
 * `instanceof` holds across two copies of the package (two installs, or ESM next to a bundled copy): every
 * instance carries its class lineage under a `Symbol.for` key and every class answers `instanceof` from it.
 * No message, `util.inspect` or `JSON.stringify` output of an error holds a password, secret or token.
 */
import type { Issue } from '../../core/eid.js';
import { inspect, type InspectOptions } from 'node:util';

const LINEAGE = Symbol.for('eidkit.deals.errorLineage');
const REDACT = Symbol('eidkit.deals.redact');

/** A field-level problem, as returned by `validateDeal` and by the service's 400 bodies. */
export type FieldIssue = Issue;

/** What the transport knows about the request and response behind an error. */
export interface ErrorDetails {
  status?: number;
  method?: string;
  url?: string;
  /** Machine code from the response body (`CREATION_QUOTA_EXCEEDED`, `invalid_grant`, …). */
  code?: string;
  /** How many HTTP attempts were made before giving up (0 when nothing was sent). */
  attempts?: number;
  cause?: unknown;
  /** Scrubs known secrets from text; the client passes its own. */
  redact?: (text: string) => string;
}

function lineageOf(ctor: object): string[] {
  const names: string[] = [];
  type Ctor = { errorName?: string } | null;
  for (let c = ctor as Ctor; c && c !== Error && c !== Function.prototype; c = Object.getPrototypeOf(c) as Ctor) {
    if (Object.prototype.hasOwnProperty.call(c, 'errorName')) names.push(c.errorName!);
  }
  return names;
}

const identity = (s: string): string => s;

/**
 * Base class of every error the deal API client throws.
 *
 * @example
 * try {
 *   await client.deals.get(42);
 * } catch (err) {
 *   if (err instanceof NotFoundError) …;
 *   else if (err instanceof DealApiError) console.error(err.message);
 * }
 */
export class DealApiError extends Error {
  /** Stable class name used for cross-copy `instanceof`; never minified. */
  static readonly errorName: string = 'DealApiError';
  /** HTTP status of the response, when there was one. */
  readonly status?: number;
  /** HTTP method of the request, when there was one. */
  readonly method?: string;
  /** URL of the request (never carries credentials: those travel in headers and form bodies). */
  readonly url?: string;
  /** Machine code from the response body, when there was one. */
  readonly code?: string;
  /** HTTP attempts made (retries included); 0 when the client refused before sending anything. */
  readonly attempts?: number;
  /**
   * Set on every error of `deals.create`: true when the deal may exist although the call failed (the request was
   * sent, then a 5xx, a timeout or a dropped connection), so look for it before creating it again; false when the
   * service cannot have created it.
   */
  readonly mayHaveCreated?: boolean;

  constructor(message: string, details: ErrorDetails = {}) {
    const redact = details.redact ?? identity;
    super(redact(message), details.cause === undefined ? undefined : { cause: details.cause });
    Object.defineProperty(this, LINEAGE, { value: lineageOf(new.target), enumerable: false });
    Object.defineProperty(this, REDACT, { value: redact, enumerable: false });
    Object.defineProperty(this, 'name', {
      value: new.target.errorName,
      enumerable: false,
      configurable: true,
      writable: true,
    });
    if (this.stack) this.stack = redact(this.stack);
    if (details.status !== undefined) this.status = details.status;
    if (details.method !== undefined) this.method = details.method;
    if (details.url !== undefined) this.url = redact(details.url);
    if (details.code !== undefined) this.code = details.code;
    if (details.attempts !== undefined) this.attempts = details.attempts;
  }

  /** True for instances of this class from any copy of the package. */
  static [Symbol.hasInstance](value: unknown): boolean {
    const lineage =
      value !== null && typeof value === 'object' ? (value as Record<symbol, unknown>)[LINEAGE] : undefined;
    return Array.isArray(lineage) && lineage.includes(this.errorName);
  }

  /** A plain, secret-free description (the `cause` is left out: it may come from a user-supplied fetch). */
  toJSON(): Record<string, unknown> {
    const out: Record<string, unknown> = { name: this.name, message: this.message };
    for (const [k, v] of Object.entries(this)) if (v !== undefined) out[k] = v;
    return out;
  }

  /** `util.inspect` output with the stack, the fields and the cause, scrubbed of known secrets. */
  [inspect.custom](depth: number, options: InspectOptions, inspectFn: typeof inspect = inspect): string {
    const redact = (this as unknown as Record<symbol, ((s: string) => string) | undefined>)[REDACT] ?? identity;
    const fields = Object.fromEntries(Object.entries(this).filter(([, v]) => v !== undefined));
    let text = String(this.stack ?? `${this.name}: ${this.message}`);
    if (Object.keys(fields).length) text += ' ' + inspectFn(fields, { ...options, depth: Math.max(0, depth - 1) });
    if (this.cause !== undefined && depth > 0) {
      text += `\n  [cause]: ${inspectFn(this.cause, { ...options, depth: depth - 1 }).replace(/\n/g, '\n  ')}`;
    }
    return redact(text);
  }
}

/** The deal was refused by validation: client-side before sending (`attempts` 0) or by the service (400). */
export class ValidationError extends DealApiError {
  static override readonly errorName: string = 'ValidationError';
  /** Every problem, each naming its field. */
  readonly issues: FieldIssue[];
  /** The message without the list of issues (the CLI prints it, then one line per issue); not serialised. */
  declare readonly summary: string;
  constructor(message: string, issues: FieldIssue[], details: ErrorDetails & { summary?: string } = {}) {
    super(message, details);
    this.issues = issues;
    Object.defineProperty(this, 'summary', {
      value: (details.redact ?? identity)(details.summary ?? message),
      enumerable: false,
    });
  }
}

/** The request body was too large for the service (413). */
export class PayloadTooLargeError extends DealApiError {
  static override readonly errorName: string = 'PayloadTooLargeError';
}

/** Authentication failed: the token was refused, or the identity provider refused the client (401). */
export class AuthenticationError extends DealApiError {
  static override readonly errorName: string = 'AuthenticationError';
}

/** The identity provider refused the username or password (`invalid_grant`). Never retried. */
export class InvalidGrantError extends AuthenticationError {
  static override readonly errorName: string = 'InvalidGrantError';
}

/**
 * Too many authentication attempts: either the client's own budget (fewer than the 10 per 5 minutes allowed) is
 * spent and nothing was sent, or the identity provider answered `too_many_attempts`.
 */
export class AuthAttemptsExhaustedError extends AuthenticationError {
  static override readonly errorName: string = 'AuthAttemptsExhaustedError';
  /** Milliseconds until an attempt may be made again. */
  readonly retryAfterMs: number;
  constructor(message: string, retryAfterMs: number, details: ErrorDetails = {}) {
    super(message, details);
    this.retryAfterMs = retryAfterMs;
  }
}

/** The caller may not do this (403), e.g. a DSP caller on domain-list operations (docs/deal-rules.md#dsp-callers). */
export class ForbiddenError extends DealApiError {
  static override readonly errorName: string = 'ForbiddenError';
}

/** No such deal or resource (404). */
export class NotFoundError extends DealApiError {
  static override readonly errorName: string = 'NotFoundError';
}

/** The service asked the client to slow down (429, or 503 with Retry-After) beyond what retries could absorb. */
export class RateLimitedError extends DealApiError {
  static override readonly errorName: string = 'RateLimitedError';
  /** Milliseconds the service asked to wait, when it said. */
  readonly retryAfterMs?: number;
  constructor(message: string, retryAfterMs: number | undefined, details: ErrorDetails = {}) {
    super(message, details);
    if (retryAfterMs !== undefined) this.retryAfterMs = retryAfterMs;
  }
}

/** A daily quota is spent (by default 15 creations, 500 updates a day). Never retried. */
export class QuotaExceededError extends RateLimitedError {
  static override readonly errorName: string = 'QuotaExceededError';
  /** Which quota. */
  readonly quota: 'creation' | 'update';
  constructor(
    message: string,
    quota: 'creation' | 'update',
    retryAfterMs: number | undefined,
    details: ErrorDetails = {},
  ) {
    super(message, retryAfterMs, details);
    this.quota = quota;
  }
}

/** The daily creation quota (15) is spent. */
export class CreationQuotaExceededError extends QuotaExceededError {
  static override readonly errorName: string = 'CreationQuotaExceededError';
  constructor(message: string, retryAfterMs: number | undefined, details: ErrorDetails = {}) {
    super(message, 'creation', retryAfterMs, details);
  }
}

/** The daily update quota (500) is spent. */
export class UpdateQuotaExceededError extends QuotaExceededError {
  static override readonly errorName: string = 'UpdateQuotaExceededError';
  constructor(message: string, retryAfterMs: number | undefined, details: ErrorDetails = {}) {
    super(message, 'update', retryAfterMs, details);
  }
}

/** The service failed (5xx) and retries, if allowed, did not help. */
export class ServerError extends DealApiError {
  static override readonly errorName: string = 'ServerError';
}

/** No response within the timeout. For a create, the deal may or may not exist: check before creating again. */
export class TimeoutError extends DealApiError {
  static override readonly errorName: string = 'TimeoutError';
}

/**
 * The connection failed or was dropped. `mayHaveReachedServer` is false only when no connection was ever
 * established, which is the one case where a create is safe to repeat.
 */
export class ConnectionError extends DealApiError {
  static override readonly errorName: string = 'ConnectionError';
  readonly mayHaveReachedServer: boolean;
  constructor(message: string, mayHaveReachedServer: boolean, details: ErrorDetails = {}) {
    super(message, details);
    this.mayHaveReachedServer = mayHaveReachedServer;
  }
}

/** Whether a failed create may have created the deal: sent, then a 5xx, a timeout or a dropped connection. */
function mayHaveCreatedBy(err: DealApiError): boolean {
  if (err instanceof ConnectionError) return err.mayHaveReachedServer;
  if (err instanceof TimeoutError) return err.status === undefined; // a 408 means the request was not read
  return err.status !== undefined && err.status >= 500;
}

/** @internal Sets `mayHaveCreated` on an error of a create, and says so in the message when it is true. */
export function markCreateOutcome(err: DealApiError): DealApiError {
  const may = mayHaveCreatedBy(err);
  Object.defineProperty(err, 'mayHaveCreated', { value: may, enumerable: true, configurable: true });
  if (may) err.message += '; the deal may have been created: look for it (deals list) before creating it again';
  return err;
}
