/**
 * The in-memory frequency-cap store: one process, LRU-bounded in keys and in bytes (docs/ad-server.md, "Bounded by
 * design"). The capper's default store, and its shadow count while a shared store does not answer.
 */
import { positiveOption } from '../common/index.js';
import type { CapCheck, CapOutcome, FrequencyCapStore } from './store.js';
import { impressionsSince, underEveryMax } from './rule.js';

/** Caps of the in-memory store. */
export interface MemoryStoreOptions {
  /** Most keys (user × item) kept; the least recently used are evicted first. Default 100,000. */
  maxKeys?: number;
  /**
   * Most bytes the keys and their impressions hold, estimated (see {@link MemoryFrequencyCapStore.bytes}); the least
   * recently used keys are evicted first. Default 64 MiB.
   */
  maxBytes?: number;
  /** Most impressions kept per key (older ones are forgotten); caps above it cannot be enforced. Default 1,000. */
  maxEventsPerKey?: number;
}

/**
 * The estimated bytes of one key and its impressions: 2 bytes a character (a key can hold characters of two bytes),
 * then what V8 spends on the Map slot, the entry, its array and each impression, measured with room to spare (a
 * 30-character key with one impression: 333 B measured, 402 estimated; 2,000 characters: 2,357 B, 4,432; 1,000
 * impressions: 10.7 KB, 16.4 KB).
 */
const entryBytes = (key: string, impressions: number) => 2 * key.length + 320 + 16 * impressions;

interface Entry {
  times: number[];
  expires: number;
  /** What {@link entryBytes} gave when the entry was last written. */
  bytes: number;
}

/** An in-memory, single-process store with LRU eviction: for one server, tests and the demo. */
export class MemoryFrequencyCapStore implements FrequencyCapStore {
  private readonly events = new Map<string, Entry>();
  private readonly maxKeys: number;
  private readonly maxBytes: number;
  private readonly maxEvents: number;
  private held = 0;

  /** Creates an empty store; an option that is not a whole number > 0 throws an `OptionsError` naming it. */
  constructor(options: MemoryStoreOptions = {}) {
    this.maxKeys = positiveOption(options.maxKeys ?? 100_000, 'maxKeys', true);
    this.maxBytes = positiveOption(options.maxBytes ?? 64 * 2 ** 20, 'maxBytes', true);
    this.maxEvents = positiveOption(options.maxEventsPerKey ?? 1_000, 'maxEventsPerKey', true);
  }

  /** See {@link FrequencyCapStore.count}. */
  count(key: string, since: number): number {
    const entry = this.events.get(key);
    return entry ? impressionsSince(entry.times, since) : 0;
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
    const bytes = entryBytes(key, times.length);
    this.held += bytes - (entry?.bytes ?? 0);
    this.events.set(key, { times, expires: Math.max(entry?.expires ?? 0, at + ttlMs), bytes });
    // Users are chosen by callers (a 2,000-character alternative id): keys alone would not bound the memory.
    while (this.events.size > this.maxKeys || this.held > this.maxBytes) {
      const oldest = this.events.keys().next().value!;
      this.held -= this.events.get(oldest)!.bytes;
      this.events.delete(oldest);
    }
  }

  /** See {@link FrequencyCapStore.apply}: synchronous, so atomic within the process. */
  apply(mode: 'check' | 'take' | 'record', checks: readonly CapCheck[], at: number): CapOutcome {
    // Loops, not map/every: this runs on every ad call of a one-process server.
    const counts: number[][] = [];
    for (const c of checks) {
      const row: number[] = [];
      for (const w of c.windows) row.push(this.count(c.key, w.since));
      counts.push(row);
    }
    const allowed = underEveryMax(checks, counts);
    if (mode === 'record' || (mode === 'take' && allowed)) for (const c of checks) this.record(c.key, at, c.keepMs);
    return { allowed, counts };
  }

  /** Number of keys held. */
  get size(): number {
    return this.events.size;
  }

  /**
   * The estimated bytes held: per key, 2 bytes a character of the key, 320 for its slot, entry and array, 16 per
   * impression kept. Never above `maxBytes`.
   */
  get bytes(): number {
    return this.held;
  }
}
