/**
 * What happens to each request of a simulator around its app: the added latency, the injected faults (a 503, a 429, a
 * dropped connection before or after processing), the request log and the recording of exchanges.
 */
import type { Hono } from 'hono';
import type { ApiEnv } from './routes/context.js';
import { appendExchanges, exchangeRecorder, type SimulatorExchange } from './record.js';
import { prng } from './seed.js';
import type { SimulatorUser } from './users.js';

/** A kind of injected fault: a 503, a dropped connection (before or after processing), or a 429 with Retry-After: 1. */
export type FaultKind = '503' | 'drop' | '429';

/** Random failures for resilience tests and benchmarks. */
export interface FaultOptions {
  /** Probability (0..1) that a request fails. */
  rate: number;
  /** PRNG seed, for reproducible runs. */
  seed?: number;
  /** Which faults to pick from (uniformly); default all three. */
  kinds?: FaultKind[];
}

/** One request as seen by the simulator (no headers, no body: secrets never land here). */
export interface RequestLogEntry {
  method: string;
  /** Path without the query string. */
  path: string;
  /** Response status; 0 when the connection was dropped. */
  status: number;
  /** The injected fault, if any; `drop-after` means the request was processed before the connection dropped. */
  fault?: '503' | '429' | 'drop-before' | 'drop-after';
  /** Clock time (from `now`) when the request arrived. */
  at: number;
}

/** The options of the simulator that shape its pipeline (as createDealApiSimulator takes them). */
export interface PipelineOptions {
  latencyMs?: number;
  faults?: FaultOptions;
  onRequest?: (entry: RequestLogEntry) => void;
  onExchange?: (exchange: SimulatorExchange) => void;
}

/** A simulator's request handler and the log it keeps. */
export interface Pipeline {
  /** One request through latency, faults and the app; throws DroppedConnection when the connection must drop. */
  handle: (request: Request, remoteAddress?: string) => Promise<Response>;
  /** The last 10,000 requests, oldest first. */
  requests: RequestLogEntry[];
}

const LOG_LIMIT = 10_000;

/** Thrown by a pipeline's `handle` when the connection must drop (an injected fault). */
export class DroppedConnection extends Error {}

/** A TypeError shaped like undici's when a connection drops (`fetch failed`, cause `other side closed`). */
export function fetchFailed(): TypeError {
  const cause = Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' });
  return new TypeError('fetch failed', { cause });
}

/** The pipeline of one simulator around `app`, on the clock `now`; `users` are scrubbed from recorded exchanges. */
export function createPipeline(
  app: Hono<ApiEnv>,
  options: PipelineOptions,
  now: () => number,
  users: readonly SimulatorUser[],
): Pipeline {
  const faults = faultInjector(options.faults);
  const requests: RequestLogEntry[] = [];
  const recordFile = process.env.EIDKIT_SIMULATOR_RECORD;
  const sinks = [options.onExchange, recordFile ? appendExchanges(recordFile) : undefined].filter(
    (f) => f !== undefined,
  );
  const onExchange = sinks.length > 0 ? (e: SimulatorExchange) => sinks.forEach((f) => f(e)) : undefined;
  const recordExchange = exchangeRecorder(users);

  function record(entry: RequestLogEntry) {
    requests.push(entry);
    if (requests.length > LOG_LIMIT) requests.splice(0, requests.length - LOG_LIMIT);
    options.onRequest?.(entry);
  }

  /** One request through latency, faults and the app; throws DroppedConnection when the connection must drop. */
  async function handle(request: Request, remoteAddress?: string): Promise<Response> {
    const copy = onExchange ? request.clone() : undefined;
    const res = await answer(request, remoteAddress);
    if (copy) void recordExchange(copy, res.clone()).then(onExchange, () => undefined);
    return res;
  }

  async function answer(request: Request, remoteAddress?: string): Promise<Response> {
    const env = { remoteAddress };
    const entry: RequestLogEntry = {
      method: request.method,
      path: new URL(request.url).pathname,
      status: 0,
      at: now(),
    };
    if (options.latencyMs && options.latencyMs > 0) await new Promise((r) => setTimeout(r, options.latencyMs));
    const fault = faults();
    if (fault === 'drop-after' || fault === 'drop-before') {
      // A dropped connection, half the time after the request was processed: the case that makes a retried create
      // dangerous.
      entry.fault = fault;
      if (fault === 'drop-after') {
        const res = await app.fetch(request, env);
        await res.arrayBuffer().catch(() => undefined);
      }
      record(entry);
      throw new DroppedConnection();
    }
    if (fault) {
      entry.fault = fault;
      entry.status = Number(fault);
      record(entry);
      return faultResponse(fault);
    }
    const res = await app.fetch(request, env);
    entry.status = res.status;
    record(entry);
    return res;
  }

  return { handle, requests };
}

/** Draws the fault of each request, by the options' rate and kinds: a status, a dropped connection, or none. */
function faultInjector(
  options: FaultOptions | undefined,
): () => '503' | '429' | 'drop-before' | 'drop-after' | undefined {
  const rate = options?.rate ?? 0;
  const kinds = options?.kinds?.length ? options.kinds : (['503', 'drop', '429'] as FaultKind[]);
  const random = prng(options?.seed ?? Math.floor(Math.random() * 2 ** 32));
  return () => {
    if (!(rate > 0 && random() < rate)) return undefined;
    const kind = kinds[Math.floor(random() * kinds.length)];
    if (kind === '503' || kind === '429') return kind;
    return random() < 0.5 ? 'drop-after' : 'drop-before';
  };
}

/** The answer of an injected 503 or 429. */
function faultResponse(kind: '503' | '429'): Response {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (kind === '429') headers['retry-after'] = '1';
  const body =
    kind === '503'
      ? { message: 'Service temporarily unavailable (injected fault)', code: 'SERVICE_UNAVAILABLE' }
      : { message: 'Too many requests (injected fault)', code: 'RATE_LIMITED' };
  return new Response(JSON.stringify(body), { status: Number(kind), headers });
}
