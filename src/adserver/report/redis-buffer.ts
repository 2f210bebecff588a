/**
 * The Redis report's local buffer: what one process counted and has not yet flushed, per Redis hash and field,
 * bounded by `maxBuffered` entries (those in flight included), so a Redis outage costs memory up to a bound and
 * then drops calls, counted. Adding touches memory only.
 */
import type { CounterIncrements } from './counters.js';
import { periodsOf } from './counters.js';
import { networkFieldPrefix } from './redis-keys.js';
import type { RedisReportKeys } from './redis-keys.js';
import type { ReportGranularity } from './report-types.js';

/** One Redis hash's counts waiting for a flush. */
export interface PendingBucket {
  readonly g: ReportGranularity;
  readonly period: string;
  /** Field → count. */
  readonly fields: Map<string, number>;
}

/** What a flush takes: the buckets by Redis key, and the calls dropped at a full buffer since the last flush. */
export interface PendingBatch {
  buckets: Map<string, PendingBucket>;
  dropped: number;
}

/**
 * The hour calls arrive in: its two buckets, and the calls counted since, per network → counter → count (the
 * counters are mostly constant strings, so no field string is built per call). Folded into both buckets when the
 * hour changes and before each flush. Networks are keyed by their fields' prefix (redis-keys.ts), a string that is
 * no number.
 */
interface Staged {
  periods: object;
  day: Map<string, number>;
  hour: Map<string, number>;
  networks: Map<string, Map<string, number>>;
}

/** Counts waiting for a flush; see the module's comment. */
export class PendingCounts {
  /** Counter entries held, in flight included: what `maxBuffered` bounds. Each staged (network, counter) counts. */
  entries = 0;
  /** Calls dropped at the bound since this process started. */
  droppedCalls = 0;
  private droppedUnflushed = 0;
  private buckets = new Map<string, PendingBucket>();
  private staged: Staged | undefined;

  constructor(
    private readonly keys: RedisReportKeys,
    private readonly maxBuffered: number,
  ) {}

  /** Counts a call that did not fit: flushed into the fleet's `dropped`. */
  dropCall(): void {
    this.droppedCalls++;
    this.droppedUnflushed++;
  }

  /** Stages a fact's increments in the day and hour of `at`; false when the buffer is full (nothing staged). */
  add({ networkId, fields, amounts }: CounterIncrements, at: Date | number): boolean {
    const periods = periodsOf(at);
    let s = this.staged;
    if (s?.periods !== periods) {
      this.fold();
      const { day, hour } = periods;
      s = this.staged = {
        periods,
        day: this.bucket('day', day).fields,
        hour: this.bucket('hour', hour).fields,
        networks: new Map(),
      };
    }
    const net = networkFieldPrefix(networkId);
    let counts = s.networks.get(net);
    let fresh = 0;
    for (let i = 0; i < fields.length; i++) {
      if (counts?.has(fields[i])) continue;
      // A counter new this hour: one new entry in the hour bucket, and one in the day bucket unless it has it.
      const f = net + fields[i];
      fresh += (s.hour.has(f) ? 0 : 1) + (s.day.has(f) ? 0 : 1);
    }
    if (this.entries + fresh > this.maxBuffered) return false;
    this.entries += fresh;
    if (!counts) s.networks.set(net, (counts = new Map<string, number>()));
    for (let i = 0; i < fields.length; i++) {
      const c = fields[i];
      counts.set(c, (counts.get(c) ?? 0) + (amounts?.[i] ?? 1));
    }
    return true;
  }

  /** Hands everything pending over to a flush; its entries stay counted until {@link sent} or {@link restore}. */
  take(): PendingBatch {
    this.fold();
    const batch = { buckets: this.buckets, dropped: this.droppedUnflushed };
    this.buckets = new Map();
    this.droppedUnflushed = 0;
    return batch;
  }

  /** `n` entries of a flush reached Redis. */
  sent(n: number): void {
    this.entries -= n;
  }

  /** Puts a failed flush's counts back, merging with what arrived meanwhile (each entry counted once). */
  restore(key: string, from: PendingBucket, counts: readonly (readonly [string, number])[]): void {
    this.fold(); // calls staged meanwhile go to the buckets first, so that a restored count merges with them exactly
    let to = this.buckets.get(key);
    if (!to) this.buckets.set(key, (to = { g: from.g, period: from.period, fields: new Map() }));
    for (const [field, n] of counts) {
      if (to.fields.has(field)) this.entries--; // merged into an entry that is already counted
      to.fields.set(field, (to.fields.get(field) ?? 0) + n);
    }
  }

  /** Puts back the dropped calls a failed flush did not count. */
  restoreDropped(n: number): void {
    this.droppedUnflushed += n;
  }

  private bucket(g: ReportGranularity, period: string): PendingBucket {
    const key = this.keys.bucket(g, period);
    let b = this.buckets.get(key);
    if (!b) this.buckets.set(key, (b = { g, period, fields: new Map() }));
    return b;
  }

  private fold(): void {
    const s = this.staged;
    if (!s) return;
    this.staged = undefined;
    for (const [net, counts] of s.networks) {
      for (const [counter, n] of counts) {
        const f = net + counter;
        s.day.set(f, (s.day.get(f) ?? 0) + n);
        s.hour.set(f, (s.hour.get(f) ?? 0) + n);
      }
    }
  }
}
