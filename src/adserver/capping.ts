/**
 * Frequency capping by an alternative id (extended-ids.md §1, §8): impressions per user per time frame per item.
 * The user is the publisher `uid` when present (it overrides `pid`, §2.3), else the `pid` cookie (the default),
 * else — only when the network activated one provider and the call carries neither — that provider's id.
 */
import { providerById, providerForSource } from '../core/index.js';
import type { Provider } from '../core/index.js';
import type { AdCall } from './parse.js';

/** Which id identified the user for capping. */
export type CappingUserKind = 'uid' | 'pid' | 'alternative' | 'none';

/** The user a cap is counted against. `key` is absent when no id was available (`kind: 'none'`). */
export interface CappingUser {
  kind: CappingUserKind;
  /** Store key prefix: `uid:<network>:<uid>`, `pid:<pid>` or `alt:<provider id>:<id>`. */
  key?: string;
  /** The alternative provider used, for `kind: 'alternative'`. */
  provider?: Provider;
}

/** Per network, the one provider activated as the alternative to the cookie (network id → provider id or source). */
export type AlternativeIdConfig = Readonly<Record<number, number | string>>;

/** A cap: at most `max` impressions of `item` per user within the last `windowMs` milliseconds. */
export interface FrequencyCap {
  /** What is capped, for example `deal:123` or `campaign:9`. */
  item: string;
  /** Impressions allowed in the window (≥ 1). */
  max: number;
  /** Sliding window length in milliseconds. */
  windowMs: number;
}

/**
 * Where impressions are counted. Implement it over a shared store (Redis: README "Frequency capping") to cap
 * across many servers. Methods may be synchronous or return promises.
 */
export interface FrequencyCapStore {
  /** Impressions recorded under `key` at or after `since` (ms since the epoch). */
  count(key: string, since: number): number | Promise<number>;
  /** Records one impression under `key` at `at`; the store may forget it after `ttlMs`. */
  record(key: string, at: number, ttlMs: number): void | Promise<void>;
}

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
    const times = entry && entry.expires > at ? entry.times.filter((t) => t > at - ttlMs) : [];
    // Keep times sorted even if a clock steps back.
    let i = times.length;
    while (i > 0 && times[i - 1] > at) i--;
    times.splice(i, 0, at);
    if (times.length > this.maxEvents) times.splice(0, times.length - this.maxEvents);
    this.events.delete(key); // re-insert: Map order is the LRU order
    this.events.set(key, { times, expires: Math.max(entry?.expires ?? 0, at + ttlMs) });
    while (this.events.size > this.maxKeys) this.events.delete(this.events.keys().next().value as string);
  }

  /** Number of keys held. */
  get size(): number {
    return this.events.size;
  }
}

/** Options of {@link createFrequencyCapper}. */
export interface FrequencyCapperOptions {
  /** The counting store. Default: a new {@link MemoryFrequencyCapStore}. */
  store?: FrequencyCapStore;
  /** Networks that activated an alternative id provider (one provider per network). */
  alternativeIds?: AlternativeIdConfig;
  /** What to do when the call carries no usable id: `'serve'` uncapped (default) or `'block'` capped items. */
  withoutUser?: 'serve' | 'block';
  /** Clock, for tests. */
  now?: () => number;
}

/** The outcome of a cap check. */
export interface CapDecision {
  /** True when the item may be served to this user now. */
  allowed: boolean;
  /** Impressions already counted in the window (0 when no user id). */
  count: number;
  /** The user the cap was counted against. */
  user: CappingUser;
}

/** Checks and records capped impressions for ad calls. */
export interface FrequencyCapper {
  /** The user id capping uses for this call (precedence uid > pid > alternative id > none). */
  userOf(call: AdCall): CappingUser;
  /** Whether the call's user may see `cap.item` once more. */
  check(call: AdCall, cap: FrequencyCap): Promise<CapDecision>;
  /** Counts one impression of `cap.item` for the call's user (nothing when there is no user id). */
  record(call: AdCall, cap: FrequencyCap): Promise<CappingUser>;
}

/** Resolves and checks the alternative-id configuration; throws a TypeError naming the bad entry. */
export function resolveAlternativeIds(config: AlternativeIdConfig = {}): Map<number, Provider> {
  const out = new Map<number, Provider>();
  for (const [network, ref] of Object.entries(config)) {
    // Only canonical network ids: '01234' or ' 1234' would otherwise land on network 1234 as a second provider,
    // silently replacing the first (extended-ids.md §8: one provider per network).
    if (!/^[1-9]\d{0,9}$/.test(network)) throw new TypeError(`alternativeIds: "${network}" is not a network id`);
    const provider = typeof ref === 'number' ? providerById(ref) : providerForSource(ref);
    if (provider.id === 0) throw new TypeError(`alternativeIds[${network}]: "${String(ref)}" is not a registered provider`);
    out.set(Number(network), provider);
  }
  return out;
}

/**
 * The user capping counts against (extended-ids.md §8): `uid` (scoped to its network) > `pid` cookie >
 * the network's one activated alternative provider's first id, used only when the call has neither > none.
 */
export function cappingUserOf(call: AdCall, alternatives: ReadonlyMap<number, Provider> = new Map()): CappingUser {
  if (call.uid !== undefined) return { kind: 'uid', key: `uid:${call.networkId ?? ''}:${call.uid}` };
  if (call.pid !== undefined) return { kind: 'pid', key: `pid:${call.pid}` };
  const provider = call.networkId !== undefined ? alternatives.get(call.networkId) : undefined;
  if (provider) {
    const eid = call.eids.find((e) => providerForSource(e.source).id === provider.id);
    const id = eid?.uids[0]?.id;
    if (id) return { kind: 'alternative', key: `alt:${provider.id}:${id}`, provider };
  }
  return { kind: 'none' };
}

function checkCap(cap: FrequencyCap): void {
  if (!cap || typeof cap.item !== 'string' || !cap.item) throw new TypeError('frequency cap needs a non-empty item');
  if (!Number.isInteger(cap.max) || cap.max < 1) throw new TypeError(`frequency cap "${cap.item}": max must be an integer >= 1`);
  if (!Number.isFinite(cap.windowMs) || cap.windowMs <= 0) throw new TypeError(`frequency cap "${cap.item}": windowMs must be > 0`);
}

/**
 * Creates a frequency capper.
 * @example
 * const capper = createFrequencyCapper({ alternativeIds: { 1234: 'id5-sync.com' } });
 * const cap = { item: 'deal:42', max: 3, windowMs: 86_400_000 };
 * if ((await capper.check(call, cap)).allowed) { serve(); await capper.record(call, cap); }
 */
export function createFrequencyCapper(options: FrequencyCapperOptions = {}): FrequencyCapper {
  const store = options.store ?? new MemoryFrequencyCapStore();
  const alternatives = resolveAlternativeIds(options.alternativeIds);
  const now = options.now ?? Date.now;
  const blockWithoutUser = options.withoutUser === 'block';
  const userOf = (call: AdCall) => cappingUserOf(call, alternatives);
  return {
    userOf,
    async check(call, cap) {
      checkCap(cap);
      const user = userOf(call);
      if (!user.key) return { allowed: !blockWithoutUser, count: 0, user };
      const count = await store.count(`${user.key}|${cap.item}`, now() - cap.windowMs);
      return { allowed: count < cap.max, count, user };
    },
    async record(call, cap) {
      checkCap(cap);
      const user = userOf(call);
      if (user.key) await store.record(`${user.key}|${cap.item}`, now(), cap.windowMs);
      return user;
    },
  };
}
