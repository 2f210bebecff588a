/**
 * A frequency-cap store shared by a fleet through Redis. One sorted set per user × item holds the times of the
 * impressions kept; one Lua script counts every window and records, atomically per decision, so servers racing for
 * a user's last impression serve it exactly once. Concurrent decisions of one process are coalesced: they go out
 * together as one script call (docs/ad-server.md, "Caps in Redis").
 *
 * Keys: `<prefix>{<user>}<item>`, for example `eidkit:fc:{pid:3f2a…}deal:42`. The user sits in the hash tag, so
 * all the keys of one decision (one user, one or several items) share a Redis Cluster hash slot. On a cluster, the
 * decisions of one batch go out as one call per primary, each carrying the decisions of every slot it serves.
 */
import { enqueue, shardOf } from './store.js';
import type { CapCheck, CapOutcome, FrequencyCapStore, QueuedDecision, QueueingStore } from './store.js';
import type { RedisFrequencyCapStoreMetrics } from './redis-script.js';
import { MAX_GROUP, alike, entryOf } from './redis-entries.js';
import type { Entry } from './redis-entries.js';
import { ScriptCalls, bySlot } from './redis-calls.js';
import type { Shard } from './redis-calls.js';
import {
  checkPrefix,
  clusterKeySlot,
  hashSlotOf,
  given,
  isRedisCluster,
  clusterRouter,
  requireUntimedRedisClient,
} from '../common/index.js';
import type { ClusterRouter, RedisClientInput } from '../common/index.js';

/** Options of {@link createRedisFrequencyCapStore}. */
export interface RedisFrequencyCapStoreOptions {
  /** Key prefix (default `eidkit:fc:`); no `{` or `}`. */
  prefix?: string;
  /** Most impressions kept per user × item (oldest trimmed first); caps above it cannot be enforced. Default 1,000. */
  maxEventsPerKey?: number;
  /**
   * Most entries carried by one script call (default 64): bounds how long one call holds Redis. An entry is one
   * decision, or up to 64 identical ones made together (same user, caps, windows and millisecond), counted once.
   */
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
  /**
   * Whether the client is a Redis Cluster (default: detected): a batch then goes out as one call per primary, or,
   * where the client's map of primaries cannot be read, one call per hash slot.
   */
  cluster?: boolean;
}

