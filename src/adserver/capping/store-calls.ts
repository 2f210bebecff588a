/**
 * The capper's calls to its store, bounded: none throws, and none takes longer than `timeoutMs` when the store is
 * asynchronous; after the deadline the store's late answer is still handed over (it tells whether the store counted
 * what the capper served meanwhile). Synchronous stores (the in-memory one) are answered without another tick.
 */
import { enqueue, isQueueing } from './store.js';
import type { CapCheck, CapOutcome, FrequencyCapStore, QueueingStore } from './store.js';
import { underEveryMax } from './rule.js';

/** What a bounded store call gave: its value, or why not and (after a timeout) its late answer, if any. */
export type Bounded<T> = { value: T } | { error: 'timeout' | 'error'; late?: Promise<{ value: T } | undefined> };

/** The capper's counters that its store calls move. */
export interface StoreCallCounters {
  storeCalls: number;
  timeouts: number;
  errors: number;
}

/**
 * The deadlines of the calls waiting for an asynchronous store, oldest first: they share one timeout, so their
 * deadlines come in the order they were made and one timer serves them all (cheaper than a timer per call).
 */
class Deadlines {
  private waiting: Waiter<unknown>[] = [];
  private head = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    readonly timeoutMs: number,
    readonly counters: StoreCallCounters,
  ) {}

  add(w: Waiter<unknown>): void {
    this.waiting.push(w);
    if (!this.timer) this.arm(this.timeoutMs);
  }

  // Unref'd: a pending deadline alone does not keep the process running.
  private arm(ms: number) {
    (this.timer = setTimeout(() => this.expireDue(), ms)).unref();
  }

  private expireDue() {
    this.timer = undefined;
    const t = performance.now();
    const due: Waiter<unknown>[] = [];
    const waiting = this.waiting;
    while (this.head < waiting.length && waiting[this.head].deadline <= t) due.push(waiting[this.head++]);
    // Drop the expired entries from the array once they are most of it.
    if (this.head === waiting.length || (this.head > 1024 && this.head * 2 > waiting.length)) {
      this.waiting = waiting.slice(this.head);
      this.head = 0;
    }
    if (this.head < this.waiting.length) this.arm(this.waiting[this.head].deadline - t);
    // Decided after the event loop's next poll: when the process was starved of CPU, the deadline and the store's
    // reply are both due, and a reply already waiting in the socket must win.
    if (due.length > 0)
      setImmediate(() => {
        for (const d of due) d.expire();
      });
  }
}

/**
 * One asynchronous store call: its deadline and where the store's answer goes. After the deadline the answer still
 * matters (`late`): it tells whether the store counted what the capper served.
 */
class Waiter<T> {
  readonly deadline: number;
  private late?: (late: { value: T } | undefined) => void;
  private decided = false;

  constructor(
    private readonly deadlines: Deadlines,
    private readonly done: (result: Bounded<T>) => void,
  ) {
    this.deadline = performance.now() + deadlines.timeoutMs;
    deadlines.add(this as Waiter<unknown>);
  }

  /** The store's answer: its value, or undefined when it failed. */
  answer(result: { value: T } | undefined) {
    if (this.late) return this.late(result);
    if (this.decided) return;
    this.decided = true;
    if (!result) this.deadlines.counters.errors++;
    this.done(result ?? { error: 'error' });
  }

  expire() {
    if (this.decided) return;
    this.decided = true;
    this.deadlines.counters.timeouts++;
    this.done({ error: 'timeout', late: new Promise((l) => (this.late = l)) });
  }
}

/** The store as the capper calls it: decisions and records bounded in time, and writes back unbounded. */
export class StoreCalls {
  private readonly deadlines: Deadlines;
  private readonly queueing: (FrequencyCapStore & QueueingStore) | undefined;

  constructor(
    readonly store: FrequencyCapStore,
    timeoutMs: number,
    private readonly counters: StoreCallCounters,
  ) {
    this.deadlines = new Deadlines(timeoutMs, counters);
    this.queueing = isQueueing(store) ? store : undefined;
  }

  /** A check or a take, bounded: through the store's queue, its `apply`, or else `count` then `record`. */
  decide(mode: 'check' | 'take', checks: CapCheck[], at: number): Bounded<CapOutcome> | Promise<Bounded<CapOutcome>> {
    if (this.queueing) return this.queued(mode, checks, at);
    const store = this.store;
    return this.bounded(() => (store.apply ? store.apply(mode, checks, at) : this.countThenRecord(mode, checks, at)));
  }

  /** One impression of each check recorded, bounded. */
  record(checks: readonly CapCheck[], at: number): Bounded<unknown> | Promise<Bounded<unknown>> {
    return this.bounded(() => this.write(checks, at));
  }

  /** One impression of each check recorded, unbounded: what was served without the store's answer, written back. */
  write(checks: readonly CapCheck[], at: number): unknown {
    const store = this.store;
    if (store.apply) return store.apply('record', checks, at);
    // A store answers synchronously (the in-memory one) or with a promise: Promise.all takes both.
    // eslint-disable-next-line @typescript-eslint/await-thenable
    return Promise.all(checks.map((c) => store.record(c.key, at, c.keepMs)));
  }

  /** Runs the store without it throwing, or taking longer than `timeoutMs` when it is asynchronous. */
  private bounded<T>(run: () => T | Promise<T>): Bounded<T> | Promise<Bounded<T>> {
    this.counters.storeCalls++;
    let r: T | Promise<T>;
    try {
      r = run();
    } catch {
      this.counters.errors++;
      return { error: 'error' };
    }
    if (!(r instanceof Promise)) return { value: r };
    const pending = r;
    return new Promise((resolve) => {
      const w = new Waiter(this.deadlines, resolve);
      pending.then(
        (value) => w.answer({ value }),
        () => w.answer(undefined),
      );
    });
  }

  /** A decision handed to a queueing store (the Redis one): no promise of the store's, its callback answers. */
  private queued(mode: 'check' | 'take', checks: CapCheck[], at: number): Promise<Bounded<CapOutcome>> {
    this.counters.storeCalls++;
    const queueing = this.queueing!;
    return new Promise((resolve) => {
      const w = new Waiter<CapOutcome>(this.deadlines, resolve);
      try {
        queueing[enqueue]({ mode, checks, at, settle: (_error, outcome) => w.answer(outcome && { value: outcome }) });
      } catch {
        w.answer(undefined);
      }
    });
  }

  // Stores with only count/record: the check and the record are separate steps (not atomic across servers).
  private async countThenRecord(mode: 'check' | 'take', checks: readonly CapCheck[], at: number): Promise<CapOutcome> {
    const store = this.store;
    // eslint-disable-next-line @typescript-eslint/await-thenable -- a store may answer synchronously
    const counts = await Promise.all(checks.map((c) => Promise.all(c.windows.map((w) => store.count(c.key, w.since)))));
    const allowed = underEveryMax(checks, counts);
    if (mode === 'take' && allowed) await this.write(checks, at);
    return { allowed, counts };
  }
}
