/**
 * The report shared by a fleet through Redis: each process counts ad calls in a local buffer and flushes it every
 * `flushMs` as one pipeline into one hash per UTC day and one per UTC hour; reads merge every process's counts. An
 * ad call never waits for Redis: `add` only touches memory.
 *
 * Keys (prefix `eidkit:report:`): `d:<YYYY-MM-DD>` and `h:<YYYY-MM-DDTHH>` hashes with fields
 * `<network id>|<counter>` (counters: see `countersOf`) plus `#networks` (networks counted in the period) and, in
 * day hashes, `#dropped` (calls of networks over `maxNetworksPerDay`); the sorted sets `days` and `hours` indexing
 * them; the hash `meta` (`dropped`: calls dropped at a full buffer, fleet-wide). A day bucket expires
 * `retentionDays` after its day ends, an hour bucket `maxHours` after its hour ends. The network cap is applied
 * inside Redis by a Lua script per bucket (see {@link FLUSH_BUCKET}), so it holds exactly however many processes
 * write (docs/ad-server.md "Sharing caps and reports through Redis"); so is the cap of experiments per network
 * (bookkept in the bucket's `#x<network>|…` fields). Experiment counters are integers but for the sums of squared
 * revenue (fields ending in `~`), added with HINCRBYFLOAT.
 */
import type { AdCall } from '../parse/index.js';
import { countersOf, forwardingCountersOf, periodsOf, reportCSV, rowOf, sortRows } from './report.js';
import type { ForwardingExplanation } from '../forward/index.js';
import type { Counters, ReportGranularity, ReportJson, ReportReadOptions, ReportRow } from './report.js';
import { checkPrefix, luaScript, positiveOption, requireRedisClient } from '../common/index.js';
import type { RedisClientInput } from '../common/index.js';
import type { DmpConfig } from './dmp.js';
import { DEFAULT_MAX_EXPERIMENTS, experimentCountersOf, outcomeCountersOf } from './experiments.js';
import type { CallOutcome } from './experiments.js';

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

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/**
 * Adds one flush's counts to one bucket hash, within the network cap, atomically.
 * KEYS[1]: the bucket. ARGV: the cap, the expiry time (ms), '1' to count dropped calls in `#dropped` (day buckets),
 * the cap of experiments per network, then per network: its `<network>|calls` field, the number of counters, and
 * each counter's field and increment. A network is counted when the bucket knows it (its `calls` field exists) or
 * still has room; returns the calls dropped. An experiment's counter (`<network>|x:<id>\t…`) is added when the
 * bucket knows the experiment for that network (`#x<network>|x:<id>`) or the network still has room for one
 * (`#x<network>|` counts them). A counter ending in `~` is a sum of non-integers.
 */
