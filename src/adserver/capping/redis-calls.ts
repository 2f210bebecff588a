/**
 * The Redis cap store's script calls in flight: how a batch goes out (keys declared through the client, or to one
 * cluster primary with the keys of all its slots), what comes back (each decision settled, entries of another node's
 * keys sent again to their owner), redirections tried again while a slot moves, and the watchdog that fails a call
 * without an answer after `commandTimeoutMs`.
 */
import { randomBytes } from 'node:crypto';
import { TAKE, TAKE_ANY_SLOT } from './redis-script.js';
import type { RedisFrequencyCapStoreMetrics } from './redis-script.js';
import { encode, settleEntries } from './redis-entries.js';
import type { Entry } from './redis-entries.js';
import { clusterKeySlot } from '../common/index.js';
import type { ClusterPrimary, RedisClientLike } from '../common/index.js';

/**
 * Where decisions wait to be sent: one queue for a lone Redis, one per primary of a cluster (so a stalled primary
 * holds back its own decisions only), and one for decisions sent slot by slot through the cluster client (no map
 * yet, or a server without allow-cross-slot-keys).
 */
export interface Shard {
  queue: Entry[];
  /** The last entry queued per user while it is not sent: an identical decision joins it. */
  open: Map<string, Entry>;
  inFlight: number;
  primary?: ClusterPrimary;
}

/** A script call in flight: its entries, the primary's queue it counts against, when it was sent. */
interface InFlightCall {
  entries: readonly Entry[];
  shard?: Shard;
  sentAt: number;
  done: boolean;
}

/** What the calls are made with. */
export interface ScriptCallSettings {
  client: RedisClientLike;
  cluster: boolean;
  maxEvents: number;
  commandTimeoutMs: number;
  metrics: RedisFrequencyCapStoreMetrics;
  /** A call of `shard` finished: its place in flight is free for the next batch. */
  freed(shard: Shard): void;
}

/** The script calls of one store. */
export class ScriptCalls {
  /** Whether a batch may go to a cluster primary with keys of any slot (false once a server lacks script flags). */
  anySlot: boolean;
  /** Decisions waiting to be sent again after a redirection (they count against `maxPending`). */
  retrying = 0;
  private readonly calls = new Set<InFlightCall>();
  private watchdog: ReturnType<typeof setInterval> | undefined;
  // Impressions at the same millisecond must stay distinct members: a per-process random part, the call's
  // sequence number and the decision's place in the call.
  private readonly origin = randomBytes(6).toString('base64url');
  private seq = 0;

  constructor(
    private readonly s: ScriptCallSettings,
    anySlot: boolean,
  ) {
    this.anySlot = anySlot;
  }

  /**
   * One call with its keys declared, through the client as given: a lone Redis, or one slot of a cluster, which the
   * client routes and redirects itself. On a cluster, TRYAGAIN / ASK / MOVED reaching the store are tried again,
   * one decision per call, until `commandTimeoutMs` after the decisions were first sent.
   */
  sendDeclared(entries: readonly Entry[], shard?: Shard, since = performance.now(), tries = 0): void {
    const { keys, json } = encode(entries);
    this.start(
      entries,
      shard,
      () => TAKE(this.s.client, keys, [...this.head(), json]),
      (reply) => this.answer(entries, reply, since),
      (e) => {
        if (this.s.cluster && isRedirection(e) && performance.now() - since < this.s.commandTimeoutMs)
          this.retryLater(entries, since, tries);
        else fail(entries, e);
      },
    );
  }

  /** One call to one primary carrying the decisions of all its slots (no key declared: see the cluster script). */
  sendToPrimary(entries: readonly Entry[], shard: Shard): void {
    const primary = shard.primary!;
    const { keys, json } = encode(entries);
    const since = performance.now();
    const args = [...this.head(), json, ...keys];
    this.start(
      entries,
      shard,
      async () => TAKE_ANY_SLOT(await primary.client(), [], args),
      (reply) => this.answer(entries, reply, since),
      (e) => {
        const message = messageOf(e);
        if (/Error compiling script|shebang|Unknown lua/i.test(message)) {
          // A server without script flags (before Redis 7): slot by slot from now on.
          this.anySlot = false;
          this.reroute(entries, since);
        } else if (/^(READONLY|MOVED|ASK|TRYAGAIN)\b/.test(message)) {
          // The node no longer serves these slots (a failover): their owners, through the client, which learns the map.
          this.reroute(entries, since);
        } else {
          // The node does not answer, or the cluster is down: the first decision goes through the client, whose own
          // recovery (reconnection, new map) this triggers; the rest fail now rather than each costing a failed call.
          this.reroute(entries.slice(0, 1), since);
          fail(entries.slice(1), e);
        }
      },
    );
  }

