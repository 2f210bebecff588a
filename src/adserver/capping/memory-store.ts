/**
 * The in-memory frequency-cap store: one process, LRU-bounded (docs/ad-server.md, "Bounded by design"). The capper's
 * default store, and its shadow count while a shared store does not answer.
 */
import type { CapCheck, CapOutcome, FrequencyCapStore } from './store.js';

/** Caps of the in-memory store. */
export interface MemoryStoreOptions {
  /** Most keys (user × item) kept; the least recently used are evicted first. Default 100,000. */
  maxKeys?: number;
  /** Most impressions kept per key (older ones are forgotten); caps above it cannot be enforced. Default 1,000. */
  maxEventsPerKey?: number;
}

/** An in-memory, single-process store with LRU eviction: for one server, tests and the demo. */
export class MemoryFrequencyCapStore implements FrequencyCapStore {
  private readonly events = new Map<string, { times: number[]; expires: number }>();
  private readonly maxKeys: number;
  private readonly maxEvents: number;

  /** Creates an empty store. */
  constructor(options: MemoryStoreOptions = {}) {
    this.maxKeys = options.maxKeys ?? 100_000;
    this.maxEvents = options.maxEventsPerKey ?? 1_000;
  }

  /** See {@link FrequencyCapStore.count}. */
  count(key: string, since: number): number {
    const entry = this.events.get(key);
    if (!entry) return 0;
    let n = 0;
    for (let i = entry.times.length - 1; i >= 0 && entry.times[i] >= since; i--) n++;
    return n;
  }

  /** See {@link FrequencyCapStore.record}. */
  record(key: string, at: number, ttlMs: number): void {
    const entry = this.events.get(key);
    const times = entry && entry.expires > at ? entry.times : [];
    // Times are sorted: the expired ones are a prefix.
    let expired = 0;
    while (expired < times.length && times[expired] <= at - ttlMs) expired++;
    if (expired > 0) times.splice(0, expired);
    // Keep times sorted even if a clock steps back.
    let i = times.length;
    while (i > 0 && times[i - 1] > at) i--;
    times.splice(i, 0, at);
    if (times.length > this.maxEvents) times.splice(0, times.length - this.maxEvents);
    this.events.delete(key); // re-insert: Map order is the LRU order
    this.events.set(key, { times, expires: Math.max(entry?.expires ?? 0, at + ttlMs) });
    while (this.events.size > this.maxKeys) this.events.delete(this.events.keys().next().value!);
  }

  /** See {@link FrequencyCapStore.apply}: synchronous, so atomic within the process. */
  apply(mode: 'check' | 'take' | 'record', checks: readonly CapCheck[], at: number): CapOutcome {
    // Loops, not map/every: this runs on every ad call of a one-process server.
    const counts: number[][] = [];
    let allowed = true;
    for (const c of checks) {
      const row: number[] = [];
      for (const w of c.windows) {
        const n = this.count(c.key, w.since);
        if (n >= w.max) allowed = false;
        row.push(n);
      }
      counts.push(row);
    }
    if (mode === 'record' || (mode === 'take' && allowed)) for (const c of checks) this.record(c.key, at, c.keepMs);
    return { allowed, counts };
  }

  /** Number of keys held. */
  get size(): number {
    return this.events.size;
  }
}