const FLUSH_BUCKET = `
local max = tonumber(ARGV[1])
local maxx = tonumber(ARGV[4])
local networks = tonumber(redis.call('HGET', KEYS[1], '#networks') or '0')
local counted = networks
local dropped = 0
local admitted = {}
local function admit(f)
  local bar = string.find(f, '|', 1, true)
  if string.sub(f, bar + 1, bar + 2) ~= 'x:' then return true end
  local mark = '#x' .. string.sub(f, 1, string.find(f, '\t', bar + 3, true) - 1)
  local ok = admitted[mark]
  if ok == nil then
    ok = redis.call('HEXISTS', KEYS[1], mark) == 1
    if not ok then
      local n = tonumber(redis.call('HGET', KEYS[1], '#x' .. string.sub(f, 1, bar)) or '0')
      if n < maxx then
        ok = true
        redis.call('HSET', KEYS[1], mark, 1)
        redis.call('HINCRBY', KEYS[1], '#x' .. string.sub(f, 1, bar), 1)
      end
    end
    admitted[mark] = ok
  end
  return ok
end
local i = 5
while i <= #ARGV do
  local callsField, n = ARGV[i], tonumber(ARGV[i + 1])
  local known = redis.call('HEXISTS', KEYS[1], callsField) == 1
  if not known and networks < max then
    networks = networks + 1
    known = true
  end
  for j = i + 2, i + 2 * n, 2 do
    if known then
      local f = ARGV[j]
      if string.byte(f, -1) == 126 then
        if admit(f) then redis.call('HINCRBYFLOAT', KEYS[1], f, ARGV[j + 1]) end
      elseif string.byte(f, string.find(f, '|', 1, true) + 1) ~= 120 or admit(f) then
        redis.call('HINCRBY', KEYS[1], f, ARGV[j + 1])
      end
    elseif ARGV[j] == callsField then
      dropped = dropped + tonumber(ARGV[j + 1])
    end
  end
  i = i + 2 + 2 * n
end
if networks ~= counted then redis.call('HSET', KEYS[1], '#networks', networks) end
if dropped > 0 and ARGV[3] == '1' then redis.call('HINCRBY', KEYS[1], '#dropped', dropped) end
redis.call('PEXPIREAT', KEYS[1], ARGV[2])
return dropped
`;
const flushBucket = luaScript(FLUSH_BUCKET);
const readDropped = luaScript(`return redis.call('HGET', KEYS[1], '#dropped')`);

