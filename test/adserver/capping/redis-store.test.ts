// Cap windows at their boundaries on both shipped stores (memory, and a real redis-server), Redis round trips,
// keys, expiry, Cluster hash tags, and the timeout / onStoreError policy against a real slow server.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { fileURLToPath } from 'node:url';
import { createCluster } from 'redis';
import { Redis } from 'ioredis';
import {
  MemoryFrequencyCapStore,
  createFrequencyCapper,
  createRedisFrequencyCapStore,
  defineFrequencyCap,
} from '../../../src/adserver/index.js';
import { DEFAULT_CAP_TIMEOUT_MS } from '../../../src/adserver/index.js';
import { clusterKeySlot } from '../../../src/adserver/common/redis-client.js';
import type { FrequencyCapStore } from '../../../src/adserver/index.js';
// @ts-expect-error plain ESM helper shared with the bench
import { connectRedis, startRedis, untilReconnected } from '../../support/redis-server.mjs';
import { callWith } from '../fixtures.js';
import { typecheckFile } from '../../support/typecheck.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
let redis: Awaited<ReturnType<typeof startRedis>>;
let client: Awaited<ReturnType<typeof connectRedis>>;
beforeAll(async () => {
  redis = await startRedis();
  client = await connectRedis(redis.url);
});
afterAll(async () => {
  await client?.close();
  await redis?.stop();
});

let n = 0;
const stores: [string, () => FrequencyCapStore][] = [
  ['memory', () => new MemoryFrequencyCapStore()],
  ['redis', () => createRedisFrequencyCapStore(client, { prefix: `t${++n}:` })],
];

describe.each(stores)('cap windows at their boundaries (%s store)', (_, makeStore) => {
  function setup(at: string) {
    let t = Date.parse(at);
    const capper = createFrequencyCapper({ store: makeStore(), now: () => t, timeoutMs: 10_000 });
    const user = callWith({ pid: 'p1' });
    return {
      take: async (cap: Parameters<typeof capper.take>[1]) => (await capper.take(user, cap)).allowed,
      at: (iso: string) => (t = Date.parse(iso)),
      capper,
      user,
    };
  }
  const takeN = async (take: (c: any) => Promise<boolean>, cap: object, k: number) => {
    const out = [];
    for (let i = 0; i < k; i++) out.push(await take(cap));
    return out;
  };

  test('a calendar day resets at UTC midnight; a rolling day 24 h after each impression', async () => {
    const calendar = defineFrequencyCap({ item: 'deal:cal', max: 2, per: 'day' });
    const rolling = defineFrequencyCap({ item: 'deal:roll', max: 2, per: 'day', rolling: true });
    const s = setup('2025-03-01T23:00:00Z');
    expect(await takeN(s.take, calendar, 3)).toEqual([true, true, false]);
    expect(await takeN(s.take, rolling, 3)).toEqual([true, true, false]);
    s.at('2025-03-01T23:59:59.999Z');
    expect([await s.take(calendar), await s.take(rolling)]).toEqual([false, false]);
    s.at('2025-03-02T00:00:00.000Z');
    expect([await s.take(calendar), await s.take(rolling)]).toEqual([true, false]);
    s.at('2025-03-02T23:00:00.001Z'); // just over 24 h after the first two: the rolling window now excludes them
    expect(await s.take(rolling)).toBe(true);
  });

  test('an ISO week resets on Monday 00:00 UTC, a month on the 1st', async () => {
    const week = defineFrequencyCap({ item: 'deal:w', max: 1, per: 'week' });
    const month = defineFrequencyCap({ item: 'deal:m', max: 1, per: 'month' });
    const s = setup('2025-06-01T23:59:59Z'); // a Sunday, the last day of May's ISO week… and June's first day
    expect(await takeN(s.take, week, 2)).toEqual([true, false]);
    s.at('2025-06-02T00:00:00Z');
    expect(await s.take(week)).toBe(true);
    s.at('2025-01-31T23:59:59Z');
    expect(await takeN(s.take, month, 2)).toEqual([true, false]);
    s.at('2025-02-01T00:00:00Z');
    expect(await s.take(month)).toBe(true);
  });

  test('several windows: 2 a day and 3 a week, all enforced; a lifetime window never resets', async () => {
    const cap = defineFrequencyCap({
      item: 'deal:multi',
      windows: [
        { max: 2, per: 'day' },
        { max: 3, per: 'week' },
      ],
    });
    const life = defineFrequencyCap({ item: 'deal:life', max: 2, per: 'lifetime' });
    const s = setup('2025-06-02T10:00:00Z'); // Monday
    expect(await takeN(s.take, cap, 3)).toEqual([true, true, false]);
    s.at('2025-06-03T10:00:00Z');
    const d = await s.capper.take(s.user, cap);
    expect(d).toMatchObject({
      allowed: true,
      windows: [
        { window: '2/day', count: 0 },
        { window: '3/week', count: 2 },
      ],
    });
    expect(await s.take(cap)).toBe(false); // the week is full
    s.at('2025-06-09T00:00:00Z');
    expect(await s.take(cap)).toBe(true);
    expect(await takeN(s.take, life, 3)).toEqual([true, true, false]);
    s.at('2025-12-31T00:00:00Z');
    expect(await s.take(life)).toBe(false);
  });

  test('a custom window of a fractional or a huge number of ms counts like any other', async () => {
    const odd = defineFrequencyCap({
      item: 'deal:odd',
      windows: [
        { max: 2, windowMs: 1_500.5 },
        { max: 3, windowMs: 1e300 },
      ],
    });
    const s = setup('2025-03-01T10:00:00Z');
    expect(await takeN(s.take, odd, 3)).toEqual([true, true, false]);
    s.at('2025-03-01T10:00:01.501Z'); // the short window has passed; the huge one holds the 2
    expect(await s.capper.take(s.user, odd)).toMatchObject({
      allowed: true,
      windows: [{ count: 0 }, { count: 2 }],
    });
    expect(await s.take(odd)).toBe(false);
  });

  test('check does not count; record counts even over the cap (serve first, count later)', async () => {
    const cap = defineFrequencyCap({ item: 'deal:cr', max: 1, per: 'day' });
    const s = setup('2025-03-01T10:00:00Z');
    expect((await s.capper.check(s.user, cap)).allowed).toBe(true);
    expect((await s.capper.check(s.user, cap)).allowed).toBe(true);
    await s.capper.record(s.user, cap);
    await s.capper.record(s.user, cap);
    expect(await s.capper.check(s.user, cap)).toMatchObject({ allowed: false, count: 2 });
  });
});

