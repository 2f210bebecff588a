/**
 * A frequency-cap store shared by a fleet through Redis. One sorted set per user × item holds the times of the
 * impressions kept; one Lua script counts every window and records, atomically per decision, so servers racing for
 * a user's last impression serve it exactly once. Concurrent decisions of one process are coalesced: they go out
 * together as one script call (docs/ad-server.md, "Caps in Redis").
 *
 * Keys: `<prefix>{<user>}<item>`, for example `eidkit:fc:{pid:3f2a…}deal:42`. The user sits in the hash tag, so
 * all the keys of one decision (one user, one or several items) share a Redis Cluster hash slot.
 */
import { randomBytes } from 'node:crypto';
import { enqueue } from './store.js';
import type { CapCheck, CapOutcome, FrequencyCapStore, QueuedDecision, QueueingStore } from './store.js';
import {
  checkPrefix,
  clusterKeySlot,
  given,
  isRedisCluster,
  luaScript,
  requireUntimedRedisClient,
} from '../common/index.js';
import type { RedisClientInput } from '../common/index.js';

/** Options of {@link createRedisFrequencyCapStore}. */
export interface RedisFrequencyCapStoreOptions {
  /** Key prefix (default `eidkit:fc:`); no `{` or `}`. */
  prefix?: string;
  /** Most impressions kept per user × item (oldest trimmed first); caps above it cannot be enforced. Default 1,000. */
  maxEventsPerKey?: number;
  /** Most decisions carried by one script call (default 64): bounds how long one call holds Redis. */
  maxBatch?: number;
  /**
   * Most decisions waiting to be sent (default 10,000); beyond it a decision fails at once and the capper's
   * policy answers. With the batches in flight, this bounds the memory a stalled Redis can take.
   */
  maxPending?: number;
  /**
   * Longest wait for one script call, in ms (default 5,000, node-redis's own default per command); then its
   * decisions fail (the capper's `timeoutMs` answered them long before) and its place in flight is freed for the
   * next. The store bounds its calls itself, so node-redis's per-command timer, ~20 µs of CPU per command, is off.
   */
  commandTimeoutMs?: number;
  /** Whether the client is a Redis Cluster: batches are then grouped by hash slot. Default: detected. */
  cluster?: boolean;
}

// Several decisions in one call, each decided and counted in turn, exactly as if it had run alone.
// ARGV: maxEvents, member base, then every decision in one JSON array of numbers (one argument: each argument costs
// the client a write; Redis's cjson decodes it in C, several times cheaper than splitting words in Lua): per decision
// mode (0 check, 1 take, 2 record), now, key count, then per key: keepMs, window count, (since, max) per window
// (since "-inf" for lifetime).
// KEYS: the decisions' keys in order. Returns per decision: allowed (1/0), then the count of each window of each key.
// A check only counts (ZCOUNT from each window's start ignores older impressions); recording trims what is older than
// the longest window, adds, bounds the set to maxEvents and extends the key's expiry.
const TAKE = luaScript(`
local maxEvents, base = tonumber(ARGV[1]), ARGV[2]
local f = cjson.decode(ARGV[3])
local out, k, d, a = {}, 0, 0, 1
while a <= #f do
  d = d + 1
  local mode, now, n = f[a], f[a + 1], f[a + 2]
  a = a + 3
  local at, keep = #out + 1, {}
  out[at] = 1
  for c = 1, n do
    local key = KEYS[k + c]
    keep[c] = f[a]
    local windows = f[a + 1]
    a = a + 2
    for w = 1, windows do
      local count = redis.call('ZCOUNT', key, f[a], '+inf')
      if count >= f[a + 1] then out[at] = 0 end
      out[#out + 1] = count
      a = a + 2
    end
  end
  if mode == 2 or (mode == 1 and out[at] == 1) then
    local member = base .. ':' .. d
    for c = 1, n do
      local key = KEYS[k + c]
      redis.call('ZREMRANGEBYSCORE', key, '-inf', '(' .. (now - keep[c]))
      redis.call('ZADD', key, now, member)
      local extra = redis.call('ZCARD', key) - maxEvents
      if extra > 0 then redis.call('ZREMRANGEBYRANK', key, 0, extra - 1) end
      if redis.call('PTTL', key) < keep[c] then redis.call('PEXPIRE', key, keep[c]) end
    end
  end
  k = k + n
end
return out
`);

