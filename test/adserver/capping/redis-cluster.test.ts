// The Redis cap store on a real Redis Cluster (three primaries, three replicas, Debian's redis-server on loopback)
// through node-redis's createCluster and ioredis's Redis.Cluster: a burst batched per primary, the shadow count
// seeded with Redis's answers, a moving slot's TRYAGAIN / ASK handled in the store, write-back without a storm
// through a failover, NOSCRIPT found inside ioredis's wrapped redirection error.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createCluster } from 'redis';
import { Redis } from 'ioredis';
import {
  createFrequencyCapper,
  createRedisFrequencyCapStore,
  defineFrequencyCap,
} from '../../../src/adserver/index.js';
import { clusterKeySlot } from '../../../src/adserver/common/redis-client.js';
// @ts-expect-error plain ESM helper shared with the bench
import { startRedisCluster } from '../../support/redis-cluster.mjs';
// @ts-expect-error plain ESM helper shared with the bench
import { clusterClient } from '../../support/cluster-client.mjs';
import { callWith } from '../fixtures.js';

const CLIENTS = ['node-redis', 'ioredis'] as const;
let cluster: any;
const clients: any[] = [];
beforeAll(async () => {
  cluster = await startRedisCluster();
}, 60_000);
afterAll(async () => {
  // At once, without waiting for replies: a node may have been killed.
  for (const c of clients) {
    if (c instanceof Redis.Cluster) c.disconnect();
    else c.destroy();
  }
  await cluster?.stop();
});

/** A cluster client as the docs configure it (closed after the file). */
async function connect(client: (typeof CLIENTS)[number], extra: object = {}) {
  const c =
    client === 'ioredis' && Object.keys(extra).length > 0
      ? new Redis.Cluster(cluster.startupNodes, { enableOfflineQueue: false, ...extra })
      : await clusterClient(
          { client, rootNodes: cluster.rootNodes, startupNodes: cluster.startupNodes },
          { createCluster, Redis },
        );
  if (c instanceof Redis.Cluster && c.status !== 'ready') {
    c.on('error', () => {});
    await new Promise((r) => c.once('ready', r));
  }
  clients.push(c);
  return c;
}

/** EVALSHA and EVAL the primaries ran since the last reset. */
const scriptCalls = async () => {
  const stats = await cluster.commandStats();
  return (stats.evalsha ?? 0) + (stats.eval ?? 0);
};

/** `n` distinct users (pid) whose keys of `item` fall in hash slots the primary `owner` serves. */
function usersOn(owner: any, item: string, n: number, tag: string): string[] {
  const out: string[] = [];
  for (let i = 0; out.length < n; i++) {
    const slot = clusterKeySlot(`eidkit:fc:{pid:${tag}${i}}${item}`);
    if (owner.slots.some(([a, b]: number[]) => slot >= a && slot <= b)) out.push(`${tag}${i}`);
  }
  return out;
}