describe('the Redis store', () => {
  test('a node-redis client or cluster type-checks as the client of both Redis stores', () => {
    const file = fileURLToPath(new URL('./redis.typecheck.ts', import.meta.url));
    expect(typecheckFile(file)).toEqual([]);
  }, 60_000);

  test('a reply of the wrong shape fails its decisions (the policy answers), never decides from it', async () => {
    for (const reply of [null, 'OK', [1], [1, 0, 0, 9]]) {
      const odd = { evalSha: () => Promise.resolve(reply), eval: () => Promise.resolve(reply), hIncrBy: () => 0 };
      const store = createRedisFrequencyCapStore(odd as never);
      const capper = createFrequencyCapper({ store });
      const cap = defineFrequencyCap({
        item: 'deal:odd',
        windows: [
          { max: 1, per: 'day' },
          { max: 2, per: 'week' },
        ],
      });
      const d = await capper.take(callWith({ pid: 'o' }), cap);
      expect(d).toMatchObject({ allowed: true, storeError: 'error' });
      expect(capper.metrics()).toMatchObject({ errors: 1, servedOnError: 1 });
    }
  });

  test('one take is one EVALSHA round trip, whatever the number of windows and caps', async () => {
    const store = createRedisFrequencyCapStore(client, { prefix: 'rt:' });
    const capper = createFrequencyCapper({ store, timeoutMs: 10_000 });
    const caps = [
      defineFrequencyCap({
        item: 'deal:1',
        windows: [
          { max: 3, per: 'day' },
          { max: 9, per: 'week' },
        ],
      }),
      defineFrequencyCap({ item: 'campaign:1', max: 5, windowMs: HOUR }),
    ];
    await capper.take(callWith({ pid: 'warm' }), caps); // loads the script (EVAL after NOSCRIPT)
    await client.configResetStat();
    for (let i = 0; i < 10; i++) await capper.take(callWith({ pid: `u${i}` }), caps);
    const stats = await client.info('commandstats');
    const calls = Object.fromEntries(
      [...stats.matchAll(/cmdstat_(\w+):calls=(\d+)/g)].map((m) => [m[1], Number(m[2])]),
    );
    expect(calls.evalsha).toBe(10);
    // Each take ran these inside the script (not as round trips); the client sent nothing else but this INFO.
    expect(
      Object.keys(calls).filter(
        (c) =>
          !['evalsha', 'info', 'zremrangebyscore', 'zcount', 'zadd', 'zcard', 'pttl', 'pexpire', 'config'].includes(c),
      ),
    ).toEqual([]);
  });

  test('keys carry the user in a hash tag, expire with the longest window, and hold at most the served impressions', async () => {
    const store = createRedisFrequencyCapStore(client, { prefix: 'kx:' });
    const capper = createFrequencyCapper({ store, timeoutMs: 10_000 });
    const cap = defineFrequencyCap({
      item: 'deal:{7}',
      windows: [
        { max: 2, per: 'day' },
        { max: 4, windowMs: 3 * DAY },
      ],
    });
    for (let i = 0; i < 10; i++) await capper.take(callWith({ uid: 'a}b' }), cap);
    const key = store.keyOf('uid:1234:a}b', 'deal:{7}');
    expect(key).toBe('kx:{uid:1234:a%7Db}deal:%7B7%7D');
    expect(await client.zCard(key)).toBe(2);
    const ttl = await client.pTTL(key);
    expect(ttl).toBeGreaterThan(3 * DAY - 60_000);
    expect(ttl).toBeLessThanOrEqual(3 * DAY);
  });

  test('on a Redis Cluster node, one decision over two items of a user is one script (its keys share a slot)', async () => {
    const node = await startRedis({ cluster: true });
    const cluster = createCluster({ rootNodes: [{ url: node.url }] });
    cluster.on('error', () => {});
    try {
      await cluster.connect();
      const store = createRedisFrequencyCapStore(cluster);
      const capper = createFrequencyCapper({ store, timeoutMs: 10_000 });
      const caps = [
        defineFrequencyCap({ item: 'deal:1', max: 2, per: 'day' }),
        defineFrequencyCap({ item: 'campaign:9', max: 1, per: 'day' }),
      ];
      const user = callWith({ pid: 'p-cluster' });
      expect((await capper.take(user, caps)).allowed).toBe(true);
      expect(await capper.take(user, caps)).toMatchObject({
        allowed: false,
        windows: [
          { item: 'deal:1', count: 1 },
          { item: 'campaign:9', count: 1 },
        ],
      });
      expect(capper.metrics().errors).toBe(0); // a CROSSSLOT error would have been counted and served by the policy
      const slots = await Promise.all(caps.map((c) => cluster.clusterKeySlot(store.keyOf('pid:p-cluster', c.item))));
      expect(slots[0]).toBe(slots[1]);
    } finally {
      await cluster.close().catch(() => {});
      await node.stop();
    }
  });

  test('a slow Redis: each call is answered within the timeout by the policy, and counted', async () => {
    const slow = await startRedis();
    const c = await connectRedis(slow.url);
    const admin = await connectRedis(slow.url);
    try {
      const cap = defineFrequencyCap({ item: 'deal:slow', max: 1, per: 'day' });
      const serve = createFrequencyCapper({ store: createRedisFrequencyCapStore(c), timeoutMs: 20 });
      const block = createFrequencyCapper({
        store: createRedisFrequencyCapStore(c),
        timeoutMs: 20,
        onStoreError: 'block',
      });
      await serve.take(callWith({ pid: 'warm' }), cap);
      await admin.sendCommand(['CLIENT', 'PAUSE', '1500', 'ALL']); // the server stops answering clients for 1.5 s
      const t0 = performance.now();
      const [a, b] = await Promise.all([
        serve.take(callWith({ pid: 'x' }), cap),
        block.take(callWith({ pid: 'x' }), cap),
      ]);
      const elapsed = performance.now() - t0;
      expect(a).toMatchObject({ allowed: true, storeError: 'timeout' });
      expect(b).toMatchObject({ allowed: false, storeError: 'timeout' });
      expect(elapsed).toBeLessThan(1_000); // the timeout, not the 1.5 s pause (generous for a loaded machine)
      expect(serve.metrics()).toMatchObject({ timeouts: 1, servedOnError: 1, blockedOnError: 0 });
      expect(block.metrics()).toMatchObject({ timeouts: 1, servedOnError: 0, blockedOnError: 1 });
    } finally {
      await admin.sendCommand(['CLIENT', 'UNPAUSE']).catch(() => {});
      await Promise.all([c.close(), admin.close()]).catch(() => {});
      await slow.stop();
    }
  });
});

