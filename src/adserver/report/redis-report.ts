/**
 * The report shared by a fleet through Redis: each process counts ad calls in a local buffer and flushes it every
 * `flushMs` as one pipeline into one hash per UTC day and one per UTC hour; reads merge every process's counts. An
 * ad call never waits for Redis: `add` only touches memory. What a call adds to is the in-memory report's rule
 * (counters.ts); this file wires the speed machinery around it: the bounded buffer (redis-buffer.ts), the flush and
 * its replay after a failure (redis-flush.ts), the read (redis-read.ts). Keys: redis-keys.ts.
 *
 * A day bucket expires `retentionDays` after its day ends, an hour bucket `maxHours` after its hour ends. The network
 * cap and the cap of experiments per network are applied inside Redis by a Lua script per bucket, so they hold
 * exactly however many processes write (docs/ad-server.md "Sharing caps and reports through Redis").
 */
import type { AdCall } from '../parse/index.js';
import type { ForwardingExplanation } from '../forward/index.js';
import type { ReportJson, ReportReadOptions } from './report-types.js';
import { checkPrefix, positiveOption, requireRedisClient } from '../common/index.js';
import type { RedisClientInput } from '../common/index.js';
import type { DmpConfig } from './dmp.js';
import { DEFAULT_MAX_EXPERIMENTS } from './experiments.js';
import type { CallOutcome } from './experiments.js';
import { callIncrements, forwardingIncrements, outcomeIncrements } from './counters.js';
import { reportCSV } from './report-csv.js';
import { DAY, HOUR, redisReportKeys } from './redis-keys.js';
import { PendingCounts } from './redis-buffer.js';
import { ReportFlusher } from './redis-flush.js';
import { readRedisReport } from './redis-read.js';
import type { ReadSettings } from './redis-read.js';

/** Options of {@link createRedisReport}. */
export interface RedisReportOptions {
  /** Key prefix (default `eidkit:report:`); no `{` or `}`. */
  prefix?: string;
  /** Milliseconds between flushes (default 1,000): what a process killed without `close()` can lose at most. */
  flushMs?: number;
  /**
   * Most counter entries (period × network × counter) held unflushed, failed flushes included (default 100,000:
   * hours of a Redis outage at typical cardinality). A call that would need a new entry beyond it is dropped, and
   * counted in `droppedCalls`.
   */
  maxBuffered?: number;
  /** Days a day bucket is kept after its day ends (key expiry; default 90). */
  retentionDays?: number;
  /** Hours an hour bucket is kept after its hour ends (key expiry; default 168, as `createReport`'s `maxHours`). */
  maxHours?: number;
  /**
   * Networks counted per day (and per hour), fleet-wide, as `createReport`'s option: calls of further networks are
   * dropped and counted in `droppedCalls` (default 10,000). Network ids are the caller's choice: this bounds what
   * one day can hold.
   */
  maxNetworksPerDay?: number;
  /** DMPs and their preferred providers (parseDmpConfig): adds the Has DMP Id count per DMP, as createReport. */
  dmps?: readonly DmpConfig[];
  /** Experiments counted per network and day (and hour), fleet-wide, as createReport's option (default 100). */
  maxExperimentsPerNetwork?: number;
  /** Clock, for tests. */
  now?: () => number;
}

/** Counters of one process's report buffer. */
export interface RedisReportMetrics {
  /** Counter entries waiting for a flush (in flight included). */
  buffered: number;
  /** Calls this process dropped at the buffer bound (also flushed into the fleet's `droppedCalls`). */
  droppedCalls: number;
  /** Calls this process flushed that Redis dropped because their day already had `maxNetworksPerDay` networks. */
  cappedCalls: number;
  /** Flushes that reached Redis, and flushes that failed (their counts kept for the next one). */
  flushes: number;
  flushErrors: number;
  /** Redis commands sent by flushes so far. */
  commands: number;
}

