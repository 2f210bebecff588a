/**
 * Frequency capping by an alternative id: impressions per user per time frame per item.
 * The user is the publisher `uid` when present (it overrides `pid`), else the `pid` cookie (the default),
 * else — only when the network activated one provider and the call carries neither — that provider's id.
 * See docs/wire-format.md#frequency-capping-by-an-alternative-id.
 */
import { providerById, providerForSource } from '../../core/index.js';
import type { Provider } from '../../core/index.js';
import type { AdCall } from '../parse/index.js';
import { resolveCap } from './windows.js';
import type { FrequencyCap, ResolvedCap } from './windows.js';
import { MemoryFrequencyCapStore } from './memory-store.js';
import { enqueue, isQueueing } from './store.js';
import type { CapCheck, CapOutcome, FrequencyCapStore } from './store.js';
import { given } from '../common/index.js';

/** Which id identified the user for capping. */
export type CappingUserKind = 'uid' | 'pid' | 'alternative' | 'none';

/** The user a cap is counted against. `key` is absent when no id was available (`kind: 'none'`). */
export interface CappingUser {
  kind: CappingUserKind;
  /** Store key prefix: `uid:<network>:<uid>`, `pid:<pid>` or `alt:<provider id>:<id>`. */
  key?: string;
  /** The alternative provider used, for `kind: 'alternative'`. */
  provider?: Provider;
}

/** Per network, the one provider activated as the alternative to the cookie (network id → provider id or source). */
export type AlternativeIdConfig = Readonly<Record<number, number | string>>;

export type { CapCheck, CapOutcome, FrequencyCapStore } from './store.js';
export { MemoryFrequencyCapStore } from './memory-store.js';
export type { MemoryStoreOptions } from './memory-store.js';

/** Options of {@link createFrequencyCapper}. */
export interface FrequencyCapperOptions {
  /** The counting store. Default: a new {@link MemoryFrequencyCapStore}. */
  store?: FrequencyCapStore;
  /** Networks that activated an alternative id provider (one provider per network). */
  alternativeIds?: AlternativeIdConfig;
  /** What to do when the call carries no usable id: `'serve'` uncapped (default) or `'block'` capped items. */
  withoutUser?: 'serve' | 'block';
  /**
   * Longest wait for an asynchronous store per decision, in ms (default {@link DEFAULT_CAP_TIMEOUT_MS}); then
   * `onStoreError` applies. Chosen from measurements: docs/ad-server.md, "When the store is down or slow".
   */
  timeoutMs?: number;
  /**
   * When the store fails or is slower than `timeoutMs`: `'serve'` the item (default: no ad call lost) while this
   * process has served the user fewer than the cap without the store's answer (the shadow count), or `'block'` it.
   */
  onStoreError?: 'serve' | 'block';
  /** Most user × item keys of the shadow count (least recently used evicted first). Default 10,000. */
  shadowMaxKeys?: number;
  /** Most impressions served without the store's answer waiting to be written to it. Default 10,000. */
  maxReplay?: number;
  /** Clock, for tests. */
  now?: () => number;
}

/** One window's state in a decision. */
export interface CapWindowState {
  item: string;
  /** The window, for example `3/day`, `10/rolling week`, `2/86400000ms`. */
  window: string;
  max: number;
  /** Impressions counted before this decision (0 when there is no user id or the store failed). */
  count: number;
}

/** The outcome of a cap check. */
export interface CapDecision {
  /** True when the item may be served to this user now. */
  allowed: boolean;
  /** Impressions already counted in the first window (0 when no user id). */
  count: number;
  /** Every window of every cap asked about. */
  windows: CapWindowState[];
  /** The user the cap was counted against. */
  user: CappingUser;
  /** Set when the store failed or timed out and `onStoreError` decided instead. */
  storeError?: 'timeout' | 'error';
}

/** Counters of a capper since it was created. */
export interface CapperMetrics {
  /** Decisions asked of the store (check, take, record). */
  storeCalls: number;
  /** Of which the store did not answer within `timeoutMs`. */
  timeouts: number;
  /** Of which the store failed (rejected or threw). */
  errors: number;
  /** Decisions made by the `onStoreError` policy: served. */
  servedOnError: number;
  /** Decisions made by the `onStoreError` policy: blocked (by `'block'`, or by the shadow count). */
  blockedOnError: number;
  /** Of `blockedOnError`, those the shadow count refused: this process had served the cap without the store. */
  shadowCapped: number;
  /** Impressions served without the store's answer, written to the store since. */
  replayed: number;
  /** Impressions served without the store's answer, waiting for the store to answer again. */
  replayPending: number;
  /** Impressions served without the store's answer and never written: more than `maxReplay` were waiting. */
  replayDropped: number;
}

