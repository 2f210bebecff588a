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
