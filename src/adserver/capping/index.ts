/** Frequency capping by an alternative id: the capper, the cap windows, and its stores in memory and in Redis. */
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
export { createFrequencyCapper, DEFAULT_CAP_TIMEOUT_MS } from './capper.js';
export type { CapPeriod, CapWindow, FrequencyCap, ResolvedCap, ResolvedWindow } from './windows.js';
export { defineFrequencyCap, resolveCap, periodStart, LIFETIME_MS } from './windows.js';
export type { RedisFrequencyCapStoreOptions } from './redis-store.js';
export type { RedisFrequencyCapStoreMetrics } from './redis-script.js';
export { createRedisFrequencyCapStore } from './redis-store.js';
