// The Redis stores take an ioredis client as well as a node-redis one: the same cap decisions and report counts
// against a real redis-server, the Lua script loaded on a fresh server (NOSCRIPT), anything else refused.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { Redis } from 'ioredis';
import {
  createFrequencyCapper,
  createRedisFrequencyCapStore,
  createRedisReport,
  defineFrequencyCap,
} from '../../../src/adserver/index.js';
// @ts-expect-error plain ESM helper shared with the bench
import { startRedis } from '../../support/redis-server.mjs';
import { ID5, UID2, callWith } from '../fixtures.js';

let redis: Awaited<ReturnType<typeof startRedis>>;
let io: Redis;
beforeAll(async () => {
  redis = await startRedis();
  io = new Redis(redis.url, { enableOfflineQueue: false, lazyConnect: true });
  await io.connect();
});
afterAll(async () => {
  io?.disconnect();
  await redis?.stop();
});

describe('an ioredis client', () => {
  test('caps through the Redis store: the script loads on a fresh server, the fourth take of 3/day is refused', async () => {
    const capper = createFrequencyCapper({ store: createRedisFrequencyCapStore(io), timeoutMs: 2_000 });
    const cap = defineFrequencyCap({ item: 'deal:7', windows: [{ max: 3, per: 'day' }] });
    const call = callWith({ pid: 'io-user' });
    const decisions = [];
    for (let i = 0; i < 4; i++) decisions.push(await capper.take(call, cap));
    expect(decisions.map((d) => [d.allowed, d.count])).toEqual([
      [true, 0],
      [true, 1],
      [true, 2],
      [false, 3],
    ]);
    expect(capper.metrics()).toMatchObject({ errors: 0, timeouts: 0 });
    expect(await io.zcard('eidkit:fc:{pid:io-user}deal:7')).toBe(3);
  });

  test('feeds the Redis report: counts flushed and read back', async () => {
    const report = createRedisReport(io, { prefix: 'io:', flushMs: 60_000 });
    const at = new Date();
    for (let i = 0; i < 10; i++) report.add(callWith({ pid: 'p', eids: i % 2 ? [ID5] : [UID2] }), at);
    await report.flush();
    expect((await report.toJSON()).rows[0]).toMatchObject({
      calls: 10,
      extendedIds: [
        { providerId: 2, calls: 5 },
        { providerId: 4, calls: 5 },
      ],
    });
    expect(report.metrics().flushErrors).toBe(0);
    await report.close();
  });

  test('anything that is neither node-redis nor ioredis is refused with a TypeError naming the function', () => {
    expect(() => createRedisReport({ hincrby: () => 0 } as never)).toThrow(
      /createRedisReport: client must be a node-redis or ioredis client/,
    );
    expect(() => createRedisFrequencyCapStore(null as never)).toThrow(/createRedisFrequencyCapStore: client must be/);
  });
});
