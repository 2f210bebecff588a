/**
 * The Redis report's flush: the buffer's counts sent as one pipeline (every command issued in one tick), each
 * bucket's counts through a Lua script that applies the caps inside Redis ({@link FLUSH_BUCKET}), so they hold
 * exactly however many processes write. Counts of a failed script go back to the buffer for the next flush: an
 * outage loses nothing until the buffer's bound.
 */
import type { RedisClientLike } from '../common/index.js';
import { luaScript } from '../common/index.js';
import type { PendingBucket, PendingCounts } from './redis-buffer.js';
import { periodEnd } from './redis-keys.js';
import type { RedisReportKeys } from './redis-keys.js';
import type { ReportGranularity } from './report-types.js';

/**
 * Adds one flush's counts to one bucket hash, within the network cap, atomically.
 * KEYS[1]: the bucket. ARGV: the cap, the expiry time (ms), '1' to count dropped calls in `#dropped` (day buckets),
 * the cap of experiments per network, then per network: its `<network>|calls` field, the number of counters, and
 * each counter's field and increment. A network is counted when the bucket knows it (its `calls` field exists) or
 * still has room (`#networks` counts them); returns the calls dropped. An experiment's counter
 * (`<network>|x:<id>\t…`) is added when the bucket knows the experiment for that network (`#x<network>|x:<id>`) or
 * the network still has room for one (`#x<network>|` counts them). A counter ending in `~` is a sum of
 * non-integers, added with HINCRBYFLOAT.
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

/** Networks per script call: bounds the time one flush holds Redis. */
const NETWORKS_PER_SCRIPT = 500;

/** The caps and expiries a flush applies. */
export interface FlushSettings {
  maxNetworks: number;
  maxExperiments: number;
  /** How long a bucket is kept after its period ends, per granularity (ms). */
  retention: Readonly<Record<ReportGranularity, number>>;
}

/** One script call of a flush: its bucket, its arguments, the counts it carries (put back should it fail). */
export interface ScriptCall {
  key: string;
  bucket: PendingBucket;
  args: string[];
  sent: [string, number][];
}

/**
 * The script calls adding one bucket's counts: its counters grouped by network (the field's part up to `|`), so
 * that the script admits or drops each network whole, at most {@link NETWORKS_PER_SCRIPT} networks a call.
 */
export function scriptCallsOf(key: string, bucket: PendingBucket, settings: FlushSettings): ScriptCall[] {
  const { g, period } = bucket;
  const byNetwork = new Map<string, [string, number][]>();
  for (const [field, n] of bucket.fields) {
    const net = field.slice(0, field.indexOf('|') + 1);
    let list = byNetwork.get(net);
    if (!list) byNetwork.set(net, (list = []));
    list.push([field, n]);
  }
  const networks = [...byNetwork];
  const calls: ScriptCall[] = [];
  for (let start = 0; start < networks.length; start += NETWORKS_PER_SCRIPT) {
    const args = [
      String(settings.maxNetworks),
      String(periodEnd(g, period) + settings.retention[g]),
      g === 'day' ? '1' : '0',
      String(settings.maxExperiments),
    ];
    const sent: [string, number][] = [];
    for (const [net, list] of networks.slice(start, start + NETWORKS_PER_SCRIPT)) {
      args.push(`${net}calls`, String(list.length));
      for (const [field, n] of list) args.push(field, String(n));
      sent.push(...list);
    }
    calls.push({ key, bucket, args, sent });
  }
  return calls;
}

/** A command's promise; a client that throws instead of rejecting (closed, misconfigured) must not lose the batch. */
function attempt(command: () => Promise<unknown>): Promise<unknown> {
  try {
    return command();
  } catch (e) {
    return Promise.reject(e);
  }
}

/** Flush counters of one process. */
export interface FlushMetrics {
  cappedCalls: number;
  flushes: number;
  flushErrors: number;
  commands: number;
}

/** Sends a report's buffer to Redis, one flush at a time. */
export class ReportFlusher {
  readonly metrics: FlushMetrics = { cappedCalls: 0, flushes: 0, flushErrors: 0, commands: 0 };
  private inFlight: Promise<void> | undefined;

  constructor(
    private readonly client: RedisClientLike,
    private readonly keys: RedisReportKeys,
    private readonly settings: FlushSettings,
    private readonly pending: PendingCounts,
    private readonly now: () => number,
  ) {}

  /** One flush at a time; a flush asked for during one runs right after it. */
  flush(): Promise<void> {
    const run = (this.inFlight ?? Promise.resolve())
      .catch(() => {})
      .then(() => this.send())
      .finally(() => {
        if (this.inFlight === run) this.inFlight = undefined;
      });
    this.inFlight = run;
    return run;
  }

  private async send(): Promise<void> {
    const { buckets, dropped } = this.pending.take();
    if (buckets.size === 0 && dropped === 0) return;
    const { client, keys, settings } = this;
    const t = this.now();
    // All issued in one tick: node-redis writes them as one pipeline (one round trip per node).
    const scripts: ScriptCall[] = [];
    const replies: Promise<unknown>[] = [];
    const ops: Promise<unknown>[] = [];
    for (const [key, bucket] of buckets) {
      for (const s of scriptCallsOf(key, bucket, settings)) {
        scripts.push(s);
        replies.push(attempt(() => flushBucket(client, [key], s.args)));
      }
      const { g, period } = bucket;
      ops.push(attempt(() => client.zAdd(keys.index[g], { score: periodEnd(g, period), value: period })));
    }
    const droppedOp = dropped ? attempt(() => client.hIncrBy(keys.meta, 'dropped', dropped)) : undefined;
    for (const g of ['day', 'hour'] as const)
      ops.push(attempt(() => client.zRemRangeByScore(keys.index[g], '-inf', t - settings.retention[g])));
    this.metrics.commands += scripts.length + ops.length + (droppedOp ? 1 : 0);
    // Handled now: on a cluster one node can fail at once while the others answer later, and a rejection left
    // unhandled until then would end the process.
    const opsSettled = Promise.allSettled(ops);
    const droppedSettled = droppedOp?.then(
      () => undefined,
      (reason: unknown) => ({ reason }),
    );
    let failed = this.settle(scripts, await Promise.allSettled(replies));
    const droppedFailed = await droppedSettled;
    if (droppedFailed) {
      failed ??= droppedFailed;
      this.pending.restoreDropped(dropped);
    }
    // Expiry and index updates are repeated by every flush touching the bucket: a failure here loses no count.
    await opsSettled;
    if (failed !== undefined) {
      this.metrics.flushErrors++;
      throw new Error(`Redis report: flush failed; ${this.pending.entries} counter entries kept for the next flush`, {
        cause: failed.reason,
      });
    }
    this.metrics.flushes++;
  }

  /** Counts the scripts that reached Redis, puts back those that failed; returns the first failure. */
  private settle(scripts: ScriptCall[], settled: PromiseSettledResult<unknown>[]): { reason: unknown } | undefined {
    let failed: { reason: unknown } | undefined;
    settled.forEach((s, i) => {
      const { key, bucket, sent } = scripts[i];
      if (s.status === 'rejected') {
        failed ??= { reason: s.reason };
        this.pending.restore(key, bucket, sent);
      } else {
        this.pending.sent(sent.length);
        if (bucket.g === 'day') this.metrics.cappedCalls += Number(s.value) || 0;
      }
    });
    return failed;
  }
}
