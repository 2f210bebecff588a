/** The contract between the capper and its counting stores (in memory, Redis, or the user's own). */

/** One cap check handed to a store: the user × item key and, per window, where it starts and its max. */
export interface CapCheck {
  /** `<user key>|<item>`, the key of {@link FrequencyCapStore.count} / {@link FrequencyCapStore.record}. */
  key: string;
  /** The user part (`pid:…`, `uid:…`, `alt:…`): stores that shard by user (Redis Cluster hash tags) use it. */
  user: string;
  item: string;
  /** Per window: impressions at or after `since` (ms; `-Infinity` for lifetime) must stay below `max`. */
  windows: readonly { since: number; max: number }[];
  /** How long an impression must be kept (the longest window). */
  keepMs: number;
}

/** What a store answers for a list of checks: all windows under their max, and each window's count. */
export interface CapOutcome {
  allowed: boolean;
  /** Per check, per window: impressions counted before this decision. */
  counts: number[][];
}

/**
 * Where impressions are counted; methods may be synchronous or return promises. `MemoryFrequencyCapStore`
 * (one process) and `createRedisFrequencyCapStore` (a fleet) ship.
 */
export interface FrequencyCapStore {
  /** Impressions recorded under `key` at or after `since` (ms since the epoch). */
  count(key: string, since: number): number | Promise<number>;
  /** Records one impression under `key` at `at`; the store may forget it after `ttlMs`. */
  record(key: string, at: number, ttlMs: number): void | Promise<void>;
  /**
   * Optional, one step: counts every window of every check and, for `take` when all are under their max (or
   * always for `record`), records one impression under each key, atomically. Without it the capper falls back
   * to `count` then `record`, which two servers can race.
   */
  apply?(mode: 'check' | 'take' | 'record', checks: readonly CapCheck[], at: number): CapOutcome | Promise<CapOutcome>;
}

/** A decision handed to a queueing store: what to decide, and whom to tell (once) when it is decided or failed. */
export interface QueuedDecision {
  readonly mode: 'check' | 'take' | 'record';
  readonly checks: readonly CapCheck[];
  readonly at: number;
  /** Called once: with the outcome, or with the error and no outcome. */
  settle(error: unknown, outcome: CapOutcome | undefined): void;
}

/**
 * Internal to the package: the key of a store's queue entry point, which the capper prefers to `apply` when a store
 * has it (the built-in Redis store does). A decision then costs one object instead of a promise and its callbacks.
 */
export const enqueue: unique symbol = Symbol('eidkit.enqueue');

/**
 * Internal to the package: the key of a store's optional `(user) => string` naming the shard that holds a user's
 * keys now (a Redis Cluster primary), so that the capper writes back what it served per shard, when that shard
 * answers. A store without it is one shard.
 */
export const shardOf: unique symbol = Symbol('eidkit.shardOf');

/** A store that takes decisions through {@link enqueue}. */
export interface QueueingStore {
  [enqueue](decision: QueuedDecision): void;
  [shardOf]?(user: string): string;
}

/** Whether `store` takes decisions through {@link enqueue}. */
export const isQueueing = (store: FrequencyCapStore): store is FrequencyCapStore & QueueingStore =>
  typeof (store as Partial<QueueingStore>)[enqueue] === 'function';
