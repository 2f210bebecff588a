/** The frequency capper's public shapes: its options, its decisions, its counters and its interface. */
import type { AdCall } from '../parse/index.js';
import type { FrequencyCap } from './windows.js';
import type { FrequencyCapStore } from './store.js';
import type { AlternativeIdConfig, CappingUser } from './user.js';

/** Options of `createFrequencyCapper`. */
export interface FrequencyCapperOptions {
  /** The counting store. Default: a new `MemoryFrequencyCapStore`. */
  store?: FrequencyCapStore;
  /** Networks that activated an alternative id provider (one provider per network). */
  alternativeIds?: AlternativeIdConfig;
  /** What to do when the call carries no usable id: `'serve'` uncapped (default) or `'block'` capped items. */
  withoutUser?: 'serve' | 'block';
  /**
   * Longest wait for an asynchronous store per decision, in ms (default `DEFAULT_CAP_TIMEOUT_MS`); then
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
  /**
   * Impressions counted before this decision (0 when there is no user id). When the store failed (`storeError`):
   * those this process served without it, the shadow count, a floor of the real count.
   */
  count: number;
}

/** The outcome of a cap check. */
export interface CapDecision {
  /** True when the item may be served to this user now. */
  allowed: boolean;
  /** Impressions already counted in the first window (0 when no user id; the shadow count when `storeError`). */
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