  private head() {
    return [String(this.s.maxEvents), `${this.origin}:${(this.seq = (this.seq + 1) % 1e9)}`];
  }

  /** Tracks one call: its place in its queue's flight, the watchdog, its reply or error (once). */
  private start(
    entries: readonly Entry[],
    shard: Shard | undefined,
    run: () => Promise<unknown>,
    onReply: (reply: unknown) => void,
    onError: (e: unknown) => void,
  ) {
    const call: InFlightCall = { entries, shard, sentAt: performance.now(), done: false };
    if (shard) shard.inFlight++;
    this.calls.add(call);
    this.s.metrics.calls++;
    this.watch();
    let pending: Promise<unknown>;
    try {
      pending = run();
    } catch (e) {
      pending = Promise.reject(e); // a client that throws instead of rejecting (closed, misconfigured)
    }
    pending.then(
      (reply) => {
        if (this.finished(call)) onReply(reply);
      },
      (e: unknown) => {
        if (!this.finished(call)) return;
        this.s.metrics.failedCalls++;
        onError(e);
      },
    );
  }

  /** Sends entries again to their slots' owners, keys declared. */
  private reroute(entries: readonly Entry[], since: number) {
    for (const e of entries) this.s.metrics.rerouted += e.decisions.length;
    for (const group of bySlot(entries, false)) this.sendDeclared(group, undefined, since);
  }

  private retryLater(entries: readonly Entry[], since: number, tries: number) {
    this.s.metrics.retries++;
    let n = 0;
    for (const e of entries) n += e.decisions.length;
    this.retrying += n;
    // 1, 2, 4 … 32 ms: a slot's keys move in a few ms; the decision's time is bounded by `since`.
    const delay = Math.min(2 ** tries, 32);
    setTimeout(() => {
      this.retrying -= n;
      for (const group of bySlot(entries, entries.length > 1)) this.sendDeclared(group, undefined, since, tries + 1);
    }, delay).unref();
  }

  /** Settles each decision from the script's reply; entries answered -1 (another node's keys) go to their owner. */
  private answer(entries: readonly Entry[], reply: unknown, since: number) {
    const elsewhere = settleEntries(entries, reply);
    if (elsewhere instanceof Error) fail(entries, elsewhere);
    else if (elsewhere.length > 0) this.reroute(elsewhere, since);
  }

  /** Frees a call's place in flight, once: false when the watchdog already failed it. */
  private finished(call: InFlightCall): boolean {
    if (call.done) return false;
    call.done = true;
    this.calls.delete(call);
    if (call.shard) {
      call.shard.inFlight--;
      this.s.freed(call.shard);
    }
    return true;
  }

  // One unref'd timer while calls are in flight fails those older than commandTimeoutMs (a stuck connection).
  private watch() {
    if (this.watchdog) return;
    const timeoutMs = this.s.commandTimeoutMs;
    this.watchdog = setInterval(
      () => {
        const t = performance.now();
        for (const call of this.calls) {
          if (t - call.sentAt < timeoutMs || !this.finished(call)) continue;
          this.s.metrics.failedCalls++;
          fail(call.entries, new Error(`createRedisFrequencyCapStore: no answer from Redis in ${timeoutMs} ms`));
        }
        if (this.calls.size === 0) {
          clearInterval(this.watchdog);
          this.watchdog = undefined;
        }
      },
      Math.max(10, Math.min(1_000, timeoutMs / 4)),
    );
    this.watchdog.unref();
  }
}

/** Entries grouped by hash slot; `alone`: one call per entry (a slot moving: keeps one user's wait short). */
export function bySlot(entries: readonly Entry[], alone: boolean): Entry[][] {
  if (alone) return entries.map((e) => [e]);
  const groups = new Map<number, Entry[]>();
  for (const e of entries) {
    const slot = e.slot < 0 ? (e.slot = clusterKeySlot(e.keys[0])) : e.slot;
    const group = groups.get(slot);
    if (group) group.push(e);
    else groups.set(slot, [e]);
  }
  return [...groups.values()];
}

function fail(entries: readonly Entry[], e: unknown) {
  for (const entry of entries) for (const p of entry.decisions) p.settle(e, undefined);
}

const messageOf = (e: unknown): string => String((e as Error | undefined)?.message ?? e);

/**
 * Whether a cluster client passed on a redirection (directly, or wrapped after its own tries: node-redis's
 * "Too many Cluster redirections" with the last error as its cause, ioredis's with it in the message).
 */
function isRedirection(e: unknown): boolean {
  const text = `${messageOf(e)} ${messageOf((e as { cause?: unknown } | undefined)?.cause)}`;
  return /(^|\s|ReplyError: )(TRYAGAIN|ASK \d+|MOVED \d+)/.test(text);
}
