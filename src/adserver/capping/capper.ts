/**
 * Frequency capping by an alternative id: impressions per user per time frame per item.
 * The user is the publisher `uid` when present (it overrides `pid`), else the `pid` cookie (the default),
 * else — only when the network activated one provider and the call carries neither — that provider's id.
 * See docs/wire-format.md#frequency-capping-by-an-alternative-id.
 *
 * The rule lives in rule.ts (pure); this file gathers its facts and acts on its ruling: the store's answer within
 * `timeoutMs` (store-calls.ts), else the shadow count (shadow.ts), and what was served without the store's answer
 * written back when it answers again (replay.ts).
 */
import type { AdCall } from '../parse/index.js';
import { resolveCap } from './windows.js';
import type { FrequencyCap, ResolvedCap } from './windows.js';
import { MemoryFrequencyCapStore } from './memory-store.js';
import { isQueueing, shardOf } from './store.js';
import type { CapCheck, CapOutcome, FrequencyCapStore } from './store.js';
import { ShadowCount } from './shadow.js';
import { ReplayQueues } from './replay.js';
import { StoreCalls } from './store-calls.js';
import type { Bounded } from './store-calls.js';
import { capReason, checksOf, decideCap } from './rule.js';
import type { CapFacts } from './rule.js';
import { given } from '../common/index.js';
import { cappingUserOf, resolveAlternativeIds } from './user.js';
import type { CappingUser } from './user.js';
import type { Provider } from '../../core/index.js';
import type { CapDecision, CapperMetrics, FrequencyCapper, FrequencyCapperOptions } from './capper-types.js';

/** The default `timeoutMs` of {@link createFrequencyCapper}: docs/ad-server.md, "When the store is down or slow". */
export const DEFAULT_CAP_TIMEOUT_MS = 100;

/** The options, checked, with their defaults. */
interface Settings {
  alternatives: Map<number, Provider>;
  now: () => number;
  withoutUser: 'serve' | 'block';
  timeoutMs: number;
  onStoreError: 'serve' | 'block';
  shadowMaxKeys: number;
  maxReplay: number;
}

/** Checks the options; throws a TypeError naming the bad one. */
function settingsOf(options: FrequencyCapperOptions): Settings {
  const alternatives = resolveAlternativeIds(options.alternativeIds);
  const timeoutMs = options.timeoutMs ?? DEFAULT_CAP_TIMEOUT_MS;
  if (typeof timeoutMs !== 'number' || !(timeoutMs > 0))
    throw new TypeError(`timeoutMs must be a number of milliseconds > 0 (got ${String(timeoutMs)})`);
  const onStoreError = options.onStoreError ?? 'serve';
  if (onStoreError !== 'serve' && onStoreError !== 'block')
    throw new TypeError(`onStoreError must be 'serve' or 'block' (got ${JSON.stringify(onStoreError)})`);
  const withoutUser = options.withoutUser ?? 'serve';
  if (withoutUser !== 'serve' && withoutUser !== 'block')
    throw new TypeError(`withoutUser must be 'serve' or 'block' (got ${JSON.stringify(withoutUser)})`);
  const shadowMaxKeys = options.shadowMaxKeys ?? 10_000;
  const maxReplay = options.maxReplay ?? 10_000;
  for (const [name, n] of [
    ['shadowMaxKeys', shadowMaxKeys],
    ['maxReplay', maxReplay],
  ] as const) {
    if (!Number.isInteger(n) || n < 1) throw new TypeError(`${name} must be an integer >= 1 (got ${given(n)})`);
  }
  const now = options.now ?? Date.now;
  return { alternatives, now, withoutUser, timeoutMs, onStoreError, shadowMaxKeys, maxReplay };
}

/** One cap or several, validated (a bad cap throws here, before any store call). */
const resolveCaps = (cap: FrequencyCap | readonly FrequencyCap[]): ResolvedCap[] =>
  Array.isArray(cap) ? (cap as readonly FrequencyCap[]).map(resolveCap) : [resolveCap(cap as FrequencyCap)];

/** The capper's state and steps; {@link createFrequencyCapper} hands out its methods. */
class Capper {
  private readonly m = {
    storeCalls: 0,
    timeouts: 0,
    errors: 0,
    servedOnError: 0,
    blockedOnError: 0,
    shadowCapped: 0,
    replayed: 0,
    replayDropped: 0,
  };
  private readonly calls: StoreCalls;
  // Per user × item, what the store last answered and what this process served since without its answer: it stops
  // serving at the cap.
  private readonly shadow: ShadowCount;
  // Impressions served without the store's answer that the store has not counted: written when it answers again.
  private readonly replay: ReplayQueues;
  // Late answers still awaited, and who waits for none to be left (flush).
  private lateWaiting = 0;
  private readonly idle: (() => void)[] = [];

  constructor(
    store: FrequencyCapStore,
    private readonly s: Settings,
  ) {
    this.calls = new StoreCalls(store, s.timeoutMs, this.m);
    this.shadow = new ShadowCount(s.shadowMaxKeys);
    const shards = isQueueing(store) && store[shardOf] ? store[shardOf].bind(store) : () => '';
    this.replay = new ReplayQueues((checks, at) => this.calls.write(checks, at), shards, s.maxReplay, this.m);
  }

