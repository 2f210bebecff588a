import { describe, expect, test } from 'vitest';
import fc from 'fast-check';
import {
  MemoryFrequencyCapStore,
  cappingUserOf,
  createFrequencyCapper,
  resolveAlternativeIds,
} from '../../../src/adserver/index.js';
import type { FrequencyCap } from '../../../src/adserver/index.js';
import { ID5, UID2, callWith } from '../fixtures.js';

const alt = resolveAlternativeIds({ 1234: 'id5-sync.com' });
const DAY = 86_400_000;

describe('capping user precedence', () => {
  test('uid wins over pid and the alternative id', () => {
    expect(cappingUserOf(callWith({ uid: 'u1', pid: 'p1', eids: [ID5] }), alt)).toEqual({
      kind: 'uid',
      key: 'uid:1234:u1',
    });
  });

  test('pid is used when there is no uid, even with the alternative provider present', () => {
    expect(cappingUserOf(callWith({ pid: 'p1', eids: [ID5] }), alt)).toEqual({ kind: 'pid', key: 'pid:p1' });
  });

  test("the activated provider's id is used only when the call has neither pid nor uid", () => {
    const user = cappingUserOf(callWith({ eids: [UID2, ID5] }), alt);
    expect(user).toMatchObject({ kind: 'alternative', key: 'alt:2:ID5*abc', provider: { id: 2 } });
  });

  test('no user when the network activated nothing, or the call lacks that provider', () => {
    expect(cappingUserOf(callWith({ eids: [ID5] }))).toEqual({ kind: 'none' });
    expect(cappingUserOf(callWith({ eids: [UID2] }), alt)).toEqual({ kind: 'none' });
    expect(cappingUserOf(callWith({ networkId: 99, eids: [ID5] }), alt)).toEqual({ kind: 'none' });
  });

  test('an alternative provider must be a registered one', () => {
    expect(() => resolveAlternativeIds({ 1: 'example.org' })).toThrow(/not a registered provider/);
    expect(() => resolveAlternativeIds({ 1: 0 })).toThrow(/not a registered provider/);
    expect(resolveAlternativeIds({ 1: 4 }).get(1)?.source).toBe('uidapi.com');
  });

  test('one provider per network: a second spelling of the same network id is refused, not a silent second provider', () => {
    expect(() => resolveAlternativeIds({ 1234: 'id5-sync.com', '01234': 'uidapi.com' })).toThrow(
      'alternativeIds: "01234" is not a network id',
    );
    expect(() => resolveAlternativeIds({ ' 1234': 'id5-sync.com' })).toThrow(/not a network id/);
    expect(() =>
      createFrequencyCapper({ alternativeIds: { abc: 'id5-sync.com' } as unknown as Record<number, string> }),
    ).toThrow(/not a network id/);
    expect([...resolveAlternativeIds({ 1234: 'id5-sync.com', 99: 2 }).entries()].map(([n, p]) => [n, p.id])).toEqual([
      [99, 2],
      [1234, 2],
    ]);
  });
});