describe('coalesced takes', () => {
  const evalshaCalls = async (c: typeof client) =>
    Number(/cmdstat_evalsha:calls=(\d+)/.exec(await c.info('commandstats'))?.[1] ?? 0);

  test('concurrent takes go out as one script call, and each is decided and counted as if alone', async () => {
    const store = createRedisFrequencyCapStore(client, { prefix: 'co:' });
    const capper = createFrequencyCapper({ store, timeoutMs: 10_000 });
    const cap = defineFrequencyCap({
      item: 'deal:co',
      windows: [
        { max: 3, per: 'day' },
        { max: 4, per: 'week' },
      ],
    });
    await capper.take(callWith({ pid: 'warm' }), cap); // loads the script (EVAL after NOSCRIPT)
    await client.configResetStat();
    const users = ['a', 'b', 'c', 'a', 'b', 'c', 'a', 'b', 'c', 'a', 'b', 'c', 'a', 'a'];
    const decisions = await Promise.all(users.map((pid) => capper.take(callWith({ pid }), cap)));
    expect(await evalshaCalls(client)).toBe(1);
    // In call order, per user: counted 0, 1, 2 and served, then refused at 3 (the day is full), as one by one.
    const of = (pid: string) =>
      decisions.filter((_, i) => users[i] === pid).map((d) => [d.allowed, d.windows.map((w) => w.count)]);
    const refused = [false, [3, 3]];
    expect(of('a')).toEqual([[true, [0, 0]], [true, [1, 1]], [true, [2, 2]], refused, refused, refused]);
    expect(of('b')).toEqual([
      [true, [0, 0]],
      [true, [1, 1]],
      [true, [2, 2]],
      [false, [3, 3]],
    ]);
    expect(await client.zCard('co:{pid:a}deal:co')).toBe(3);
  });

  test('a batch is at most maxBatch decisions; beyond maxPending waiting, a decision fails at once', async () => {
    const paused = await startRedis();
    const c = await connectRedis(paused.url);
    const admin = await connectRedis(paused.url);
    try {
      const store = createRedisFrequencyCapStore(c, { maxBatch: 5, maxPending: 20 });
      const capper = createFrequencyCapper({ store, timeoutMs: 10_000 });
      const cap = defineFrequencyCap({ item: 'deal:b', max: 1, per: 'day' });
      await capper.take(callWith({ pid: 'warm' }), cap);
      await admin.configResetStat();
      const all = await Promise.all(Array.from({ length: 20 }, (_, i) => capper.take(callWith({ pid: `u${i}` }), cap)));
      expect(all.every((d) => d.allowed && !d.storeError)).toBe(true);
      expect(await evalshaCalls(admin)).toBe(4);

      await admin.sendCommand(['CLIENT', 'PAUSE', '1000', 'ALL']);
      const t0 = performance.now();
      // 20 wait to be sent (then wait in Redis); the 10 made beyond maxPending fail at once.
      const late = Array.from({ length: 30 }, (_, i) => capper.take(callWith({ pid: `v${i}` }), cap));
      const rejected = await Promise.all(late.slice(20));
      expect(performance.now() - t0).toBeLessThan(500);
      expect(rejected.map((d) => d.storeError)).toEqual(Array(10).fill('error'));
      expect((await Promise.all(late.slice(0, 20))).every((d) => d.allowed && !d.storeError)).toBe(true);
    } finally {
      await Promise.all([c.close(), admin.close()]).catch(() => {});
      await paused.stop();
    }
  });

  test('on a Redis Cluster, concurrent takes of many slots go out as one script call per primary', async () => {
    const node = await startRedis({ cluster: true });
    const cluster = createCluster({ rootNodes: [{ url: node.url }] });
    cluster.on('error', () => {});
    const admin = await connectRedis(node.url);
    try {
      await cluster.connect();
      const store = createRedisFrequencyCapStore(cluster);
      // Our slot function agrees with the server's, hash tags, empty tags and UTF-8 included.
      const samples = ['eidkit:fc:{pid:a}deal:1', 'plain', '{}x', '{x', 'a{b}c{d}', '{uid:1:é€😀}i'];
      samples.push(...Array.from({ length: 30 }, (_, i) => `k${i * 7919}`));
      for (const key of samples) expect(clusterKeySlot(key), key).toBe(await cluster.clusterKeySlot(key));
      // 12 users in 4 slots, 3 per slot.
      const bySlot = new Map<number, string[]>();
      for (let i = 0; [...bySlot.values()].filter((u) => u.length >= 3).length < 4; i++) {
        const pid = `c${i}`;
        const slot = clusterKeySlot(store.keyOf(`pid:${pid}`, 'deal:cl'));
        if (bySlot.size < 4 || bySlot.has(slot)) bySlot.set(slot, [...(bySlot.get(slot) ?? []), pid]);
      }
      const users = [...bySlot.values()].filter((u) => u.length >= 3).flatMap((u) => u.slice(0, 3));
      expect(new Set(users.map((u) => clusterKeySlot(store.keyOf(`pid:${u}`, 'deal:cl')))).size).toBe(4);
      const capper = createFrequencyCapper({ store, timeoutMs: 10_000 });
      const cap = defineFrequencyCap({ item: 'deal:cl', max: 1, per: 'day' });
      await capper.take(callWith({ pid: users[0] }), cap); // loads the script; users[0] is now at its cap
      await admin.configResetStat();
      const decisions = await Promise.all([...users, ...users].map((pid) => capper.take(callWith({ pid }), cap)));
      expect(capper.metrics().errors).toBe(0); // a CROSSSLOT error would have been counted and served by the policy
      expect(await evalshaCalls(admin)).toBe(1); // one primary here: one call for the 4 slots
      expect(decisions.map((d) => d.allowed)).toEqual([false, ...Array(11).fill(true), ...Array(12).fill(false)]);
    } finally {
      await cluster.close().catch(() => {});
      await admin.close().catch(() => {});
      await node.stop();
    }
  }, 30_000);
});

