/** Frequency capping by an alternative id: the capper, the cap windows, and its stores in memory and in Redis. */
export type {
  CappingUser,
  CappingUserKind,
  AlternativeIdConfig,
  CapCheck,
  CapOutcome,
  CapWindowState,
  CapperMetrics,
  FrequencyCapStore,
  MemoryStoreOptions,
  FrequencyCapperOptions,
  FrequencyCapper,
  CapDecision,
} from './capper.js';
export {
  MemoryFrequencyCapStore,
  createFrequencyCapper,
  cappingUserOf,
  resolveAlternativeIds,
  DEFAULT_CAP_TIMEOUT_MS,
} from './capper.js';
export type { CapPeriod, CapWindow, FrequencyCap, ResolvedCap, ResolvedWindow } from './windows.js';
export { defineFrequencyCap, resolveCap, periodStart, LIFETIME_MS } from './windows.js';
export type { RedisFrequencyCapStoreOptions } from './redis-store.js';
export type { RedisFrequencyCapStoreMetrics } from './redis-script.js';
export { createRedisFrequencyCapStore } from './redis-store.js';
