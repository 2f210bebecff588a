// The Redis report against a real redis-server: nothing sent per call, one pipelined flush, the buffer bound
// and its dropped count, retention by key expiry.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createRedisReport, parseDmpConfig } from '../../src/adserver/index.js';
// @ts-expect-error plain ESM helper shared with the bench
import { connectRedis, startRedis } from '../support/redis-server.mjs';
import { ID5, UID2, callWith } from './fixtures.js';

const DAY = 86_400_000;
let redis: Awaited<ReturnType<typeof startRedis>>;
let client: Awaited<ReturnType<typeof connectRedis>>;
beforeAll(async () => {
  redis = await startRedis();
  client = await connectRedis(redis.url, { disableOfflineQueue: true });
});
afterAll(async () => {
  await client?.close();
  await redis?.stop();
});

const commandCalls = async () => {
  const stats = await client.info('commandstats');
  return [...stats.matchAll(/cmdstat_(\w+):calls=(\d+)/g)].reduce((n, m) => (m[1] === 'info' || m[1] === 'config' ? n : n + Number(m[2])), 0);
};

describe('the Redis report', () => {
  test('adding calls sends nothing; a flush sends their counts in one pipeline of a fixed size', async () => {
    const report = createRedisReport(client, { prefix: 'p1:', flushMs: 60_000 });
    await client.configResetStat();
    const at = new Date();
    for (let i = 0; i < 1000; i++) report.add(callWith({ pid: 'p', eids: i % 2 ? [ID5] : [UID2] }), at);
    expect(await commandCalls()).toBe(0);
    await report.flush();
    // 2 buckets (day, hour) × 5 counters (calls, p:2, p:4, pid, eff:pid) + expiry and index per bucket + 2 index trims.
    expect(report.metrics().commands).toBe(2 * 5 + 2 * 2 + 2);
    expect(await commandCalls()).toBe(report.metrics().commands);
    expect((await report.toJSON()).rows[0]).toMatchObject({ calls: 1000, extendedIds: [{ providerId: 2, calls: 500 }, { providerId: 4, calls: 500 }] });
    await report.close();
  });

  test('counts Has DMP Id per DMP across the fleet, as the in-memory report does', async () => {
    const dmps = parseDmpConfig([{ dmp: 'uid-dmp', source: 'uidapi.com' }, { dmp: 'id5-dmp', source: 'id5-sync.com' }]);
    const report = createRedisReport(client, { prefix: 'pdmp:', flushMs: 60_000, dmps });
    const at = new Date();
    report.add(callWith({ eids: [UID2, ID5] }), at);
    report.add(callWith({ eids: [UID2] }), at);
    report.add(callWith({ eids: [] }), at);
    await report.flush();
    const reader = createRedisReport(client, { prefix: 'pdmp:', dmps }); // another process reads the merged totals
    expect((await reader.toJSON()).rows[0].hasDmpId).toEqual({ 'uid-dmp': { with: 2, without: 1 }, 'id5-dmp': { with: 1, without: 2 } });
    expect(await reader.toCSV()).toContain(',Has DMP Id,uid-dmp,with uid-dmp id,2\r\n');
    await Promise.all([report.close(), reader.close()]);
  });

  test('buckets expire retentionDays after their period ends, and reads skip what is past retention', async () => {
    const now = Date.now();
    const report = createRedisReport(client, { prefix: 'p2:', retentionDays: 2, now: () => now });
    const today = new Date(now);
    report.add(callWith({}), today);
    report.add(callWith({}), new Date(now - 5 * DAY)); // already past retention: its bucket expires at once
    await report.flush();
    const day = today.toISOString().slice(0, 10);
    const expireAt = await client.pExpireTime(`p2:d:${day}`);
    expect(expireAt).toBe(Date.parse(`${day}T00:00:00Z`) + DAY + 2 * DAY);
    expect(await client.pExpireTime(`p2:h:${today.toISOString().slice(0, 13)}`)).toBe(Date.parse(today.toISOString().slice(0, 13) + ':00:00Z') + 3_600_000 + 2 * DAY);
    expect((await report.toJSON()).rows.map((r) => r.date)).toEqual([day]);
    await report.close();
  });

  test('a full buffer drops calls and counts them; the count reaches the fleet once Redis is back', async () => {
    const down = await startRedis();
    const c = await connectRedis(down.url, { disableOfflineQueue: true });
    const report = createRedisReport(c, { prefix: 'p3:', flushMs: 60_000, maxBuffered: 20 });
    try {
      await down.kill();
      const at = new Date();
      // A call of a new network needs 4 day + 4 hour entries (calls, noeids, pid, eff:pid): networks 1 and 2 fit
      // in 20 entries (a second call of network 1 reuses its entries), network 3 does not.
      report.add(callWith({ pid: 'p', networkId: 1 }), at);
      report.add(callWith({ pid: 'p', networkId: 1 }), at);
      report.add(callWith({ pid: 'p', networkId: 2 }), at);
      report.add(callWith({ pid: 'p', networkId: 3 }), at);
      expect(report.metrics()).toMatchObject({ buffered: 16, droppedCalls: 1 });
      await expect(report.flush()).rejects.toThrow(/flush failed/);
      report.add(callWith({ pid: 'p', networkId: 2 }), at); // still fits: merges into kept entries
      expect(report.metrics()).toMatchObject({ buffered: 16, droppedCalls: 1 });
      await down.start();
      for (let i = 0; !(await c.ping().then(() => true, () => false)); i++) {
        if (i > 200) throw new Error('no reconnect');
        await new Promise((r) => setTimeout(r, 50));
      }
      await report.close();
      const json = await report.toJSON();
      expect(json.droppedCalls).toBe(1);
      expect(json.rows.map((r) => [r.networkId, r.calls])).toEqual([
        [1, 2],
        [2, 2],
      ]);
    } finally {
      await c.close().catch(() => {});
      await down.stop();
    }
  });
});