/** Checks and records capped impressions for ad calls; each method takes one cap or several (all must allow). */
export interface FrequencyCapper {
  /** The user id capping uses for this call (precedence uid > pid > alternative id > none). */
  userOf(call: AdCall): CappingUser;
  /** Whether the call's user may see the item(s) once more; records nothing. */
  check(call: AdCall, cap: FrequencyCap | readonly FrequencyCap[]): Promise<CapDecision>;
  /**
   * Decides and, when allowed, records the impression in one step. With a store that has `apply` (memory, Redis)
   * it is atomic: servers racing for the last impression serve it exactly once.
   */
  take(call: AdCall, cap: FrequencyCap | readonly FrequencyCap[]): Promise<CapDecision>;
  /** Counts one impression of the item(s) for the call's user (nothing when there is no user id); never rejects. */
  record(call: AdCall, cap: FrequencyCap | readonly FrequencyCap[]): Promise<CappingUser>;
  /** Store calls, timeouts, errors and policy decisions so far. */
  metrics(): CapperMetrics;
  /**
   * Waits for the store's late answers (those after `timeoutMs`) and writes what was served without the store's
   * answer; resolves when done, or when the store fails again (those impressions stay queued). For shutdown and tests.
   */
  flush(): Promise<void>;
}

/** Resolves and checks the alternative-id configuration; throws a TypeError naming the bad entry. */
export function resolveAlternativeIds(config: AlternativeIdConfig = {}): Map<number, Provider> {
  const out = new Map<number, Provider>();
  for (const [network, ref] of Object.entries(config)) {
    // Only canonical network ids: '01234' or ' 1234' would otherwise land on network 1234 as a second provider,
    // silently replacing the first (a network has one provider for capping, no more).
    if (!/^[1-9]\d{0,9}$/.test(network)) throw new TypeError(`alternativeIds: "${network}" is not a network id`);
    if (typeof ref !== 'number' && typeof ref !== 'string') {
      // An array or object here usually means several providers for one network: the service allows one.
      throw new TypeError(
        `alternativeIds[${network}]: one provider per network (a provider id or a source), got ${given(ref)}`,
      );
    }
    const provider = typeof ref === 'number' ? providerById(ref) : providerForSource(ref);
    if (provider.id === 0)
      throw new TypeError(`alternativeIds[${network}]: ${given(ref)} is not a registered provider`);
    out.set(Number(network), provider);
  }
  return out;
}

/**
 * The user capping counts against: `uid` (scoped to its network) > `pid` cookie >
 * the network's one activated alternative provider's first id, used only when the call has neither > none.
 */
export function cappingUserOf(call: AdCall, alternatives: ReadonlyMap<number, Provider> = new Map()): CappingUser {
  if (call.uid !== undefined) return { kind: 'uid', key: `uid:${call.networkId ?? ''}:${call.uid}` };
  if (call.pid !== undefined) return { kind: 'pid', key: `pid:${call.pid}` };
  const provider = call.networkId !== undefined ? alternatives.get(call.networkId) : undefined;
  if (provider) {
    const eid = call.eids.find((e) => providerForSource(e.source).id === provider.id);
    const id = eid?.uids[0]?.id;
    if (id) return { kind: 'alternative', key: `alt:${provider.id}:${id}`, provider };
  }
  return { kind: 'none' };
}

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
  // What this process served while the store did not answer, per user × item: it stops serving at the cap.
  const shadow = new MemoryFrequencyCapStore({ maxKeys: shadowMaxKeys });
  // Impressions served without the store's answer that the store has not counted: written when it answers again.
  let replay: { checks: CapCheck[]; at: number }[] = [];
  let replaying: Promise<void> | undefined;
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
    const queue = () => {
      if (replay.length < maxReplay) replay.push({ checks, at });
      else m.replayDropped++;
    };
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

  /** Writes the queued impressions, a few hundred at a time; stops at the first failure (they stay queued). */
  function writeReplay(): Promise<void> {
    replaying ??= (async () => {
      while (replay.length > 0) {
        const batch = replay.slice(0, 256);
        replay = replay.slice(256);
        const results = await Promise.allSettled(batch.map((r) => new Promise((ok) => ok(recordIn(r.checks, r.at)))));
        const failed = batch.filter((_, i) => results[i].status === 'rejected');
        m.replayed += batch.length - failed.length;
        if (failed.length > 0) {
          replay = [...failed, ...replay];
          break;
        }
      }
    })().finally(() => (replaying = undefined));
    return replaying;
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
      if (allowed && !shadow.apply(mode, checks, at).allowed) {
        allowed = false;
        m.shadowCapped++;
      }
      m[allowed ? 'servedOnError' : 'blockedOnError']++;
      if (allowed && mode === 'take') reconcile(result.late, (v) => v.allowed, checks, at);
      return { allowed, count: 0, windows: windowsWith(resolved), user, storeError: result.error };
    }
    if (replay.length > 0) void writeReplay();
    const { allowed, counts } = result.value;
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
      } else if (replay.length > 0) void writeReplay();
      return user;
    },
    metrics: () => ({ ...m, replayPending: replay.length }),
    async flush() {
      if (lateWaiting > 0) await new Promise<void>((wake) => idle.push(wake));
      await writeReplay();
    },
  };
}
