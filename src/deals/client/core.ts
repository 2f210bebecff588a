/**
 * What a resource of DealApiClient (`client.deals`, `client.lookups`) is given of its client: the authenticated
 * request, the settings it reads, and the shape of a write it prepares and sends. The resources depend on this,
 * not on the client class, so the client composes them without an import cycle.
 */
import type { DealRead, DealReference } from '../rules/index.js';
import type { FieldIssue } from './errors.js';
import type { HttpRequest, HttpResponse, Logger, RetryPolicy } from './transport.js';

/** @internal A write ready to send. */
export interface Prepared {
  method: HttpRequest['method'];
  url: URL;
  headers?: Record<string, string>;
  json?: unknown;
  retry: RetryPolicy;
  warnings: FieldIssue[];
  /** For update: the stored deal when the patch changes nothing (no PUT is needed). */
  unchanged?: DealRead;
  /** For create: a 2xx whose body is cut still resolves (see HttpRequest.keepCutBody). */
  keepCutBody?: boolean;
}

/** @internal The part of DealApiClient (client.ts) its resources call. */
export interface ClientCore {
  /** The service base address. */
  readonly baseUrl: URL;
  /** Pages fetched at once when listing. */
  readonly concurrency: number;
  /** Whether writes look up DSPs, buyers and identity providers for the rules first. */
  readonly referenceChecks: boolean;
  /** Retries after the first attempt (also the recoveries of a keyed create). */
  readonly maxRetries: number;
  /** Scrubs secrets from text. */
  readonly redact: (text: string) => string;
  /** The clock. */
  now(): number;
  /** Writes a scrubbed log line. */
  log(level: keyof Logger, message: string): void;
  /** An authenticated request to the service. */
  request(req: Omit<HttpRequest, 'token' | 'onUnauthorized'>): Promise<HttpResponse>;
  /** Sends a prepared write. */
  send(p: Prepared, signal?: AbortSignal): Promise<HttpResponse>;
  /** The reference items a deal names (DSPs, buyers of a guaranteed deal, its identity provider). */
  reference(deal: Record<string, unknown>, signal?: AbortSignal): Promise<DealReference>;
}
