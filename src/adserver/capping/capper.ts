/**
 * Frequency capping by an alternative id: impressions per user per time frame per item.
 * The user is the publisher `uid` when present (it overrides `pid`), else the `pid` cookie (the default),
 * else — only when the network activated one provider and the call carries neither — that provider's id.
 * See docs/wire-format.md#frequency-capping-by-an-alternative-id.
 */
import type { AdCall } from '../parse/index.js';
import { resolveCap } from './windows.js';
import type { FrequencyCap, ResolvedCap } from './windows.js';
import { MemoryFrequencyCapStore } from './memory-store.js';
import { enqueue, isQueueing, shardOf } from './store.js';
import { ShadowCount } from './shadow.js';
import { ReplayQueues } from './replay.js';
import type { CapCheck, CapOutcome } from './store.js';
import { given } from '../common/index.js';
import { cappingUserOf, resolveAlternativeIds } from './user.js';
import type { CappingUser } from './user.js';
import type { CapDecision, CapWindowState, FrequencyCapper, FrequencyCapperOptions } from './capper-types.js';

export type { AlternativeIdConfig, CappingUser, CappingUserKind } from './user.js';
export { cappingUserOf, resolveAlternativeIds } from './user.js';
export type {
  CapDecision,
  CapperMetrics,
  CapWindowState,
  FrequencyCapper,
  FrequencyCapperOptions,
} from './capper-types.js';
export type { CapCheck, CapOutcome, FrequencyCapStore } from './store.js';
export { MemoryFrequencyCapStore } from './memory-store.js';
export type { MemoryStoreOptions } from './memory-store.js';

/** The default `timeoutMs` of {@link createFrequencyCapper}: docs/ad-server.md, "When the store is down or slow". */
export const DEFAULT_CAP_TIMEOUT_MS = 100;

/** What a bounded store call gave: its value, or why not and (after a timeout) its late answer, if any. */
type Bounded<T> = { value: T } | { error: 'timeout' | 'error'; late?: Promise<{ value: T } | undefined> };

/**
 * Creates a frequency capper. Caps are validated on first use and cached; define them with
 * `defineFrequencyCap` to fail at start-up instead.
 * @example
 * const capper = createFrequencyCapper({
 *   store: createRedisFrequencyCapStore(redis),
 *   alternativeIds: { 1234: 'id5-sync.com' },
 * });
 * const cap = defineFrequencyCap({ item: 'deal:42', windows: [{ max: 3, per: 'day' }, { max: 10, per: 'week' }] });
 * if ((await capper.take(call, cap)).allowed) serve();
 */