/** A report shared through Redis: `add` as `createReport()`'s; reads are asynchronous and merge the fleet. */
export interface RedisReport {
  /** Counts one ad call in the local buffer (no I/O), on the UTC day and hour of `at` (default now). */
  add(call: AdCall, at?: Date): void;
  /** Counts one call's forwarding decisions in the local buffer, as `createReport().addForwarding` (no I/O). */
  addForwarding(call: AdCall, explanation: ForwardingExplanation, at?: Date): void;
  /** Counts one call's outcome in the local buffer, as `createReport().addOutcome` (no I/O; throws on bad ones). */
  addOutcome(call: AdCall, outcome: CallOutcome, at?: Date): void;
  /** The fleet's merged report (this process's buffer flushed first), per day (default) or per hour. */
  toJSON(options?: ReportReadOptions): Promise<ReportJson>;
  /** The same as CSV, through the same writer as `createReport().toCSV()`. */
  toCSV(options?: ReportReadOptions): Promise<string>;
  /** Sends the buffer now; rejects when Redis failed (the counts stay buffered for the next flush). */
  flush(): Promise<void>;
  /** Stops the timer and flushes; call it on shutdown. Rejects when the last flush failed (retry with `flush()`). */
  close(): Promise<void>;
  /** Buffer and flush counters. */
  metrics(): RedisReportMetrics;
}

/**
 * Creates a report shared through Redis. Call `close()` on shutdown.
 * @example
 * const report = createRedisReport(redis, { flushMs: 1000 });
 * report.add(call);                       // memory only
 * res.end(await report.toCSV());          // the whole fleet
 * process.on('SIGTERM', () => report.close());
 */
export function createRedisReport(redis: RedisClientInput, options: RedisReportOptions = {}): RedisReport {
  const client = requireRedisClient(redis, 'createRedisReport');
  const keys = redisReportKeys(checkPrefix(options.prefix ?? 'eidkit:report:'));
  const flushMs = positiveOption(options.flushMs ?? 1_000, 'flushMs', false);
  const maxBuffered = positiveOption(options.maxBuffered ?? 100_000, 'maxBuffered', true);
  const retention = {
    day: positiveOption(options.retentionDays ?? 90, 'retentionDays', false) * DAY,
    hour: positiveOption(options.maxHours ?? 168, 'maxHours', false) * HOUR,
  } as const;
  const settings = {
    maxNetworks: positiveOption(options.maxNetworksPerDay ?? 10_000, 'maxNetworksPerDay', true),
    maxExperiments: positiveOption(
      options.maxExperimentsPerNetwork ?? DEFAULT_MAX_EXPERIMENTS,
      'maxExperimentsPerNetwork',
      true,
    ),
    retention,
  };
  const now = options.now ?? Date.now;
  const dmps = options.dmps ?? [];
  const read: ReadSettings = { keys, retention, dmps };
  const pending = new PendingCounts(keys, maxBuffered);
  const flusher = new ReportFlusher(client, keys, settings, pending, now);
  const flush = () => flusher.flush();
  const timer = setInterval(() => void flush().catch(() => {}), flushMs);
  timer.unref?.(); // the report's timer alone must not keep a process alive

  async function toJSON(o?: ReportReadOptions): Promise<ReportJson> {
    await flush().catch(() => {}); // best effort: a read still answers with what the fleet flushed
    return readRedisReport(client, read, o?.granularity ?? 'day', now());
  }

  return {
    add(call, at) {
      if (!pending.add(callIncrements(call, dmps), at ?? now())) pending.dropCall();
    },
    addForwarding(call, explanation, at) {
      pending.add(forwardingIncrements(call, explanation), at ?? now());
    },
    addOutcome(call, outcome, at) {
      const increments = outcomeIncrements(call, outcome);
      if (increments.fields.length) pending.add(increments, at ?? now());
    },
    toJSON,
    toCSV: async (o) => reportCSV((await toJSON(o)).rows, o?.granularity),
    flush,
    async close() {
      clearInterval(timer);
      await flush();
    },
    metrics: () => ({ buffered: pending.entries, droppedCalls: pending.droppedCalls, ...flusher.metrics }),
  };
}
