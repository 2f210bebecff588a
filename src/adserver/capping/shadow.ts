/**
 * The shadow count: what decides while the store does not answer. Per user × item it holds what the store last
 * answered (its counts per window, and the impression it counted when it allowed a take) and what this process
 * served since without the store's answer; it allows an impression while both together stay under every window's
 * max. So each process serves at most the cap, counting what the store had counted, and a fleet at most cap ×
 * processes per window (docs/ad-server.md, "When the store is down or slow").
 */
import { MemoryFrequencyCapStore } from './memory-store.js';
import type { CapCheck } from './store.js';

/** The store's last answer for one user × item: per window where it started and its count, at `at`. */
interface Seen {
  at: number;
  windows: readonly { since: number }[];
  counts: readonly number[];
  /** 1 when the answer allowed a take (the store counted one more at `at`). */
  taken: number;
}

/**
 * Impressions of a seen answer at or after `since`, placing each as late as the answer allows: the counts of nested
 * windows [since_k, at] say how many fell in each band between two window starts, and each band's are put at its
 * end. So a count never falls before the store's own (a window that slides past an impression the store counted
 * frees it no earlier than the store would), and a new calendar period starts at 0.
 */
function seenSince(seen: Seen, since: number): number {
  if (since > seen.at) return 0;
  // Windows by start, latest first; their counts grow with the span.
  const order = seen.windows.map((w, i) => i).sort((a, b) => seen.windows[b].since - seen.windows[a].since);
  let total = seen.taken;
  let below = 0;
  let end = seen.at;
  for (const i of order) {
    const band = Math.max(0, seen.counts[i] - below);
    if (since <= end) total += band;
    below = Math.max(below, seen.counts[i]);
    end = seen.windows[i].since - 1;
  }
  return total;
}

/** The shadow count of one capper: LRU-bounded to `maxKeys` user × item keys for each of its two parts. */
export class ShadowCount {
  private readonly served: MemoryFrequencyCapStore;
  private readonly seen = new Map<string, Seen>();

  constructor(private readonly maxKeys: number) {
    this.served = new MemoryFrequencyCapStore({ maxKeys });
  }

  /** The store answered `counts` (per check, per window) for `checks` at `at`; `taken` when it counted a take. */
  seed(checks: readonly CapCheck[], counts: readonly (readonly number[])[], at: number, taken: boolean): void {
    for (let i = 0; i < checks.length; i++) {
      const c = checks[i];
      if (c.windows.length === 0) continue;
      this.seen.delete(c.key); // re-insert: Map order is the LRU order
      this.seen.set(c.key, { at, windows: c.windows, counts: counts[i], taken: taken ? 1 : 0 });
    }
    while (this.seen.size > this.maxKeys) this.seen.delete(this.seen.keys().next().value!);
  }

  /**
   * Per check, per window: what the store last answered that still falls in the window, plus what this process
   * served since without the store's answer. A floor of the store's counts; the capper's rule decides on it.
   */
  counts(checks: readonly CapCheck[]): number[][] {
    const counts: number[][] = [];
    for (const c of checks) {
      const seen = this.seen.get(c.key);
      const row: number[] = [];
      for (const w of c.windows) row.push((seen ? seenSince(seen, w.since) : 0) + this.served.count(c.key, w.since));
      counts.push(row);
    }
    return counts;
  }

  /** Counts one impression of each check, served without the store's answer. */
  serve(checks: readonly CapCheck[], at: number): void {
    for (const c of checks) this.served.record(c.key, at, c.keepMs);
  }
}