/** Networks per script call: bounds the time one flush holds Redis. */
const NETWORKS_PER_SCRIPT = 500;

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
  const flushMs = positiveOption(options.flushMs ?? 1_000, 'flushMs', false);
  const maxBuffered = positiveOption(options.maxBuffered ?? 100_000, 'maxBuffered', true);
  const retention = {
    day: positiveOption(options.retentionDays ?? 90, 'retentionDays', false) * DAY,
    hour: positiveOption(options.maxHours ?? 168, 'maxHours', false) * HOUR,
  } as const;
  const maxNetworks = positiveOption(options.maxNetworksPerDay ?? 10_000, 'maxNetworksPerDay', true);
  const now = options.now ?? Date.now;
  const dmps = options.dmps ?? [];
  const maxExperiments = positiveOption(
    options.maxExperimentsPerNetwork ?? DEFAULT_MAX_EXPERIMENTS,
    'maxExperimentsPerNetwork',
    true,
  );
  const index = { day: `${prefix}days`, hour: `${prefix}hours` } as const;
  const bucketKey = (g: ReportGranularity, period: string) => `${prefix}${g === 'day' ? 'd' : 'h'}:${period}`;
  const periodEnd = (g: ReportGranularity, period: string) =>
    Date.parse(g === 'day' ? `${period}T00:00:00Z` : `${period}:00:00Z`) + (g === 'day' ? DAY : HOUR);

  // Redis key → field → count; `entries` counts fields here and in flight, the bound of `maxBuffered`.
  let buffer = new Map<string, Map<string, number>>();
  const periodsOfKey = new Map<string, { g: ReportGranularity; period: string }>();
  let entries = 0;
  let droppedUnflushed = 0;
  const m = { droppedCalls: 0, cappedCalls: 0, flushes: 0, flushErrors: 0, commands: 0 };
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

  // The hour calls arrive in: its two buckets, and the calls counted since, per network → counter → calls (the
  // counters are constant strings, so no field string is built per call). Folded into both buckets when the hour
  // changes and before each flush. `entries` already counts every (network, counter) staged here. Networks are
  // keyed by the fields' prefix `<network>|`, a string that is no number: V8 hashes small integers without a seed,
  // so caller-chosen network ids could all collide in a Map keyed by them (report.ts, networkKey).
  let staged:
    | {
        periods: object;
        day: Map<string, number>;
        hour: Map<string, number>;
        networks: Map<string, Map<string, number>>;
      }
    | undefined;

  function fold() {
    const s = staged;
    if (!s) return;
    staged = undefined;
    for (const [net, counts] of s.networks) {
      for (const [counter, n] of counts) {
        const f = net + counter;
        s.day.set(f, (s.day.get(f) ?? 0) + n);
        s.hour.set(f, (s.hour.get(f) ?? 0) + n);
      }
    }
  }

  function add(call: AdCall, at?: Date) {
    const fields = countersOf(call, dmps);
    let amounts: number[] | undefined;
    if (call.experiments) experimentCountersOf(call, fields, (amounts = fields.map(() => 1)));
    if (!count(call, fields, at, amounts)) {
      m.droppedCalls++;
      droppedUnflushed++;
    }
  }

  /**
   * Stages one (or `amounts[i]`) for each of `counters` of the call's network; false when the buffer is full
   * (nothing staged).
   */
  function count(call: AdCall, counters: readonly string[], at: Date | undefined, amounts?: number[]): boolean {
    const periods = periodsOf(at ?? now());
    let s = staged;
    if (s?.periods !== periods) {
      fold();
      const { day, hour } = periods;
      s = staged = {
        periods,
        day: fieldsFor(bucketKey('day', day), 'day', day),
        hour: fieldsFor(bucketKey('hour', hour), 'hour', hour),
        networks: new Map(),
      };
    }
    const net = `${call.networkId ?? ''}|`;
    let counts = s.networks.get(net);
    let fresh = 0;
    for (let i = 0; i < counters.length; i++) {
      if (counts?.has(counters[i])) continue;
      // A counter new this hour: one new entry in the hour bucket, and one in the day bucket unless it has it.
      const f = net + counters[i];
      fresh += (s.hour.has(f) ? 0 : 1) + (s.day.has(f) ? 0 : 1);
    }
    if (entries + fresh > maxBuffered) return false;
    entries += fresh;
    if (!counts) s.networks.set(net, (counts = new Map<string, number>()));
    for (let i = 0; i < counters.length; i++) {
      const c = counters[i];
      counts.set(c, (counts.get(c) ?? 0) + (amounts?.[i] ?? 1));
    }
    return true;
  }

  /** Puts a failed flush's counts back, merging with what arrived meanwhile. */
  function restore(key: string, field: string, n: number) {
    const { g, period } = periodsOfKey.get(key)!;
    const f = fieldsFor(key, g, period);
    if (f.has(field)) entries--; // merged into an entry that is already counted
    f.set(field, (f.get(field) ?? 0) + n);
  }

  async function send(): Promise<void> {
    fold();
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
    const scripts: [string, [string, number][], Promise<unknown>][] = [];
    // All issued in one tick: node-redis writes them as one pipeline (one round trip per node).
    for (const [key, fields] of batch) {
      const { g, period } = periodsOfKey.get(key)!;
      // Counters by network (the field's part up to `|`, a key that is no number: see `staged`): the script admits
      // or drops each network whole.
      const byNetwork = new Map<string, [string, number][]>();
      for (const [field, n] of fields) {
        const net = field.slice(0, field.indexOf('|') + 1);
        let list = byNetwork.get(net);
        if (!list) byNetwork.set(net, (list = []));
        list.push([field, n]);
      }
      const networks = [...byNetwork];
      for (let start = 0; start < networks.length; start += NETWORKS_PER_SCRIPT) {
        const args = [
          String(maxNetworks),
          String(periodEnd(g, period) + retention[g]),
          g === 'day' ? '1' : '0',
          String(maxExperiments),
        ];
        const sent: [string, number][] = [];
        for (const [net, list] of networks.slice(start, start + NETWORKS_PER_SCRIPT)) {
          args.push(`${net}calls`, String(list.length));
          for (const [field, n] of list) args.push(field, String(n));
          sent.push(...list);
        }
        scripts.push([key, sent, attempt(() => flushBucket(client, [key], args))]);
      }
      ops.push(attempt(() => client.zAdd(index[g], { score: periodEnd(g, period), value: period })));
    }
    const droppedOp = dropped ? attempt(() => client.hIncrBy(`${prefix}meta`, 'dropped', dropped)) : undefined;
    for (const g of ['day', 'hour'] as const) {
      ops.push(attempt(() => client.zRemRangeByScore(index[g], '-inf', t - retention[g])));
    }
    m.commands += scripts.length + ops.length + (droppedOp ? 1 : 0);
    // Handled now: on a cluster one node can fail at once while the others answer later, and a rejection left
    // unhandled until then would end the process.
    const opsSettled = Promise.allSettled(ops);
    const droppedSettled = droppedOp?.then(
      () => true,
      () => false,
    );
    const settled = await Promise.allSettled(scripts.map((c) => c[2]));
    let failed = 0;
    fold(); // calls staged meanwhile are in the buckets first, so that a restored count merges with them exactly
    settled.forEach((s, i) => {
      const [key, sent] = scripts[i];
      if (s.status === 'rejected') {
        failed++;
        for (const [field, n] of sent) restore(key, field, n);
      } else {
        entries -= sent.length;
        if (periodsOfKey.get(key)?.g === 'day') m.cappedCalls += Number(s.value) || 0;
      }
    });
    if (droppedSettled && !(await droppedSettled)) {
      failed++;
      droppedUnflushed += dropped;
    }
    // Expiry and index updates are repeated by every flush touching the bucket: a failure here loses no count.
    await opsSettled;
    for (const key of batch.keys()) if (!buffer.has(key)) periodsOfKey.delete(key);
    if (failed) {
      m.flushErrors++;
      const reason: unknown = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected')?.reason;
      throw new Error(`Redis report: flush failed; ${entries} counter entries kept for the next flush`, {
        cause: reason,
      });
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

  const timer = setInterval(() => void flush().catch(() => {}), flushMs);
  timer.unref?.(); // the report's timer alone must not keep a process alive

  async function read(g: ReportGranularity): Promise<ReportJson> {
    await flush().catch(() => {}); // best effort: a read still answers with what the fleet flushed
    const t = now();
    const [periods, days] = await Promise.all([
      client.zRangeByScore(index[g], t - retention[g], '+inf'),
      client.zRangeByScore(index.day, t - retention.day, '+inf'),
    ]);
    const [hashes, meta, capped] = await Promise.all([
      Promise.all(periods.map((p) => client.hGetAll(bucketKey(g, p)))),
      client.hGetAll(`${prefix}meta`),
      Promise.all(days.map((d) => readDropped(client, [bucketKey('day', d)], []))),
    ]);
    const rows: ReportRow[] = [];
    periods.forEach((period, i) => {
      const byNetwork = new Map<string, Counters>();
      for (const [field, value] of Object.entries(hashes[i] ?? {})) {
        if (field.startsWith('#')) continue; // the bucket's own bookkeeping: `#networks`, `#dropped`
        const bar = field.indexOf('|');
        const net = field.slice(0, bar + 1); // `<network>|`, no number (see `staged`)
        let c = byNetwork.get(net);
        if (!c) byNetwork.set(net, (c = new Map<string, number>()));
        c.set(field.slice(bar + 1), Number(value));
      }
      for (const [net, c] of byNetwork)
        rows.push(rowOf(period, net === '|' ? null : Number(net.slice(0, -1)), c, dmps));
    });
    const overCap = capped.reduce((n: number, v) => n + (Number(v) || 0), 0);
    return { rows: sortRows(rows), droppedCalls: Number(meta?.dropped ?? 0) + overCap };
  }

  return {
    add,
    addForwarding(call, explanation, at) {
      count(call, forwardingCountersOf(explanation), at);
    },
    addOutcome(call, outcome, at) {
      const fields: string[] = [];
      const amounts: number[] = [];
      outcomeCountersOf(call, outcome, fields, amounts);
      if (fields.length) count(call, fields, at, amounts);
    },
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