describe.each(CLIENTS)('a 3-primary cluster through %s', (client) => {
  test('2,000 concurrent takes over 500 users: one call per primary per batch, exactly the cap each', async () => {
    const redis = await connect(client);
    const store = createRedisFrequencyCapStore(redis, { prefix: `burst-${client}:` });
    // A long timeout: this test counts calls and checks exactness; the default timeout under a burst is the fleet
    // test's (test/adserver/redis-cluster-fleet.test.ts).
    const capper = createFrequencyCapper({ store, timeoutMs: 10_000 });
    const cap = defineFrequencyCap({ item: 'deal:burst', max: 3, per: 'day' });
    await Promise.all(Array.from({ length: 300 }, (_, u) => capper.take(callWith({ pid: `warm${u}` }), cap)));
    await cluster.resetStats();
    const calls = Array.from({ length: 2_000 }, (_, i) => callWith({ pid: `u${i % 500}` }));
    const decisions = await Promise.all(calls.map((c) => capper.take(c, cap)));
    const served = new Map<string, number>();
    decisions.forEach((d, i) => d.allowed && served.set(calls[i].pid!, (served.get(calls[i].pid!) ?? 0) + 1));
    expect([...served.values()]).toEqual(Array(500).fill(3));
    expect(capper.metrics()).toMatchObject({ timeouts: 0, errors: 0 });
    // 2,000 decisions of ~500 slots on 3 primaries: batches of up to 64 per primary, not a call per slot.
    const sent = await scriptCalls();
    expect(sent).toBeLessThanOrEqual(3 * Math.ceil(2_000 / 3 / 64) + 6);
    expect(sent / 2_000).toBeLessThan(0.3);
  }, 30_000);

  test('identical takes made together (the ad slots of one page) are counted once per user, each decided as if alone', async () => {
    const redis = await connect(client);
    const store = createRedisFrequencyCapStore(redis, { prefix: `page-${client}:` });
    const at = Date.now();
    const capper = createFrequencyCapper({ store, timeoutMs: 10_000, now: () => at });
    const cap = defineFrequencyCap({
      item: 'deal:page',
      windows: [
        { max: 3, per: 'day' },
        { max: 4, per: 'week' },
      ],
    });
    await Promise.all(Array.from({ length: 30 }, (_, u) => capper.take(callWith({ pid: `warm${u}` }), cap)));
    await cluster.resetStats();
    // 60 users of all three primaries, 5 takes each, interleaved as concurrent pages' calls arrive.
    const users = Array.from({ length: 60 }, (_, u) => `page${u}`);
    const calls = Array.from({ length: 300 }, (_, i) => callWith({ pid: users[i % 60] }));
    const decisions = await Promise.all(calls.map((c) => capper.take(c, cap)));
    // Each user's takes in call order: counted 0, 1, 2 and served, then refused with the day full.
    const refused = [false, [3, 3]];
    for (const u of users) {
      const mine = decisions
        .filter((_, i) => calls[i].pid === u)
        .map((d) => [d.allowed, d.windows.map((w) => w.count)]);
      expect(mine, u).toEqual([[true, [0, 0]], [true, [1, 1]], [true, [2, 2]], refused, refused]);
    }
    // Redis counted each user's windows once and recorded its 3 impressions in one ZADD, not once per take.
    const stats = await cluster.commandStats();
    expect(stats).toMatchObject({ zcount: 60 * 2, zadd: 60 });
    expect(await scriptCalls()).toBeLessThanOrEqual(6);
    // A check made together with others is answered alike, and counts nothing.
    const checks = await Promise.all(
      users.slice(0, 3).flatMap((u) => [1, 2].map(() => capper.check(callWith({ pid: u }), cap))),
    );
    expect(checks.map((d) => [d.allowed, d.count])).toEqual(Array(6).fill([false, 3]));
    const key = store.keyOf('pid:page0', 'deal:page');
    expect(Number(await (client === 'ioredis' ? redis.zcard(key) : redis.zCard(key)))).toBe(3);
  }, 30_000);

  test('Redis stalls after answering 3 takes: the shadow count starts from them, 3 of 7 served (not 6)', async () => {
    const redis = await connect(client);
    const store = createRedisFrequencyCapStore(redis, { prefix: `seed-${client}:` });
    const capper = createFrequencyCapper({ store, timeoutMs: 50 });
    const cap = defineFrequencyCap({ item: 'deal:seed', max: 3, per: 'day' });
    const user = callWith({ pid: 'stalled' });
    for (let i = 0; i < 3; i++) expect(await capper.take(user, cap)).toMatchObject({ allowed: true, count: i });
    await cluster.pause(600);
    const during = [];
    for (let i = 0; i < 4; i++) during.push(await capper.take(user, cap));
    expect(during.map((d) => [d.allowed, d.storeError])).toEqual(Array(4).fill([false, 'timeout']));
    await new Promise((r) => setTimeout(r, 700));
    await capper.flush();
    const key = store.keyOf('pid:stalled', 'deal:seed');
    expect(Number(await (client === 'ioredis' ? redis.zcard(key) : redis.zCard(key)))).toBe(3);
  }, 30_000);

  test('a slot mid-migration: several users of it and a user with two caps are decided by Redis, no TRYAGAIN passed on', async () => {
    const redis = await connect(client);
    const prefix = `move-${client}:`;
    const store = createRedisFrequencyCapStore(redis, { prefix });
    const capper = createFrequencyCapper({ store });
    const { primaries } = await cluster.topology();
    const [from, to] = [primaries[0], primaries[1]];
    // Three users of one slot served by `from`.
    const [first] = usersOn(from, 'deal:move', 1, `${client}-m`);
    const slot = clusterKeySlot(store.keyOf(`pid:${first}`, 'deal:move'));
    const users = [first];
    for (let i = 0; users.length < 3; i++) {
      if (clusterKeySlot(store.keyOf(`pid:${client}-s${i}`, 'deal:move')) === slot) users.push(`${client}-s${i}`);
    }
    const deal = defineFrequencyCap({ item: 'deal:move', max: 3, per: 'day' });
    const campaign = defineFrequencyCap({ item: 'campaign:move', max: 5, per: 'day' });
    // Each has one deal impression (keys on `from`); the campaign key does not exist yet.
    for (const u of users) expect((await capper.take(callWith({ pid: u }), deal)).allowed).toBe(true);
    // The slot starts moving: its keys exist on `from` only, new keys belong to neither node until it is done.
    await cluster.command(to.node, ['CLUSTER', 'SETSLOT', slot, 'IMPORTING', from.node.id]);
    await cluster.command(from.node, ['CLUSTER', 'SETSLOT', slot, 'MIGRATING', to.node.id]);
    const pending = Promise.all(users.map((u) => capper.take(callWith({ pid: u }), [deal, campaign])));
    // Finishes the move 30 ms later: the decisions wait for it inside the capper's default 100 ms.
    await new Promise((r) => setTimeout(r, 30));
    const keys = (await cluster.command(from.node, ['CLUSTER', 'GETKEYSINSLOT', slot, 100])) as string[];
    await cluster.command(from.node, ['MIGRATE', '127.0.0.1', to.node.port, '', 0, 5_000, 'KEYS', ...keys]);
    for (const n of [to.node, from.node, primaries[2].node]) {
      await cluster.command(n, ['CLUSTER', 'SETSLOT', slot, 'NODE', to.node.id]);
    }
    const decisions = await pending;
    expect(decisions.map((d) => [d.allowed, d.storeError, d.windows.map((w) => w.count)])).toEqual(
      Array(3).fill([true, undefined, [1, 0]]),
    );
    expect(capper.metrics()).toMatchObject({ errors: 0, timeouts: 0 });
    expect(store.metrics().rerouted + store.metrics().retries).toBeGreaterThan(0);
    // Counted once each, on the new owner.
    const admin = (await cluster.ownerOf(slot)) as { id: string };
    expect(admin.id).toBe(to.node.id);
    for (const u of users) {
      expect(await cluster.command(to.node, ['ZCARD', store.keyOf(`pid:${u}`, 'deal:move')])).toBe(2);
      expect(await cluster.command(to.node, ['ZCARD', store.keyOf(`pid:${u}`, 'campaign:move')])).toBe(1);
    }
  }, 30_000);
});

