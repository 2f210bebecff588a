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
import { randomBytes } from 'node:crypto';
import { enqueue, shardOf } from './store.js';
import { TAKE, TAKE_ANY_SLOT } from './redis-script.js';
import { MAX_GROUP, alike, encode, entryOf, settleEntries } from './redis-entries.js';
import type { Entry } from './redis-entries.js';
import type { RedisFrequencyCapStoreMetrics } from './redis-script.js';

export type { RedisFrequencyCapStoreMetrics } from './redis-script.js';
import type { CapCheck, CapOutcome, FrequencyCapStore, QueuedDecision, QueueingStore } from './store.js';
import {
  checkPrefix,
  clusterKeySlot,
  hashSlotOf,
  given,
  isRedisCluster,
  clusterRouter,
  requireUntimedRedisClient,
} from '../common/index.js';
import type { ClusterPrimary, RedisClientInput } from '../common/index.js';

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

/** A script call in flight: its entries, the primary's queue it counts against, when it was sent. */
interface InFlightCall {
  entries: readonly Entry[];
  shard?: Shard;
  sentAt: number;
  done: boolean;
}

/**
 * Where decisions wait to be sent: one queue for a lone Redis, one per primary of a cluster (so a stalled primary
 * holds back its own decisions only), and one for decisions sent slot by slot through the cluster client (no map
 * yet, or a server without allow-cross-slot-keys).
 */