  userOf(call: AdCall): CappingUser {
    return cappingUserOf(call, this.s.alternatives);
  }

  /** The facts of a decision, always of one shape (the rule's functions stay monomorphic). */
  private facts(
    user: CappingUser,
    caps: readonly ResolvedCap[],
    counts?: readonly (readonly number[])[],
    storeAllowed?: boolean,
    storeError?: 'timeout' | 'error',
  ): CapFacts {
    const { withoutUser, onStoreError } = this.s;
    return { user, caps, counts, storeAllowed, storeError, withoutUser, onStoreError };
  }

  /** A decision as a promise, without an async function's extra ticks: whatever throws (a bad cap) rejects it. */
  decide(mode: 'check' | 'take', call: AdCall, cap: FrequencyCap | readonly FrequencyCap[]): Promise<CapDecision> {
    try {
      return this.decideNow(mode, call, cap);
    } catch (e) {
      return Promise.reject(e);
    }
  }

  private decideNow(
    mode: 'check' | 'take',
    call: AdCall,
    cap: FrequencyCap | readonly FrequencyCap[],
  ): Promise<CapDecision> {
    const caps = resolveCaps(cap);
    const user = this.userOf(call);
    if (!user.key) return Promise.resolve(decideCap(this.facts(user, caps)));
    const at = this.s.now();
    const checks = checksOf(user.key, caps, at);
    const result = this.calls.decide(mode, checks, at);
    // A synchronous store (the in-memory one) is answered without waiting for another tick.
    return result instanceof Promise
      ? result.then((r) => this.finish(mode, checks, at, caps, user, r))
      : Promise.resolve(this.finish(mode, checks, at, caps, user, result));
  }

  /** The ruling on the store's outcome, or, when it failed, on the shadow count; then what the ruling implies. */
  private finish(
    mode: 'check' | 'take',
    checks: CapCheck[],
    at: number,
    caps: readonly ResolvedCap[],
    user: CappingUser,
    result: Bounded<CapOutcome>,
  ): CapDecision {
    if ('value' in result) {
      const { allowed, counts } = result.value;
      this.shadow.seed(checks, counts, at, allowed && mode === 'take');
      if (this.replay.pending > 0) this.replay.answered(checks[0].user);
      return decideCap(this.facts(user, caps, counts, allowed));
    }
    // The counts are the shadow count's (what the store last answered and what this process served since): a floor
    // of the real ones, never 0 for a user this process saw.
    const counts = this.shadow.counts(checks);
    const facts = this.facts(user, caps, counts, undefined, result.error);
    const reason = capReason(facts);
    const decision = decideCap(facts, reason);
    if (reason === 'shadow-capped') this.m.shadowCapped++;
    this.m[decision.allowed ? 'servedOnError' : 'blockedOnError']++;
    if (decision.allowed && mode === 'take') {
      this.shadow.serve(checks, at);
      this.reconcile(result.late, (v) => v.allowed, checks, at);
    }
    return decision;
  }

  async record(call: AdCall, cap: FrequencyCap | readonly FrequencyCap[]): Promise<CappingUser> {
    const caps = resolveCaps(cap);
    const user = this.userOf(call);
    if (!user.key) return user;
    const at = this.s.now();
    const checks = checksOf(user.key, caps, at);
    const result = await this.calls.record(checks, at);
    if ('error' in result) {
      this.shadow.serve(checks, at);
      this.reconcile(result.late, () => true, checks, at);
    } else if (this.replay.pending > 0) this.replay.answered(checks[0].user);
    return user;
  }

  /** Queues an impression served without the store's answer unless the store's late answer shows it counted it. */
  private reconcile<T>(
    late: Promise<{ value: T } | undefined> | undefined,
    counted: (v: T) => boolean,
    checks: CapCheck[],
    at: number,
  ) {
    const queue = () => this.replay.push({ checks, at });
    if (!late) {
      queue();
      return;
    }
    this.lateWaiting++;
    void late.then((r) => {
      if (!r || !counted(r.value)) queue();
      if (--this.lateWaiting === 0) for (const wake of this.idle.splice(0)) wake();
    });
  }

  metrics(): CapperMetrics {
    return { ...this.m, replayPending: this.replay.pending };
  }

  async flush(): Promise<void> {
    if (this.lateWaiting > 0) await new Promise<void>((wake) => this.idle.push(wake));
    await this.replay.flush();
  }
}

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
  const capper = new Capper(options.store ?? new MemoryFrequencyCapStore(), settingsOf(options));
  return {
    userOf: (call) => capper.userOf(call),
    check: (call, cap) => capper.decide('check', call, cap),
    take: (call, cap) => capper.decide('take', call, cap),
    record: (call, cap) => capper.record(call, cap),
    metrics: () => capper.metrics(),
    flush: () => capper.flush(),
  };
}