test('ioredis after a slot moved: NOSCRIPT wrapped in "Too many Cluster redirections" loads the script', async () => {
  // A client whose map is stale and that gives up after one redirection: a call to the slot's new owner, which has
  // never run the script, ends in ioredis's wrapped error with NOSCRIPT as its last.
  const redis = await connect('ioredis', { maxRedirections: 1, slotsRefreshInterval: 600_000 });
  const store = createRedisFrequencyCapStore(redis, { prefix: 'noscript:' });
  const capper = createFrequencyCapper({ store, timeoutMs: 5_000 });
  const cap = defineFrequencyCap({ item: 'deal:ns', max: 3, per: 'day' });
  const { primaries } = await cluster.topology();
  const [from, to] = [primaries[2], primaries[0]];
  const [user] = usersOn(from, 'deal:ns', 1, 'ns');
  expect((await capper.take(callWith({ pid: user }), cap)).allowed).toBe(true);
  const slot = clusterKeySlot(store.keyOf(`pid:${user}`, 'deal:ns'));
  await cluster.migrate([slot], from.node, to.node);
  await cluster.command(to.node, ['SCRIPT', 'FLUSH']);
  const d = await capper.take(callWith({ pid: user }), cap);
  expect([d.allowed, d.storeError, d.count]).toEqual([true, undefined, 1]);
});

test('a primary killed under load (node-redis): failed script calls stay of the order of the failed decisions', async () => {
  const redis = await connect('node-redis');
  // Counts every script call the client makes, through the cluster or straight to a node, and those that fail.
  const count = { calls: 0, failed: 0 };
  const counted = (target: any) => {
    for (const name of ['evalSha', 'eval']) {
      const original = target[name];
      target[name] = function (this: unknown, ...args: unknown[]) {
        count.calls++;
        return (original.apply(this, args) as Promise<unknown>).catch((e: unknown) => {
          count.failed++;
          throw e;
        });
      };
    }
    return target;
  };
  counted(redis);
  const nodeClient = redis.nodeClient.bind(redis);
  const seen = new WeakSet();
  redis.nodeClient = async (node: unknown) => {
    const c = await nodeClient(node);
    if (!seen.has(c)) {
      counted(c);
      seen.add(c);
    }
    return c;
  };
  const store = createRedisFrequencyCapStore(redis, { prefix: 'storm:' });
  const capper = createFrequencyCapper({ store });
  const cap = defineFrequencyCap({ item: 'deal:storm', max: 1_000, per: 'day' });
  const { primaries } = await cluster.topology();
  let stop = false;
  const load = (async () => {
    for (let i = 0; !stop; i++) {
      await capper.take(callWith({ pid: `storm${i % 200}` }), cap);
      if (i % 4 === 0) await new Promise((r) => setTimeout(r, 1));
    }
  })();
  await new Promise((r) => setTimeout(r, 500));
  await cluster.kill(primaries[1].node);
  await cluster.ready();
  await new Promise((r) => setTimeout(r, 1_000));
  stop = true;
  await load;
  await capper.flush();
  const m = capper.metrics();
  const failedDecisions = m.errors + m.timeouts;
  expect(failedDecisions).toBeGreaterThan(0); // the kill was felt
  expect(count.failed).toBeLessThanOrEqual(2 * failedDecisions + 50);
  expect(m).toMatchObject({ replayPending: 0, replayDropped: 0 });
  await cluster.restart(primaries[1].node);
  await cluster.ready();
}, 60_000);