describe('frequency capper', () => {
  const cap: FrequencyCap = { item: 'deal:42', max: 2, windowMs: DAY };

  function setup(withoutUser?: 'serve' | 'block') {
    let t = Date.UTC(2025, 0, 1);
    const capper = createFrequencyCapper({ alternativeIds: { 1234: 'id5-sync.com' }, now: () => t, withoutUser });
    return { capper, advance: (ms: number) => (t += ms) };
  }

  async function serveUntilCapped(
    capper: ReturnType<typeof setup>['capper'],
    call: ReturnType<typeof callWith>,
    c = cap,
  ) {
    let served = 0;
    for (let i = 0; i < 5; i++) {
      if (!(await capper.check(call, c)).allowed) break;
      await capper.record(call, c);
      served++;
    }
    return served;
  }

  test('caps impressions per pid per item, and other items and users are counted apart', async () => {
    const { capper } = setup();
    expect(await serveUntilCapped(capper, callWith({ pid: 'p1' }))).toBe(2);
    expect(await capper.check(callWith({ pid: 'p1' }), cap)).toMatchObject({
      allowed: false,
      count: 2,
      user: { kind: 'pid' },
    });
    expect((await capper.check(callWith({ pid: 'p1' }), { ...cap, item: 'deal:43' })).allowed).toBe(true);
    expect((await capper.check(callWith({ pid: 'p2' }), cap)).allowed).toBe(true);
  });

  test('take answers the count before its own impression, as the guide says: 0, 1, 2 allowed, then 3 refused', async () => {
    const { capper } = setup();
    const three: FrequencyCap = { item: 'deal:3', max: 3, per: 'day' };
    const answers = [];
    for (let i = 0; i < 4; i++) {
      const d = await capper.take(callWith({ pid: 'p1' }), three);
      answers.push([d.allowed, d.count, d.windows[0].count]);
    }
    expect(answers).toEqual([
      [true, 0, 0],
      [true, 1, 1],
      [true, 2, 2],
      [false, 3, 3],
    ]);
  });

  test('a uid caps the user across pids (the uid overrides the cookie)', async () => {
    const { capper } = setup();
    await capper.record(callWith({ uid: 'u1', pid: 'device-a' }), cap);
    await capper.record(callWith({ uid: 'u1', pid: 'device-b' }), cap);
    expect((await capper.check(callWith({ uid: 'u1', pid: 'device-c' }), cap)).allowed).toBe(false);
    expect((await capper.check(callWith({ pid: 'device-a' }), cap)).allowed).toBe(true);
  });

  test('the alternative id caps a cookieless user', async () => {
    const { capper } = setup();
    expect(await serveUntilCapped(capper, callWith({ eids: [ID5] }))).toBe(2);
    expect((await capper.check(callWith({ eids: [ID5] }), cap)).user.kind).toBe('alternative');
  });

  test('without any id the call is served uncapped by default, or blocked when configured', async () => {
    expect(await serveUntilCapped(setup().capper, callWith({ eids: [UID2] }))).toBe(5);
    expect(await setup('block').capper.check(callWith({}), cap)).toMatchObject({
      allowed: false,
      user: { kind: 'none' },
    });
  });

  test('the window slides: impressions older than windowMs no longer count', async () => {
    const { capper, advance } = setup();
    await capper.record(callWith({ pid: 'p' }), cap);
    advance(DAY / 2);
    await capper.record(callWith({ pid: 'p' }), cap);
    expect((await capper.check(callWith({ pid: 'p' }), cap)).allowed).toBe(false);
    advance(DAY / 2 + 1);
    expect(await capper.check(callWith({ pid: 'p' }), cap)).toMatchObject({ allowed: true, count: 1 });
  });

  test('rejects a malformed cap', async () => {
    const { capper } = setup();
    await expect(capper.check(callWith({ pid: 'p' }), { item: 'x', max: 0, windowMs: 1 })).rejects.toThrow(/max/);
    await expect(capper.check(callWith({ pid: 'p' }), { item: '', max: 1, windowMs: 1 })).rejects.toThrow(/item/);
  });

  test('works over any store implementing the interface, including an async one', async () => {
    const log: string[] = [];
    const inner = new MemoryFrequencyCapStore();
    const store = {
      count: async (k: string, since: number) => {
        log.push(`count ${k}`);
        return inner.count(k, since);
      },
      record: async (k: string, at: number, ttl: number) => {
        log.push(`record ${k}`);
        return inner.record(k, at, ttl);
      },
    };
    const capper = createFrequencyCapper({ store });
    await capper.record(callWith({ pid: 'p' }), cap);
    await capper.check(callWith({ pid: 'p' }), cap);
    expect(log).toEqual(['record pid:p|deal:42', 'count pid:p|deal:42']);
  });
});

describe('memory store', () => {
  test('evicts the least recently used keys beyond maxKeys', () => {
    const store = new MemoryFrequencyCapStore({ maxKeys: 2 });
    store.record('a', 1, 1000);
    store.record('b', 2, 1000);
    store.record('a', 3, 1000);
    store.record('c', 4, 1000);
    expect(store.size).toBe(2);
    expect(store.count('a', 0)).toBe(2);
    expect(store.count('b', 0)).toBe(0);
  });

  test('keeps at most maxEventsPerKey impressions per key', () => {
    const store = new MemoryFrequencyCapStore({ maxEventsPerKey: 3 });
    for (let t = 1; t <= 5; t++) store.record('k', t, 1000);
    expect(store.count('k', 0)).toBe(3);
  });
});

describe('memory store bounds (property)', () => {
  test('any keys and times: at most maxKeys keys of maxEventsPerKey each, counted like a plain list', () => {
    const op = fc.tuple(fc.integer({ min: 0, max: 30 }), fc.integer({ min: 0, max: 5_000 }));
    const ops = fc.array(op, { maxLength: 300 });
    fc.assert(
      fc.property(ops, (ops) => {
        const store = new MemoryFrequencyCapStore({ maxKeys: 8, maxEventsPerKey: 4 });
        const model = new Map<string, number[]>();
        for (const [k, at] of ops) {
          const key = `user-${k}|deal`;
          store.record(key, at, 1_000);
          // The model: every impression within 1 s of the newest, sorted, the last 4; the 8 most recently used keys.
          const times = [...(model.get(key) ?? []), at]
            .sort((a, b) => a - b)
            .filter((t) => t > at - 1_000)
            .slice(-4);
          model.delete(key);
          model.set(key, times);
          if (model.size > 8) model.delete(model.keys().next().value!);
          expect(store.size).toBeLessThanOrEqual(8);
        }
        for (const [key, times] of model) {
          for (const since of [0, 2_000, 4_000]) {
            expect(store.count(key, since)).toBe(times.filter((t) => t >= since).length);
          }
        }
      }),
      { numRuns: 200 },
    );
  });
});