describe('while the store does not answer', () => {
  test('Redis down: a process stops serving a user at the cap, then writes what it served to Redis', async () => {
    const down = await startRedis({ persist: true });
    const c = await connectRedis(down.url, { disableOfflineQueue: true });
    try {
      const capper = createFrequencyCapper({ store: createRedisFrequencyCapStore(c) });
      const cap = defineFrequencyCap({ item: 'deal:down', max: 3, per: 'day' });
      expect((await capper.take(callWith({ pid: 'u1' }), cap)).allowed).toBe(true);
      await down.kill();
      const during = [];
      for (let i = 0; i < 10; i++) during.push(await capper.take(callWith({ pid: i % 2 ? 'u1' : 'u2' }), cap));
      // Without the store, this process serves each user up to the cap, counting what Redis had counted: u1 had 1.
      expect(during.map((d) => [d.allowed, d.storeError])).toEqual([
        ...Array(5).fill([true, 'error']),
        ...Array(5).fill([false, 'error']),
      ]);
      // Each decision reports the shadow count (u1's one impression before the outage is Redis's last answer):
      // u2 0, 1, 2, 3, 3; u1 1, 2, 3, 3, 3. Never the 0 of "nothing known".
      expect(during.map((d) => d.count)).toEqual([0, 1, 1, 2, 2, 3, 3, 3, 3, 3]);
      expect(during[9].windows).toEqual([{ item: 'deal:down', window: '3/day', max: 3, count: 3 }]);
      const counted = { errors: 10, servedOnError: 5, blockedOnError: 5, shadowCapped: 5, replayPending: 5 };
      expect(capper.metrics()).toMatchObject(counted);

      await down.start();
      await untilReconnected(c);
      await capper.flush();
      expect(capper.metrics()).toMatchObject({ replayed: 5, replayPending: 0, replayDropped: 0 });
      // What was served is counted: u1 1 + 2, u2 3. Both are at their cap, never over it.
      expect(await c.zCard('eidkit:fc:{pid:u1}deal:down')).toBe(3);
      expect(await c.zCard('eidkit:fc:{pid:u2}deal:down')).toBe(3);
      expect((await capper.take(callWith({ pid: 'u2' }), cap)).allowed).toBe(false);
    } finally {
      await c.close().catch(() => {});
      await down.stop();
    }
  }, 30_000);

  test('a script call without an answer fails after commandTimeoutMs and frees its place (node-redis and ioredis)', async () => {
    const stuck = await startRedis();
    const admin = await connectRedis(stuck.url);
    const nodeRedis = await connectRedis(stuck.url);
    const io = new Redis(stuck.url);
    // node-redis's own per-command timer is off for the store's calls (the store bounds them).
    const options: unknown[] = [];
    const spied = Object.create(nodeRedis) as typeof nodeRedis;
    spied.withCommandOptions = ((o: never) => {
      options.push(o);
      return nodeRedis.withCommandOptions(o);
    }) as never;
    try {
      for (const client of [spied, io]) {
        const store = createRedisFrequencyCapStore(client, {
          commandTimeoutMs: 300,
          prefix: `stuck${options.length}:`,
        });
        const check = () =>
          store.apply!(
            'take',
            [{ key: 'k', user: 'pid:s', item: 'deal:s', keepMs: DAY, windows: [{ since: 0, max: 5 }] }],
            1,
          );
        await check();
        await admin.sendCommand(['CLIENT', 'PAUSE', '1500', 'ALL']);
        const t0 = performance.now();
        await expect(check()).rejects.toThrow('createRedisFrequencyCapStore: no answer from Redis in 300 ms');
        expect(performance.now() - t0).toBeGreaterThanOrEqual(299);
        // Its place in flight is freed: the next call goes out at once (not after the stuck call's answer), and fails
        // the same way, still within the pause.
        await expect(check()).rejects.toThrow('no answer from Redis in 300 ms');
        expect(performance.now() - t0).toBeLessThan(1_500);
        await new Promise((r) => setTimeout(r, t0 + 1_600 - performance.now())); // the pause is over
        await expect(check()).resolves.toMatchObject({ allowed: true });
      }
      expect(options).toEqual([{ timeout: 0 }]);
    } finally {
      io.disconnect();
      await Promise.all([nodeRedis.close(), admin.close()]).catch(() => {});
      await stuck.stop();
    }
  }, 30_000);

  test('default timeout: with Redis stalled, each call is answered in about 100 ms, not after the stall', async () => {
    const slow = await startRedis();
    const c = await connectRedis(slow.url);
    const admin = await connectRedis(slow.url);
    try {
      const capper = createFrequencyCapper({ store: createRedisFrequencyCapStore(c) });
      const cap = defineFrequencyCap({ item: 'deal:stall', max: 2, per: 'day' });
      await capper.take(callWith({ pid: 'warm' }), cap);
      await admin.sendCommand(['CLIENT', 'PAUSE', '1500', 'ALL']);
      const t0 = performance.now();
      const d = await Promise.all(Array.from({ length: 4 }, () => capper.take(callWith({ pid: 'x' }), cap)));
      const elapsed = performance.now() - t0;
      expect(elapsed).toBeGreaterThanOrEqual(DEFAULT_CAP_TIMEOUT_MS - 1);
      expect(elapsed).toBeLessThan(1_000); // the timeout, not the 1.5 s pause (generous for a loaded machine)
      const [served, refused] = [
        [true, 'timeout'],
        [false, 'timeout'],
      ];
      expect(d.map((x) => [x.allowed, x.storeError])).toEqual([served, served, refused, refused]);
      // When Redis answers, the late takes are counted where Redis allowed them: nothing more to write.
      await capper.flush();
      expect(capper.metrics()).toMatchObject({ timeouts: 4, servedOnError: 2, shadowCapped: 2 });
      expect(capper.metrics()).toMatchObject({ replayed: 0, replayPending: 0 });
      expect(await c.zCard('eidkit:fc:{pid:x}deal:stall')).toBe(2);
    } finally {
      await Promise.all([c.close(), admin.close()]).catch(() => {});
      await slow.stop();
    }
  }, 30_000);
});