export function createFrequencyCapper(options: FrequencyCapperOptions = {}): FrequencyCapper {
  const store = options.store ?? new MemoryFrequencyCapStore();
  const queueing = isQueueing(store) ? store : undefined;
  const alternatives = resolveAlternativeIds(options.alternativeIds);
  const now = options.now ?? Date.now;
  const blockWithoutUser = options.withoutUser === 'block';
  const timeoutMs = options.timeoutMs ?? DEFAULT_CAP_TIMEOUT_MS;
  if (typeof timeoutMs !== 'number' || !(timeoutMs > 0))
    throw new TypeError(`timeoutMs must be a number of milliseconds > 0 (got ${String(timeoutMs)})`);
  const onStoreError = options.onStoreError ?? 'serve';
  if (onStoreError !== 'serve' && onStoreError !== 'block')
    throw new TypeError(`onStoreError must be 'serve' or 'block' (got ${JSON.stringify(onStoreError)})`);
  if (options.withoutUser !== undefined && options.withoutUser !== 'serve' && options.withoutUser !== 'block') {
    throw new TypeError(`withoutUser must be 'serve' or 'block' (got ${JSON.stringify(options.withoutUser)})`);
  }
  const shadowMaxKeys = options.shadowMaxKeys ?? 10_000;
  const maxReplay = options.maxReplay ?? 10_000;
  for (const [name, n] of [
    ['shadowMaxKeys', shadowMaxKeys],
    ['maxReplay', maxReplay],
  ] as const) {
    if (!Number.isInteger(n) || n < 1) throw new TypeError(`${name} must be an integer >= 1 (got ${given(n)})`);
  }
  const m = {
    storeCalls: 0,
    timeouts: 0,
    errors: 0,
    servedOnError: 0,
    blockedOnError: 0,
    shadowCapped: 0,
    replayed: 0,
    replayDropped: 0,
  };
  const userOf = (call: AdCall) => cappingUserOf(call, alternatives);
  // Per user × item, what the store last answered and what this process served since without its answer: it stops
  // serving at the cap.
  const shadow = new ShadowCount(shadowMaxKeys);
  // Impressions served without the store's answer that the store has not counted: written when it answers again.
  const shards = queueing?.[shardOf]?.bind(queueing) ?? (() => '');
  const replay = new ReplayQueues((checks, at) => recordIn(checks, at), shards, maxReplay, m);
  let lateWaiting = 0;
  const idle: (() => void)[] = [];

  // Decisions waiting for an asynchronous store, oldest first: they share one timeout, so their deadlines come in
  // the order they were made and one timer serves them all (cheaper than a timer per decision).
  let waiting: { deadline: number; expire(): void }[] = [];
  let waitingHead = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  // Unref'd: a pending deadline alone does not keep the process running.
  const arm = (ms: number) => (timer = setTimeout(expireDue, ms)).unref();
  function expireDue() {
    timer = undefined;
    const t = performance.now();
    const due: { expire(): void }[] = [];
    while (waitingHead < waiting.length && waiting[waitingHead].deadline <= t) due.push(waiting[waitingHead++]);
    // Drop the expired entries from the array once they are most of it.
    if (waitingHead === waiting.length || (waitingHead > 1024 && waitingHead * 2 > waiting.length)) {
      waiting = waiting.slice(waitingHead);
      waitingHead = 0;
    }
    if (waitingHead < waiting.length) arm(waiting[waitingHead].deadline - t);
    // Decided after the event loop's next poll: when the process was starved of CPU, the deadline and the store's
    // reply are both due, and a reply already waiting in the socket must win.
    if (due.length > 0)
      setImmediate(() => {
        for (const d of due) d.expire();
      });
  }

  /** Runs the store without it throwing, or taking longer than `timeoutMs` when it is asynchronous. */
  function bounded<T>(run: () => T | Promise<T>): Bounded<T> | Promise<Bounded<T>> {
    m.storeCalls++;
    let r: T | Promise<T>;
    try {
      r = run();
    } catch {
      m.errors++;
      return { error: 'error' };
    }
    if (!(r instanceof Promise)) return { value: r };
    const pending = r;
    return new Promise((resolve) => {
      const w = new Waiter(resolve);
      pending.then(
        (value) => w.answer({ value }),
        () => w.answer(undefined),
      );
    });
  }

  /** A decision handed to a queueing store (the Redis one): no promise of the store's, its callback answers. */
  function queued(mode: 'check' | 'take', checks: CapCheck[], at: number): Promise<Bounded<CapOutcome>> {
    m.storeCalls++;
    return new Promise((resolve) => {
      const w = new Waiter<CapOutcome>(resolve);
      try {
        queueing![enqueue]({ mode, checks, at, settle: (_error, outcome) => w.answer(outcome && { value: outcome }) });
      } catch {
        w.answer(undefined);
      }
    });
  }

  /**
   * One asynchronous store call: its timeout entry and where the store's answer goes. After the timeout the answer
   * still matters (`late`): it tells whether the store counted what the policy served.
   */
  class Waiter<T> {
    readonly deadline = performance.now() + timeoutMs;
    private late?: (late: { value: T } | undefined) => void;
    private decided = false;
    constructor(private readonly done: (result: Bounded<T>) => void) {
      waiting.push(this);
      if (!timer) arm(timeoutMs);
    }

    /** The store's answer: its value, or undefined when it failed. */
    answer(result: { value: T } | undefined) {
      if (this.late) return this.late(result);
      if (this.decided) return;
      this.decided = true;
      if (!result) m.errors++;
      this.done(result ?? { error: 'error' });
    }

    expire() {
      if (this.decided) return;
      this.decided = true;
      m.timeouts++;
      this.done({ error: 'timeout', late: new Promise((l) => (this.late = l)) });
    }
  }

  /** Queues an impression served without the store's answer unless the store's late answer shows it counted it. */
  function reconcile<T>(
    late: Promise<{ value: T } | undefined> | undefined,
    counted: (v: T) => boolean,
    checks: CapCheck[],
    at: number,
  ) {
    const queue = () => replay.push({ checks, at });
    if (!late) {
      queue();
      return;
    }
    lateWaiting++;
    void late.then((r) => {
      if (!r || !counted(r.value)) queue();
      if (--lateWaiting === 0) for (const wake of idle.splice(0)) wake();
    });
  }

  const recordIn = (checks: readonly CapCheck[], at: number): unknown =>
    // A store answers synchronously (the in-memory one) or with a promise: Promise.all takes both.
    // eslint-disable-next-line @typescript-eslint/await-thenable
    store.apply ? store.apply('record', checks, at) : Promise.all(checks.map((c) => store.record(c.key, at, c.keepMs)));

  function checksOf(user: CappingUser, caps: readonly ResolvedCap[], at: number): CapCheck[] {
    return caps.map((r) => ({
      key: `${user.key}|${r.item}`,
      user: user.key!,
      item: r.item,
      keepMs: r.keepMs,
      windows: r.windows.map((w) => ({ since: w.since(at), max: w.max })),
    }));
  }

  /** Every window of every cap with its count (0 where the store gave none). Loops: this runs on every ad call. */
  function windowsWith(resolved: readonly ResolvedCap[], counts?: number[][]): CapWindowState[] {
    const out: CapWindowState[] = [];
    for (let i = 0; i < resolved.length; i++) {
      const r = resolved[i];
      for (let j = 0; j < r.windows.length; j++) {
        const w = r.windows[j];
        out.push({ item: r.item, window: w.label, max: w.max, count: counts?.[i][j] ?? 0 });
      }
    }
    return out;
  }

  /** A decision as a promise, without an async function's extra ticks: whatever throws (a bad cap) rejects it. */
  function decide(
    mode: 'check' | 'take',
    call: AdCall,
    cap: FrequencyCap | readonly FrequencyCap[],
  ): Promise<CapDecision> {
    try {
      return decideNow(mode, call, cap);
    } catch (e) {
      return Promise.reject(e);
    }
  }

  function decideNow(
    mode: 'check' | 'take',
    call: AdCall,
    cap: FrequencyCap | readonly FrequencyCap[],
  ): Promise<CapDecision> {
    // A bad cap throws here, before any store call.
    const resolved = Array.isArray(cap)
      ? (cap as readonly FrequencyCap[]).map(resolveCap)
      : [resolveCap(cap as FrequencyCap)];
    const user = userOf(call);
    if (!user.key)
      return Promise.resolve({ allowed: !blockWithoutUser, count: 0, windows: windowsWith(resolved), user });
    const at = now();
    const checks = checksOf(user, resolved, at);
    const result = queueing
      ? queued(mode, checks, at)
      : bounded(() => (store.apply ? store.apply(mode, checks, at) : fallback(mode, checks, at)));
    // A synchronous store (the in-memory one) is answered without waiting for another tick.
    return result instanceof Promise
      ? result.then((r) => finish(mode, checks, at, resolved, user, r))
      : Promise.resolve(finish(mode, checks, at, resolved, user, result));
  }

  /** The decision from the store's outcome, or from the `onStoreError` policy and the shadow count when it failed. */
  function finish(
    mode: 'check' | 'take',
    checks: CapCheck[],
    at: number,
    resolved: readonly ResolvedCap[],
    user: CappingUser,
    result: Bounded<CapOutcome>,
  ): CapDecision {
    if ('error' in result) {
      let allowed = onStoreError === 'serve';
      // The counts are the shadow count's (what the store last answered and what this process served since): a floor
      // of the real ones, never 0 for a user this process saw. With 'block' it is only read.
      const seen = shadow.apply(allowed ? mode : 'check', checks, at);
      if (allowed && !seen.allowed) {
        allowed = false;
        m.shadowCapped++;
      }
      m[allowed ? 'servedOnError' : 'blockedOnError']++;
      if (allowed && mode === 'take') reconcile(result.late, (v) => v.allowed, checks, at);
      const count = seen.counts[0]?.[0] ?? 0;
      return { allowed, count, windows: windowsWith(resolved, seen.counts), user, storeError: result.error };
    }
    const { allowed, counts } = result.value;
    shadow.seed(checks, counts, at, allowed && mode === 'take');
    if (replay.pending > 0) replay.answered(checks[0].user);
    return { allowed, count: counts[0]?.[0] ?? 0, windows: windowsWith(resolved, counts), user };
  }

  // Stores with only count/record: the check and the record are separate steps (not atomic across servers).
  async function fallback(
    mode: 'check' | 'take' | 'record',
    checks: readonly CapCheck[],
    at: number,
  ): Promise<CapOutcome> {
    // eslint-disable-next-line @typescript-eslint/await-thenable -- a store may answer synchronously
    const counts = await Promise.all(checks.map((c) => Promise.all(c.windows.map((w) => store.count(c.key, w.since)))));
    const allowed = checks.every((c, i) => c.windows.every((w, j) => counts[i][j] < w.max));
    if (mode === 'record' || (mode === 'take' && allowed)) {
      // eslint-disable-next-line @typescript-eslint/await-thenable -- a store may answer synchronously
      await Promise.all(checks.map((c) => store.record(c.key, at, c.keepMs)));
    }
    return { allowed, counts };
  }

  return {
    userOf,
    check: (call, cap) => decide('check', call, cap),
    take: (call, cap) => decide('take', call, cap),
    async record(call, cap) {
      const caps = Array.isArray(cap) ? (cap as readonly FrequencyCap[]) : [cap as FrequencyCap];
      const resolved = caps.map(resolveCap); // a bad cap throws here, before any store call
      const user = userOf(call);
      if (!user.key) return user;
      const at = now();
      const checks = checksOf(user, resolved, at);
      const result = await bounded(() => recordIn(checks, at));
      if ('error' in result) {
        for (const c of checks) shadow.record(c.key, at, c.keepMs);
        reconcile(result.late, () => true, checks, at);
      } else if (replay.pending > 0) replay.answered(checks[0].user);
      return user;
    },
    metrics: () => ({ ...m, replayPending: replay.pending }),
    async flush() {
      if (lateWaiting > 0) await new Promise<void>((wake) => idle.push(wake));
      await replay.flush();
    },
  };
}