describe("without the store's answer", () => {
  // A store that is down: every call fails at once, like a Redis client without an offline queue.
  const downStore = () => {
    const inner = new MemoryFrequencyCapStore();
    let up = false;
    return {
      setUp: (v: boolean) => (up = v),
      store: {
        count: inner.count.bind(inner),
        record: inner.record.bind(inner),
        apply: async (mode: 'check' | 'take' | 'record', checks: any, at: number) => {
          if (!up) throw new Error('down');
          return inner.apply(mode, checks, at);
        },
      },
      inner,
    };
  };
  const cap = { item: 'deal:1', max: 1, per: 'day' as const };

  test('the shadow count keeps at most shadowMaxKeys users, least recently used evicted first', async () => {
    const { store } = downStore();
    const capper = createFrequencyCapper({ store, shadowMaxKeys: 2 });
    const served = async (pid: string) => (await capper.take(callWith({ pid }), cap)).allowed;
    const first = [await served('u1'), await served('u1'), await served('u2'), await served('u3')];
    expect(first).toEqual([true, false, true, true]);
    expect(await served('u1')).toBe(true); // u1 was evicted by u3: the bound on memory costs exactness, not safety
    expect(capper.metrics()).toMatchObject({ errors: 5, servedOnError: 4, shadowCapped: 1 });
  });

  test('at most maxReplay impressions wait (the rest dropped, counted), written once the store answers', async () => {
    const { store, setUp, inner } = downStore();
    const capper = createFrequencyCapper({ store, maxReplay: 2 });
    for (const pid of ['a', 'b', 'c']) expect((await capper.take(callWith({ pid }), cap)).allowed).toBe(true);
    expect(capper.metrics()).toMatchObject({ replayPending: 2, replayDropped: 1, replayed: 0 });
    await capper.flush(); // still down: they stay queued
    expect(capper.metrics()).toMatchObject({ replayPending: 2, replayed: 0 });
    setUp(true);
    await capper.flush();
    expect(capper.metrics()).toMatchObject({ replayPending: 0, replayed: 2 });
    expect(['a', 'b', 'c'].map((pid) => inner.count(`pid:${pid}|deal:1`, 0))).toEqual([1, 1, 0]);
  });

  test("onStoreError 'block' refuses without consulting the shadow count", async () => {
    const { store } = downStore();
    const capper = createFrequencyCapper({ store, onStoreError: 'block' });
    expect((await capper.take(callWith({ pid: 'x' }), cap)).allowed).toBe(false);
    expect(capper.metrics()).toMatchObject({ blockedOnError: 1, shadowCapped: 0, replayPending: 0 });
  });

  test('shadowMaxKeys and maxReplay must be integers >= 1', () => {
    expect(() => createFrequencyCapper({ shadowMaxKeys: 0 })).toThrow('shadowMaxKeys must be an integer >= 1 (got 0)');
    expect(() => createFrequencyCapper({ maxReplay: 1.5 })).toThrow('maxReplay must be an integer >= 1 (got 1.5)');
  });
});

describe('deadlines', () => {
  test('one timer for all deadlines: of 3,000 decisions, the answered served, the rest timed out', async () => {
    const inner = new MemoryFrequencyCapStore();
    // Users `a…` are answered within 5 ms; users `z…` never.
    const store = {
      count: inner.count.bind(inner),
      record: inner.record.bind(inner),
      apply: (mode: 'check' | 'take' | 'record', checks: any, at: number) =>
        checks[0].user.startsWith('pid:z')
          ? new Promise<never>(() => {})
          : new Promise((ok) => setTimeout(() => ok(inner.apply(mode, checks, at)), Math.random() * 5)),
    };
    const capper = createFrequencyCapper({ store: store as any, timeoutMs: 30 });
    const cap = { item: 'deal:t', max: 1_000, per: 'day' as const };
    const results: Promise<{ pid: string; ms: number; error?: string }>[] = [];
    for (let wave = 0; wave < 30; wave++) {
      for (let i = 0; i < 100; i++) {
        const pid = `${i % 10 ? 'a' : 'z'}${i}`;
        const t0 = performance.now();
        const timed = capper.take(callWith({ pid }), cap);
        results.push(timed.then((d) => ({ pid, ms: performance.now() - t0, error: d.storeError })));
      }
      await new Promise((r) => setTimeout(r, 2));
    }
    const all = await Promise.all(results);
    expect(all.filter((r) => r.pid.startsWith('a')).every((r) => r.error === undefined)).toBe(true);
    const late = all.filter((r) => r.pid.startsWith('z'));
    expect(late.every((r) => r.error === 'timeout' && r.ms >= 29)).toBe(true);
    expect(Math.max(...late.map((r) => r.ms))).toBeLessThan(1_000);
    expect(capper.metrics()).toMatchObject({ storeCalls: 3_000, timeouts: 300, errors: 0 });
  });
});
