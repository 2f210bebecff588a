/**
 * The report shared by a fleet through Redis (issue #10): each process counts ad calls in a local buffer and
 * flushes it every `flushMs` as pipelined HINCRBYs into one hash per UTC day and one per UTC hour; reads merge
 * every process's counts. An ad call never waits for Redis: `add` only touches memory.
 *
 * Keys (prefix `eidkit:report:`): `d:<YYYY-MM-DD>` and `h:<YYYY-MM-DDTHH>` hashes with fields
 * `<network id>|<counter>` (counters: see `countersOf`), the sorted sets `days` and `hours` indexing them, and
 * the hash `meta` (`dropped`: calls dropped at a full buffer, fleet-wide). Each bucket expires `retentionDays`
 * after its period ends.
 */
import type { AdCall } from './ad-call.js';
import { countersOf, periodsOf, reportCSV, rowOf, sortRows } from './report.js';
import type { Counters, ReportGranularity, ReportJson, ReportReadOptions, ReportRow } from './report.js';
import { checkPrefix, requireRedisClient } from './redis-client.js';
import type { RedisClientInput } from './redis-client.js';
import type { DmpConfig } from './dmp.js';

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
  /** Days a bucket is kept after its period ends (key expiry; default 90). */
  retentionDays?: number;
  /** DMPs and their preferred providers (parseDmpConfig): adds the Has DMP Id count per DMP, as createReport. */
  dmps?: readonly DmpConfig[];
  /** Clock, for tests. */
  now?: () => number;
}