// `{` and `}` inside a user or item would move the hash tag or make two keys collide: escape them (and `%`).
const escapeKeyPart = (s: string) =>
  /[{}%]/.test(s) ? s.replace(/[{}%]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`) : s;

/** A script call in flight: its decisions and when it was sent. */
interface InFlightCall {
  batch: QueuedDecision[];
  sentAt: number;
  done: boolean;
}

const MODES = { check: 0, take: 1, record: 2 } as const;
// Redis wants whole milliseconds for an expiry, and Lua writes numbers with 14 significant digits: a key is kept for
// a whole number of ms, at most ten years (a custom `windowMs` may be fractional or huge).
const MAX_KEEP_MS = 10 * 366 * 86_400_000;
const keepOf = (ms: number) => Math.min(Math.ceil(ms), MAX_KEEP_MS);

const positiveInt = (value: unknown, setting: string, fallback: number): number => {
  const n = value ?? fallback;
  if (!Number.isInteger(n) || (n as number) < 1) {
    throw new TypeError(`${setting} must be an integer >= 1 (got ${given(value)})`);
  }
  return n as number;
};

/**
 * Creates a frequency-cap store over Redis, for `createFrequencyCapper({ store })`. Decisions (`check`, `take`,
 * `record`) made while a script call is in flight wait for it and then go out together, at most `maxBatch` per
 * EVALSHA (on a cluster, one per hash slot); each is decided atomically, as if alone. Keys expire with the cap's
 * longest window; per user × item Redis holds at most the impressions of that window (≤ the window's max when
 * served through `take`), never more than `maxEventsPerKey`.
 * @example
 * const redis = createClient({ url: process.env.REDIS_URL, disableOfflineQueue: true });
 * await redis.on('error', log).connect();
 * const capper = createFrequencyCapper({ store: createRedisFrequencyCapStore(redis) });
 */
export function createRedisFrequencyCapStore(
  redis: RedisClientInput,
  options: RedisFrequencyCapStoreOptions = {},
): FrequencyCapStore &
  QueueingStore & {
    /** The Redis key of one user × item. */
    keyOf(user: string, item: string): string;
  } {
  const client = requireUntimedRedisClient(redis, 'createRedisFrequencyCapStore');
  const prefix = checkPrefix(options.prefix ?? 'eidkit:fc:');
  const maxEvents = positiveInt(options.maxEventsPerKey, 'maxEventsPerKey', 1_000);
  const maxBatch = positiveInt(options.maxBatch, 'maxBatch', 64);
  const maxPending = positiveInt(options.maxPending, 'maxPending', 10_000);
  const commandTimeoutMs = positiveInt(options.commandTimeoutMs, 'commandTimeoutMs', 5_000);
  const cluster = options.cluster ?? isRedisCluster(redis);
  // Impressions at the same millisecond must stay distinct members: a per-process random part, the call's
  // sequence number and the decision's place in the call.
  const origin = randomBytes(6).toString('base64url');
  let seq = 0;
  const keyOf = (user: string, item: string) => `${prefix}{${escapeKeyPart(user)}}${escapeKeyPart(item)}`;
  const splitKey = (key: string) => {
    // The capper calls `apply` with user and item apart; a direct count/record caller's key splits at its last '|'.
    const bar = key.lastIndexOf('|');
    return bar < 0 ? { user: key, item: '' } : { user: key.slice(0, bar), item: key.slice(bar + 1) };
  };

  let queue: QueuedDecision[] = [];
  // The script calls in flight (at most maxInFlight).
  const calls = new Set<InFlightCall>();
  let scheduled = false;
  // At most this many calls in flight, so that a stalled Redis holds at most maxInFlight × maxBatch decisions there.
  const maxInFlight = 8;

  function schedule() {
    if (scheduled) return;
    scheduled = true;
    setImmediate(flush);
  }

  // One call per event-loop turn while none is in flight; while one is, the decisions made meanwhile wait for its
  // reply (at most one round trip) unless a full batch is ready. Fewer, larger calls: less CPU per decision.
  function flush() {
    scheduled = false;
    if (calls.size > 0 && queue.length < maxBatch) return;
    while (queue.length > 0 && calls.size < maxInFlight) {
      const taken = queue.length <= maxBatch ? queue : queue.slice(0, maxBatch);
      queue = queue.length <= maxBatch ? [] : queue.slice(maxBatch);
      if (!cluster) send(taken);
      else for (const group of bySlot(taken)) send(group);
    }
  }

  function bySlot(batch: QueuedDecision[]): QueuedDecision[][] {
    const groups = new Map<number, QueuedDecision[]>();
    for (const p of batch) {
      const slot = clusterKeySlot(keyOf(p.checks[0].user, p.checks[0].item));
      const group = groups.get(slot);
      if (group) group.push(p);
      else groups.set(slot, [p]);
    }
    return [...groups.values()];
  }

  function send(batch: QueuedDecision[]) {
    const keys: string[] = [];
    let decisions = '';
    for (const p of batch) {
      let arg = `${decisions ? ',' : '['}${MODES[p.mode]},${p.at},${p.checks.length}`;
      for (const c of p.checks) {
        keys.push(keyOf(c.user, c.item));
        arg += `,${keepOf(c.keepMs)},${c.windows.length}`;
        for (const w of c.windows) arg += `,${w.since === -Infinity ? '"-inf"' : w.since},${w.max}`;
      }
      decisions += arg;
    }
    const args = [String(maxEvents), `${origin}:${(seq = (seq + 1) % 1e9)}`, `${decisions}]`];
    const call = { batch, sentAt: performance.now(), done: false };
    calls.add(call);
    watch();
    TAKE(client, keys, args).then(
      (reply) => {
        if (!finished(call)) return;
        // Per decision: allowed, then a count per window of each key. Anything else (a client or proxy answering
        // otherwise) fails the batch rather than deciding from it.
        let expected = 0;
        for (const p of batch) for (const c of p.checks) expected += c.windows.length;
        if (!Array.isArray(reply) || reply.length !== expected + batch.length) {
          const error = new Error('createRedisFrequencyCapStore: unexpected reply from the cap script');
          for (const p of batch) p.settle(error, undefined);
          return;
        }
        const r = reply as unknown[];
        let i = 0;
        for (const p of batch) {
          const allowed = Number(r[i++]) === 1;
          const counts: number[][] = [];
          for (const c of p.checks) {
            const row: number[] = [];
            for (let w = 0; w < c.windows.length; w++) row.push(Number(r[i++]));
            counts.push(row);
          }
          p.settle(undefined, { allowed, counts });
        }
      },
      (e: unknown) => {
        if (finished(call)) for (const p of batch) p.settle(e, undefined);
      },
    );
  }

  /** Frees a call's place in flight, once: false when the watchdog already failed it. */
  function finished(call: InFlightCall): boolean {
    if (call.done) return false;
    call.done = true;
    calls.delete(call);
    if (queue.length > 0) schedule();
    return true;
  }

  // One unref'd timer while calls are in flight fails those older than commandTimeoutMs (a stuck connection).
  let watchdog: ReturnType<typeof setInterval> | undefined;
  function watch() {
    if (watchdog) return;
    watchdog = setInterval(
      () => {
        const t = performance.now();
        for (const call of calls) {
          if (t - call.sentAt < commandTimeoutMs || !finished(call)) continue;
          const error = new Error(`createRedisFrequencyCapStore: no answer from Redis in ${commandTimeoutMs} ms`);
          for (const p of call.batch) p.settle(error, undefined);
        }
        if (calls.size === 0) {
          clearInterval(watchdog);
          watchdog = undefined;
        }
      },
      Math.max(10, Math.min(1_000, commandTimeoutMs / 4)),
    );
    watchdog.unref();
  }

  function accept(decision: QueuedDecision) {
    if (decision.checks.length === 0) return decision.settle(undefined, { allowed: true, counts: [] });
    if (queue.length >= maxPending) {
      const message = `createRedisFrequencyCapStore: ${maxPending} decisions already waiting (maxPending)`;
      return decision.settle(new Error(message), undefined);
    }
    queue.push(decision);
    schedule();
  }

  function apply(mode: 'check' | 'take' | 'record', checks: readonly CapCheck[], at: number): Promise<CapOutcome> {
    return new Promise((resolve, reject) =>
      accept({ mode, checks, at, settle: (e, outcome) => (outcome ? resolve(outcome) : reject(e)) }),
    );
  }

  return {
    keyOf,
    apply,
    [enqueue]: accept,
    async count(key, since) {
      const { user, item } = splitKey(key);
      const { counts } = await apply(
        'check',
        [{ key, user, item, keepMs: Number.MAX_SAFE_INTEGER, windows: [{ since, max: 1 }] }],
        Date.now(),
      );
      return counts[0][0];
    },
    async record(key, at, ttlMs) {
      const { user, item } = splitKey(key);
      await apply('record', [{ key, user, item, keepMs: ttlMs, windows: [] }], at);
    },
  };
}