interface Shard {
  queue: Entry[];
  /** The last entry queued per user while it is not sent: an identical decision joins it. */
  open: Map<string, Entry>;
  inFlight: number;
  primary?: ClusterPrimary;
}

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
  let anySlot = router !== undefined;
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
  const m: RedisFrequencyCapStoreMetrics = { decisions: 0, calls: 0, failedCalls: 0, rerouted: 0, retries: 0 };

  // A lone Redis: one queue. A cluster: decisions wait in `unrouted` until the next flush puts each in its primary's.
  const single: Shard = { queue: [], open: new Map(), inFlight: 0 };
  const shards = new Map<string, Shard>();
  const SLOT_BY_SLOT = '';
  let unrouted: QueuedDecision[] = [];
  // Decisions accepted and not yet sent (queued, or waiting to be sent again): at most maxPending.
  let waiting = 0;
  // The script calls in flight.
  const calls = new Set<InFlightCall>();
  let scheduled = false;
  // At most this many calls in flight per queue, so that a stalled Redis holds at most maxInFlight × maxBatch
  // decisions per primary there.
  const maxInFlight = 8;

  function schedule() {
    if (scheduled) return;
    scheduled = true;
    setImmediate(flush);
  }

  // Per queue, one call per event-loop turn while none is in flight; while one is, the decisions made meanwhile wait
  // for its reply (at most one round trip) unless a full batch is ready. Fewer, larger calls: less CPU per decision.
  function flush() {
    scheduled = false;
    if (!cluster) return drain(single);
    if (unrouted.length > 0) {
      const taken = unrouted;
      unrouted = [];
      for (const d of taken) route(d);
    }
    for (const shard of shards.values()) drain(shard);
  }

  const slotOfEntry = (e: Entry) => (e.slot < 0 ? (e.slot = clusterKeySlot(e.keys[0])) : e.slot);

  /**
   * Queues a decision: with an identical one waiting to be sent (a check or a take of the same user), in its entry.
   * Compared before anything is encoded: a decision that joins an entry costs no string.
   */
  function enter(shard: Shard, d: QueuedDecision, slot = -1) {
    const user = d.checks[0].user;
    const same = shard.open.get(user);
    if (same && !same.sent && same.decisions.length < MAX_GROUP && d.mode !== 'record' && alike(same.decisions[0], d)) {
      same.decisions.push(d);
      return;
    }
    const e = entryOf(d, keyOf, slot);
    if (d.mode !== 'record') shard.open.set(user, e);
    shard.queue.push(e);
  }

  // The hash slot of a decision's keys: they all hold the user as their hash tag.
  const slotOf = (d: QueuedDecision) => {
    const { user, item } = d.checks[0];
    return user ? hashSlotOf(escapeKeyPart(user)) : clusterKeySlot(keyOf(user, item));
  };

  function route(d: QueuedDecision) {
    const slot = anySlot ? slotOf(d) : -1;
    const primary = anySlot ? router!.primaryOf(slot) : undefined;
    const key = primary?.address ?? SLOT_BY_SLOT;
    let shard = shards.get(key);
    if (!shard) shards.set(key, (shard = { queue: [], open: new Map(), inFlight: 0 }));
    if (primary) shard.primary = primary;
    enter(shard, d, slot);
  }

  function drain(shard: Shard) {
    const q = shard.queue;
    if (q.length === 0 || (shard.inFlight > 0 && q.length < maxBatch)) return;
    let from = 0;
    while (from < q.length && shard.inFlight < maxInFlight) {
      const batch = from === 0 && q.length <= maxBatch ? q : q.slice(from, from + maxBatch);
      from += batch.length;
      for (const e of batch) {
        e.sent = true;
        waiting -= e.decisions.length;
        const user = e.decisions[0].checks[0].user;
        if (shard.open.get(user) === e) shard.open.delete(user);
      }
      if (!cluster) sendDeclared(batch, shard);
      else if (shard.primary) sendToPrimary(batch, shard);
      else for (const group of bySlot(batch, false)) sendDeclared(group, shard);
    }
    shard.queue = from >= q.length ? [] : q.slice(from);
  }

  /** Entries grouped by hash slot; `alone`: one call per entry (a slot moving: keeps one user's wait short). */
  function bySlot(entries: readonly Entry[], alone: boolean): Entry[][] {
    if (alone) return entries.map((e) => [e]);
    const groups = new Map<number, Entry[]>();
    for (const e of entries) {
      const slot = slotOfEntry(e);
      const group = groups.get(slot);
      if (group) group.push(e);
      else groups.set(slot, [e]);
    }
    return [...groups.values()];
  }

  const head = () => [String(maxEvents), `${origin}:${(seq = (seq + 1) % 1e9)}`];

  /** Tracks one call: its place in its queue's flight, the watchdog, its reply or error (once). */
  function start(
    entries: readonly Entry[],
    shard: Shard | undefined,
    run: () => Promise<unknown>,
    onReply: (reply: unknown) => void,
    onError: (e: unknown) => void,
  ) {
    const call: InFlightCall = { entries, shard, sentAt: performance.now(), done: false };
    if (shard) shard.inFlight++;
    calls.add(call);
    m.calls++;
    watch();
    let pending: Promise<unknown>;
    try {
      pending = run();
    } catch (e) {
      pending = Promise.reject(e); // a client that throws instead of rejecting (closed, misconfigured)
    }
    pending.then(
      (reply) => {
        if (finished(call)) onReply(reply);
      },
      (e: unknown) => {
        if (!finished(call)) return;
        m.failedCalls++;
        onError(e);
      },
    );
  }

  /**
   * One call with its keys declared, through the client as given: a lone Redis, or one slot of a cluster, which the
   * client routes and redirects itself. On a cluster, TRYAGAIN / ASK / MOVED reaching the store are tried again,
   * one decision per call, until `commandTimeoutMs` after the decisions were first sent.
   */
  function sendDeclared(entries: readonly Entry[], shard?: Shard, since = performance.now(), tries = 0) {
    const { keys, json } = encode(entries);
    start(
      entries,
      shard,
      () => TAKE(client, keys, [...head(), json]),
      (reply) => answer(entries, reply, since),
      (e) => {
        if (cluster && isRedirection(e) && performance.now() - since < commandTimeoutMs)
          retryLater(entries, since, tries);
        else fail(entries, e);
      },
    );
  }

  /** One call to one primary carrying the decisions of all its slots (no key declared: see the cluster script). */
  function sendToPrimary(entries: readonly Entry[], shard: Shard) {
    const primary = shard.primary!;
    const { keys, json } = encode(entries);
    const since = performance.now();
    const args = [...head(), json, ...keys];
    start(
      entries,
      shard,
      async () => TAKE_ANY_SLOT(await primary.client(), [], args),
      (reply) => answer(entries, reply, since),
      (e) => {
        const message = messageOf(e);
        if (/Error compiling script|shebang|Unknown lua/i.test(message)) {
          // A server without script flags (before Redis 7): slot by slot from now on.
          anySlot = false;
          reroute(entries, since);
        } else if (/^(READONLY|MOVED|ASK|TRYAGAIN)\b/.test(message)) {
          // The node no longer serves these slots (a failover): their owners, through the client, which learns the map.
          reroute(entries, since);
        } else {
          // The node does not answer, or the cluster is down: the first decision goes through the client, whose own
          // recovery (reconnection, new map) this triggers; the rest fail now rather than each costing a failed call.
          reroute(entries.slice(0, 1), since);
          fail(entries.slice(1), e);
        }
      },
    );
  }

  /** Sends entries again to their slots' owners, keys declared. */
  function reroute(entries: readonly Entry[], since: number) {
    for (const e of entries) m.rerouted += e.decisions.length;
    for (const group of bySlot(entries, false)) sendDeclared(group, undefined, since);
  }

  function retryLater(entries: readonly Entry[], since: number, tries: number) {
    m.retries++;
    let n = 0;
    for (const e of entries) n += e.decisions.length;
    waiting += n;
    // 1, 2, 4 … 32 ms: a slot's keys move in a few ms; the decision's time is bounded by `since`.
    const delay = Math.min(2 ** tries, 32);
    setTimeout(() => {
      waiting -= n;
      for (const group of bySlot(entries, entries.length > 1)) sendDeclared(group, undefined, since, tries + 1);
    }, delay).unref();
  }

  function fail(entries: readonly Entry[], e: unknown) {
    for (const entry of entries) for (const p of entry.decisions) p.settle(e, undefined);
  }

  /** Settles each decision from the script's reply; entries answered -1 (another node's keys) go to their owner. */
  function answer(entries: readonly Entry[], reply: unknown, since: number) {
    const elsewhere = settleEntries(entries, reply);
    if (elsewhere instanceof Error) fail(entries, elsewhere);
    else if (elsewhere.length > 0) reroute(elsewhere, since);
  }

  /** Frees a call's place in flight, once: false when the watchdog already failed it. */
  function finished(call: InFlightCall): boolean {
    if (call.done) return false;
    call.done = true;
    calls.delete(call);
    if (call.shard) {
      call.shard.inFlight--;
      if (call.shard.queue.length > 0 || unrouted.length > 0) schedule();
    }
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
          m.failedCalls++;
          fail(call.entries, new Error(`createRedisFrequencyCapStore: no answer from Redis in ${commandTimeoutMs} ms`));
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
    if (waiting >= maxPending) {
      const message = `createRedisFrequencyCapStore: ${maxPending} decisions already waiting (maxPending)`;
      return decision.settle(new Error(message), undefined);
    }
    m.decisions++;
    waiting++;
    if (cluster) unrouted.push(decision);
    else enter(single, decision);
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
    metrics: () => ({ ...m }),
    [enqueue]: accept,
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

const messageOf = (e: unknown): string => String((e as Error | undefined)?.message ?? e);

/**
 * Whether a cluster client passed on a redirection (directly, or wrapped after its own tries: node-redis's
 * "Too many Cluster redirections" with the last error as its cause, ioredis's with it in the message).
 */
function isRedirection(e: unknown): boolean {
  const text = `${messageOf(e)} ${messageOf((e as { cause?: unknown } | undefined)?.cause)}`;
  return /(^|\s|ReplyError: )(TRYAGAIN|ASK \d+|MOVED \d+)/.test(text);
}