/** Counters of one process's report buffer. */
export interface RedisReportMetrics {
  /** Counter entries waiting for a flush (in flight included). */
  buffered: number;
  /** Calls this process dropped at the buffer bound (also flushed into the fleet's `droppedCalls`). */
  droppedCalls: number;
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

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

function positive(value: unknown, setting: string, integer: boolean): number {
  if (typeof value !== 'number' || !(value > 0) || !Number.isFinite(value) || (integer && !Number.isInteger(value))) {
    throw new TypeError(`${setting} must be a ${integer ? 'whole ' : ''}number > 0 (got ${String(value)})`);
  }
  return value;
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
  const prefix = checkPrefix(options.prefix ?? 'eidkit:report:');
  const flushMs = positive(options.flushMs ?? 1_000, 'flushMs', false);
  const maxBuffered = positive(options.maxBuffered ?? 100_000, 'maxBuffered', true);
  const retentionMs = positive(options.retentionDays ?? 90, 'retentionDays', false) * DAY;
  const now = options.now ?? Date.now;
  const dmps = options.dmps ?? [];
  const index = { day: `${prefix}days`, hour: `${prefix}hours` } as const;
  const bucketKey = (g: ReportGranularity, period: string) => `${prefix}${g === 'day' ? 'd' : 'h'}:${period}`;
  const periodEnd = (g: ReportGranularity, period: string) => Date.parse(g === 'day' ? `${period}T00:00:00Z` : `${period}:00:00Z`) + (g === 'day' ? DAY : HOUR);

  // Redis key → field → count; `entries` counts fields here and in flight, the bound of `maxBuffered`.
  let buffer = new Map<string, Map<string, number>>();
  const periodsOfKey = new Map<string, { g: ReportGranularity; period: string }>();
  let entries = 0;
  let droppedUnflushed = 0;
  const m = { droppedCalls: 0, flushes: 0, flushErrors: 0, commands: 0 };
  let inFlight: Promise<void> | undefined;

  function fieldsFor(key: string, g: ReportGranularity, period: string) {
    let f = buffer.get(key);
    if (!f) {
      f = new Map();
      buffer.set(key, f);
      periodsOfKey.set(key, { g, period });
    }
    return f;
  }

  function add(call: AdCall, at = new Date(now())) {
    const { day, hour } = periodsOf(at);
    const net = call.networkId ?? '';
    const fields = countersOf(call, dmps).map((c) => `${net}|${c}`);
    const targets = [fieldsFor(bucketKey('day', day), 'day', day), fieldsFor(bucketKey('hour', hour), 'hour', hour)];
    const fresh = targets.reduce((n, t) => n + fields.filter((f) => !t.has(f)).length, 0);
    if (entries + fresh > maxBuffered) {
      m.droppedCalls++;
      droppedUnflushed++;
      return;
    }
    entries += fresh;
    for (const t of targets) for (const f of fields) t.set(f, (t.get(f) ?? 0) + 1);
  }

  /** Puts a failed flush's counts back, merging with what arrived meanwhile. */
  function restore(key: string, field: string, n: number) {
    const { g, period } = periodsOfKey.get(key)!;
    const f = fieldsFor(key, g, period);
    if (f.has(field)) entries--; // merged into an entry that is already counted
    f.set(field, (f.get(field) ?? 0) + n);
  }

  async function send(): Promise<void> {
    const batch = buffer;
    const dropped = droppedUnflushed;
    buffer = new Map();
    droppedUnflushed = 0;
    if (batch.size === 0 && dropped === 0) return;
    const t = now();
    // A client that throws instead of rejecting (closed, misconfigured) must not lose the batch.
    const attempt = (command: () => Promise<unknown>): Promise<unknown> => {
      try {
        return command();
      } catch (e) {
        return Promise.reject(e);
      }
    };
    const ops: Promise<unknown>[] = [];
    const counts: Array<[string, string, number, Promise<unknown>]> = [];
    // All issued in one tick: node-redis writes them as one pipeline (one round trip per node).
    for (const [key, fields] of batch) {
      const { g, period } = periodsOfKey.get(key)!;
      for (const [field, n] of fields) {
        const p = attempt(() => client.hIncrBy(key, field, n));
        counts.push([key, field, n, p]);
      }
      ops.push(
        attempt(() => client.pExpireAt(key, periodEnd(g, period) + retentionMs)),
        attempt(() => client.zAdd(index[g], { score: periodEnd(g, period), value: period })),
      );
    }
    const droppedOp = dropped ? attempt(() => client.hIncrBy(`${prefix}meta`, 'dropped', dropped)) : undefined;
    for (const g of ['day', 'hour'] as const) ops.push(attempt(() => client.zRemRangeByScore(index[g], '-inf', t - retentionMs)));
    m.commands += counts.length + ops.length + (droppedOp ? 1 : 0);
    const settled = await Promise.allSettled(counts.map((c) => c[3]));
    let failed = 0;
    settled.forEach((s, i) => {
      const [key, field, n] = counts[i];
      if (s.status === 'rejected') {
        failed++;
        restore(key, field, n);
      } else entries--;
    });
    if (droppedOp) await droppedOp.catch(() => (failed++, (droppedUnflushed += dropped)));
    // Expiry and index updates are repeated by every flush touching the bucket: a failure here loses no count.
    await Promise.allSettled(ops);
    for (const key of batch.keys()) if (!buffer.has(key)) periodsOfKey.delete(key);
    if (failed) {
      m.flushErrors++;
      const reason = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected')?.reason;
      throw new Error(`Redis report: flush failed; ${entries} counter entries kept for the next flush`, { cause: reason });
    }
    m.flushes++;
  }

  /** One flush at a time; a flush asked for during one runs right after it. */
  function flush(): Promise<void> {
    const run = (inFlight ?? Promise.resolve())
      .catch(() => {})
      .then(send)
      .finally(() => {
        if (inFlight === run) inFlight = undefined;
      });
    inFlight = run;
    return run;
  }

  const timer = setInterval(() => flush().catch(() => {}), flushMs);
  timer.unref?.(); // the report's timer alone must not keep a process alive

  async function read(g: ReportGranularity): Promise<ReportJson> {
    await flush().catch(() => {}); // best effort: a read still answers with what the fleet flushed
    const periods = await client.zRangeByScore(index[g], now() - retentionMs, '+inf');
    const [hashes, meta] = await Promise.all([Promise.all(periods.map((p) => client.hGetAll(bucketKey(g, p)))), client.hGetAll(`${prefix}meta`)]);
    const rows: ReportRow[] = [];
    periods.forEach((period, i) => {
      const byNetwork = new Map<string, Counters>();
      for (const [field, value] of Object.entries(hashes[i] ?? {})) {
        const bar = field.indexOf('|');
        const net = field.slice(0, bar);
        let c = byNetwork.get(net);
        if (!c) byNetwork.set(net, (c = new Map()));
        c.set(field.slice(bar + 1), Number(value));
      }
      for (const [net, c] of byNetwork) rows.push(rowOf(period, net === '' ? null : Number(net), c, dmps));
    });
    return { rows: sortRows(rows), droppedCalls: Number(meta?.dropped ?? 0) };
  }

  return {
    add,
    toJSON: (o) => read(o?.granularity ?? 'day'),
    toCSV: async (o) => reportCSV((await read(o?.granularity ?? 'day')).rows, o?.granularity),
    flush,
    async close() {
      clearInterval(timer);
      await flush();
    },
    metrics: () => ({ buffered: entries, ...m }),
  };
}
