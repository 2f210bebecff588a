/**
 * The impressions a capper served without its store's answer, waiting to be written to the store: one queue per
 * shard (a Redis Cluster primary; one for any other store). A queue is written when its shard answers a decision
 * again, or, after a failed write, once its back-off has passed (100 ms, doubling to 2 s): a shard that does not
 * answer costs one failed write per back-off, not one per decision the healthy shards answer.
 */
import type { CapCheck } from './store.js';

/** One impression to write back. */
export interface Replay {
  checks: CapCheck[];
  at: number;
}

interface Queue {
  shard: string;
  entries: Replay[];
  /** Current back-off (ms; 0 when the last write succeeded) and when the next write may start without an answer. */
  delay: number;
  retryAt: number;
  writing?: Promise<void>;
}

const FIRST_DELAY_MS = 100;
const MAX_DELAY_MS = 2_000;
const WRITE_CHUNK = 256;

/** The write-back queues of one capper. */
export class ReplayQueues {
  private readonly queues = new Map<string, Queue>();
  private count = 0;

  /**
   * @param write records one impression in the store (its promise, or a value when it is synchronous)
   * @param shardOf the shard holding a user's keys now
   * @param counters the capper's metrics, updated here
   */
  constructor(
    private readonly write: (checks: readonly CapCheck[], at: number) => unknown,
    private readonly shardOf: (user: string) => string,
    private readonly maxReplay: number,
    private readonly counters: { replayed: number; replayDropped: number },
  ) {}

  /** Impressions waiting. */
  get pending(): number {
    return this.count;
  }

  /** Queues one impression (dropped and counted beyond `maxReplay`). */
  push(replay: Replay): void {
    if (this.count >= this.maxReplay) {
      this.counters.replayDropped++;
      return;
    }
    this.count++;
    this.queueOf(this.shardOf(replay.checks[0].user)).entries.push(replay);
  }

  /**
   * The store answered a decision for `user` (made at `at`): writes that shard's queue now, and any other queue whose
   * back-off has passed. A queue whose users now map to another shard (a failover or a reshard) is sorted again.
   */
  answered(user: string): void {
    const now = performance.now();
    const shard = this.shardOf(user);
    for (const q of [...this.queues.values()]) {
      if (q.writing || q.entries.length === 0) continue;
      if (this.shardOf(q.entries[0].checks[0].user) !== q.shard) this.resort(q);
    }
    for (const q of this.queues.values()) {
      if (!q.writing && q.entries.length > 0 && (q.shard === shard || now >= q.retryAt)) void this.writeQueue(q);
    }
  }

  /** Writes every queue now, whatever its back-off; resolves when done (failed writes stay queued). */
  async flush(): Promise<void> {
    for (const q of [...this.queues.values()]) if (q.writing) await q.writing;
    await Promise.all([...this.queues.values()].map((q) => this.writeQueue(q)));
  }

  private queueOf(shard: string): Queue {
    let q = this.queues.get(shard);
    if (!q) this.queues.set(shard, (q = { shard, entries: [], delay: 0, retryAt: 0 }));
    return q;
  }

  private resort(q: Queue) {
    const entries = q.entries;
    q.entries = [];
    for (const r of entries) this.queueOf(this.shardOf(r.checks[0].user)).entries.push(r);
    if (q.entries.length === 0) this.queues.delete(q.shard);
  }

  /** Writes a queue a few hundred at a time; stops at the first failure (those stay queued, the back-off grows). */
  private writeQueue(q: Queue): Promise<void> {
    q.writing ??= (async () => {
      while (q.entries.length > 0) {
        const batch = q.entries.slice(0, WRITE_CHUNK);
        q.entries = q.entries.slice(WRITE_CHUNK);
        const results = await Promise.allSettled(batch.map((r) => new Promise((ok) => ok(this.write(r.checks, r.at)))));
        const failed = batch.filter((_, i) => results[i].status === 'rejected');
        this.counters.replayed += batch.length - failed.length;
        this.count -= batch.length - failed.length;
        if (failed.length > 0) {
          q.entries = [...failed, ...q.entries];
          q.delay = Math.min(Math.max(q.delay * 2, FIRST_DELAY_MS), MAX_DELAY_MS);
          q.retryAt = performance.now() + q.delay;
          return;
        }
      }
      q.delay = 0;
      q.retryAt = 0;
    })().finally(() => {
      q.writing = undefined;
      if (q.entries.length === 0) this.queues.delete(q.shard);
    });
    return q.writing;
  }
}