// `{` and `}` inside a user or item would move the hash tag or make two keys collide: escape them (and `%`).
const escapeKeyPart = (s: string) =>
  s.includes('{') || s.includes('}') || s.includes('%')
    ? s.replace(/[{}%]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    : s;

const positiveInt = (value: unknown, setting: string, fallback: number): number => {
  const n = value ?? fallback;
  if (!Number.isInteger(n) || (n as number) < 1) {
    throw new TypeError(`${setting} must be an integer >= 1 (got ${given(value)})`);
  }
  return n as number;
};

const newShard = (): Shard => ({ queue: [], open: new Map(), inFlight: 0 });

// At most this many calls in flight per queue, so that a stalled Redis holds at most maxInFlight × maxBatch decisions
// per primary there.
const MAX_IN_FLIGHT = 8;
// The queue of the decisions sent slot by slot through the cluster client.
const SLOT_BY_SLOT = '';

/**
 * The decisions accepted and not yet sent: a lone Redis has one queue; on a cluster, decisions wait in `unrouted`
 * until the next flush puts each in its primary's. Per queue, one call per event-loop turn while none is in flight;
 * while one is, the decisions made meanwhile wait for its reply (at most one round trip) unless a full batch is
 * ready. Fewer, larger calls: less CPU per decision.
 */
class DecisionQueues {
  private readonly single = newShard();
  private readonly shards = new Map<string, Shard>();
  private unrouted: QueuedDecision[] = [];
  // Decisions accepted and not yet sent: with those waiting to be sent again, at most maxPending.
  private waiting = 0;
  private scheduled = false;

  constructor(
    private readonly calls: ScriptCalls,
    private readonly router: ClusterRouter | undefined,
    private readonly keyOf: (user: string, item: string) => string,
    private readonly o: { cluster: boolean; maxBatch: number; maxPending: number },
    private readonly m: RedisFrequencyCapStoreMetrics,
  ) {}

  accept(decision: QueuedDecision): void {
    if (decision.checks.length === 0) return decision.settle(undefined, { allowed: true, counts: [] });
    if (this.waiting + this.calls.retrying >= this.o.maxPending) {
      const message = `createRedisFrequencyCapStore: ${this.o.maxPending} decisions already waiting (maxPending)`;
      return decision.settle(new Error(message), undefined);
    }
    this.m.decisions++;
    this.waiting++;
    if (this.o.cluster) this.unrouted.push(decision);
    else this.enter(this.single, decision);
    this.schedule();
  }

  /** A call of `shard` finished: what waits may go. */
  freed(shard: Shard): void {
    if (shard.queue.length > 0 || this.unrouted.length > 0) this.schedule();
  }

  private schedule() {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  private flush() {
    this.scheduled = false;
    if (!this.o.cluster) return this.drain(this.single);
    if (this.unrouted.length > 0) {
      const taken = this.unrouted;
      this.unrouted = [];
      for (const d of taken) this.route(d);
    }
    for (const shard of this.shards.values()) this.drain(shard);
  }

  /**
   * Queues a decision: with an identical one waiting to be sent (a check or a take of the same user), in its entry.
   * Compared before anything is encoded: a decision that joins an entry costs no string.
   */
  private enter(shard: Shard, d: QueuedDecision, slot = -1) {
    const user = d.checks[0].user;
    const same = shard.open.get(user);
    if (same && !same.sent && same.decisions.length < MAX_GROUP && d.mode !== 'record' && alike(same.decisions[0], d)) {
      same.decisions.push(d);
      return;
    }
    const e = entryOf(d, this.keyOf, slot);
    if (d.mode !== 'record') shard.open.set(user, e);
    shard.queue.push(e);
  }

  private route(d: QueuedDecision) {
    const anySlot = this.calls.anySlot;
    // The hash slot of a decision's keys: they all hold the user as their hash tag.
    const { user, item } = d.checks[0];
    const slot = !anySlot ? -1 : user ? hashSlotOf(escapeKeyPart(user)) : clusterKeySlot(this.keyOf(user, item));
    const primary = anySlot ? this.router!.primaryOf(slot) : undefined;
    const key = primary?.address ?? SLOT_BY_SLOT;
    let shard = this.shards.get(key);
    if (!shard) this.shards.set(key, (shard = newShard()));
    if (primary) shard.primary = primary;
    this.enter(shard, d, slot);
  }

  private drain(shard: Shard) {
    const q = shard.queue;
    const { cluster, maxBatch } = this.o;
    if (q.length === 0 || (shard.inFlight > 0 && q.length < maxBatch)) return;
    let from = 0;
    while (from < q.length && shard.inFlight < MAX_IN_FLIGHT) {
      const batch: Entry[] = from === 0 && q.length <= maxBatch ? q : q.slice(from, from + maxBatch);
      from += batch.length;
      for (const e of batch) {
        e.sent = true;
        this.waiting -= e.decisions.length;
        const user = e.decisions[0].checks[0].user;
        if (shard.open.get(user) === e) shard.open.delete(user);
      }
      if (!cluster) this.calls.sendDeclared(batch, shard);
      else if (shard.primary) this.calls.sendToPrimary(batch, shard);
      else for (const group of bySlot(batch, false)) this.calls.sendDeclared(group, shard);
    }
    shard.queue = from >= q.length ? [] : q.slice(from);
  }
}

/**
 * Creates a frequency-cap store over Redis, for `createFrequencyCapper({ store })`. Decisions (`check`, `take`,
 * `record`) made while a script call is in flight wait for it and then go out together, at most `maxBatch` per
 * EVALSHA (on a cluster, one call per primary carries the decisions of all its slots); each is decided atomically, as
 * if alone. Keys expire with the cap's longest window; per user × item Redis holds at most the impressions of that
 * window (≤ the window's max when served through `take`), never more than `maxEventsPerKey`.
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
    /** Calls, failures and redirections so far. */
    metrics(): RedisFrequencyCapStoreMetrics;
  } {
  const client = requireUntimedRedisClient(redis, 'createRedisFrequencyCapStore');
  const prefix = checkPrefix(options.prefix ?? 'eidkit:fc:');
  const maxEvents = positiveInt(options.maxEventsPerKey, 'maxEventsPerKey', 1_000);
  const maxBatch = positiveInt(options.maxBatch, 'maxBatch', 64);
  const maxPending = positiveInt(options.maxPending, 'maxPending', 10_000);
  const commandTimeoutMs = positiveInt(options.commandTimeoutMs, 'commandTimeoutMs', 5_000);
  const cluster = options.cluster ?? isRedisCluster(redis);
  // On a cluster: the client's map of primaries, for one call per primary; without one, calls go slot by slot.
  const router = cluster ? clusterRouter(redis) : undefined;
  const keyOf = (user: string, item: string) => `${prefix}{${escapeKeyPart(user)}}${escapeKeyPart(item)}`;
  const m: RedisFrequencyCapStoreMetrics = { decisions: 0, calls: 0, failedCalls: 0, rerouted: 0, retries: 0 };
  const freed = (shard: Shard) => queues.freed(shard);
  const calls = new ScriptCalls(
    { client, cluster, maxEvents, commandTimeoutMs, metrics: m, freed },
    router !== undefined,
  );
  const queues = new DecisionQueues(calls, router, keyOf, { cluster, maxBatch, maxPending }, m);

  function apply(mode: 'check' | 'take' | 'record', checks: readonly CapCheck[], at: number): Promise<CapOutcome> {
    return new Promise((resolve, reject) =>
      queues.accept({ mode, checks, at, settle: (e, outcome) => (outcome ? resolve(outcome) : reject(e)) }),
    );
  }

  return {
    keyOf,
    apply,
    metrics: () => ({ ...m }),
    [enqueue]: (decision) => queues.accept(decision),
    // The primary serving a user's keys now (empty on a lone Redis): the capper writes back per primary.
    [shardOf]: (user: string) => router?.primaryOf(clusterKeySlot(keyOf(user, '')))?.address ?? '',
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

// The capper calls `apply` with user and item apart; a direct count/record caller's key splits at its last '|'.
const splitKey = (key: string) => {
  const bar = key.lastIndexOf('|');
  return bar < 0 ? { user: key, item: '' } : { user: key.slice(0, bar), item: key.slice(bar + 1) };
};
