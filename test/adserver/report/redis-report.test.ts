// The Redis report against a real redis-server: nothing sent per call, one pipelined flush, the buffer bound
// and its dropped count, retention by key expiry.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  createForwardingPolicy,
  createRedisReport,
  createReport,
  parseDmpConfig,
} from '../../../src/adserver/index.js';
// @ts-expect-error plain ESM helper shared with the bench
import { connectRedis, startRedis, untilReconnected } from '../../support/redis-server.mjs';
import { ID5, UID2, callWith } from '../fixtures.js';
// @ts-expect-error plain ESM helper shared with the bench and the fuzz suite
import { collidingIds } from '../../support/colliding-ids.mjs';
// @ts-expect-error plain ESM helpers shared with the benches
import { interleavedRounds, quantile } from '../../bench/rounds.mjs';
import { AT, DMPS, feed, rows as facts } from './counter-facts.js';

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

/** Commands the server ran, by name (those run inside a script included), without `info` and `config`. */
const commandStats = async (): Promise<Record<string, number>> => {
  const stats = await client.info('commandstats');
  const out: Record<string, number> = {};
  for (const m of stats.matchAll(/cmdstat_(\w+):calls=(\d+)/g)) {
    if (m[1] !== 'info' && m[1] !== 'config') out[m[1]] = Number(m[2]);
  }
  return out;
};

describe('the Redis report', () => {
  test('adding calls sends nothing; a flush sends their counts in one pipeline of a fixed size', async () => {
    const warm = createRedisReport(client, { prefix: 'p1warm:', flushMs: 60_000 });
    warm.add(callWith({}));
    await warm.close(); // loads the flush script, so the counts below have no NOSCRIPT retry
    const report = createRedisReport(client, { prefix: 'p1:', flushMs: 60_000 });
    await client.configResetStat();
    const at = new Date();
    for (let i = 0; i < 1000; i++) report.add(callWith({ pid: 'p', eids: i % 2 ? [ID5] : [UID2] }), at);
    expect(await commandStats()).toEqual({});
    await report.flush();
    // Per bucket (day, hour): one script (the network cap, 5 counters, the expiry) and the index; 2 index trims.
    expect(report.metrics().commands).toBe(2 * 2 + 2);
    const stats = await commandStats();
    expect(stats.evalsha + stats.zadd + stats.zremrangebyscore).toBe(report.metrics().commands);
    // Inside each script: 5 HINCRBYs of the counters, the new network counted, the expiry.
    expect([stats.hincrby, stats.hset, stats.pexpireat]).toEqual([2 * 5, 2, 2]);
    expect((await report.toJSON()).rows[0]).toMatchObject({
      calls: 1000,
      extendedIds: [
        { providerId: 2, calls: 500 },
        { providerId: 4, calls: 500 },
      ],
    });
    await report.close();
  });

  test('counts Has DMP Id per DMP across the fleet, as the in-memory report does', async () => {
    const dmps = parseDmpConfig([
      { dmp: 'uid-dmp', source: 'uidapi.com' },
      { dmp: 'id5-dmp', source: 'id5-sync.com' },
    ]);
    const report = createRedisReport(client, { prefix: 'pdmp:', flushMs: 60_000, dmps });
    const at = new Date();
    report.add(callWith({ eids: [UID2, ID5] }), at);
    report.add(callWith({ eids: [UID2] }), at);
    report.add(callWith({ eids: [] }), at);
    await report.flush();
    const reader = createRedisReport(client, { prefix: 'pdmp:', dmps }); // another process reads the merged totals
    expect((await reader.toJSON()).rows[0].hasDmpId).toEqual({
      'uid-dmp': { with: 2, without: 1 },
      'id5-dmp': { with: 1, without: 2 },
    });
    expect(await reader.toCSV()).toContain(',Has DMP Id,uid-dmp,with uid-dmp id,2\r\n');
    await Promise.all([report.close(), reader.close()]);
  });

  test('day buckets expire retentionDays after their day, hour buckets maxHours after their hour; reads skip the past', async () => {
    const now = Date.now();
    const report = createRedisReport(client, { prefix: 'p2:', retentionDays: 2, maxHours: 30, now: () => now });
    const today = new Date(now);
    report.add(callWith({}), today);
    report.add(callWith({}), new Date(now - 5 * DAY)); // already past retention: its bucket expires at once
    await report.flush();
    const day = today.toISOString().slice(0, 10);
    const expireAt = await client.pExpireTime(`p2:d:${day}`);
    expect(expireAt).toBe(Date.parse(`${day}T00:00:00Z`) + DAY + 2 * DAY);
    // An hour bucket is kept maxHours after its hour ends, as the in-memory report keeps maxHours hours.
    const hour = today.toISOString().slice(0, 13);
    expect(await client.pExpireTime(`p2:h:${hour}`)).toBe(Date.parse(hour + ':00:00Z') + 3_600_000 + 30 * 3_600_000);
    expect((await report.toJSON()).rows.map((r) => r.date)).toEqual([day]);
    expect((await report.toJSON({ granularity: 'hour' })).rows.map((r) => r.date)).toEqual([day]);
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
      await untilReconnected(c);
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

  test('calls counted while a flush is in flight and then fails merge with its restored counts, each entry once', async () => {
    const down = await startRedis();
    const c = await connectRedis(down.url, { disableOfflineQueue: true });
    const admin = await connectRedis(down.url);
    const report = createRedisReport(c, { prefix: 'p4:', flushMs: 60_000 });
    try {
      const at = new Date();
      report.add(callWith({ pid: 'p', networkId: 1 }), at);
      await admin.sendCommand(['CLIENT', 'PAUSE', '10000', 'ALL']); // the flush below stays in flight
      // The expectation is attached at once: the flush may fail while the server is being killed, before any await.
      const failed = expect(report.flush()).rejects.toThrow(/flush failed/);
      await new Promise((r) => setTimeout(r, 100));
      report.add(callWith({ pid: 'p', networkId: 1 }), at); // the same 8 entries, new to the fresh buffer
      expect(report.metrics().buffered).toBe(16); // 8 in flight, 8 buffered
      await down.kill();
      await failed;
      expect(report.metrics().buffered).toBe(8); // the restored counts merged into the buffered entries
      await down.start();
      await untilReconnected(c);
      await report.close();
      expect((await report.toJSON()).rows.map((r) => [r.networkId, r.calls])).toEqual([[1, 2]]);
    } finally {
      admin.destroy();
      await c.close().catch(() => {});
      await down.stop();
    }
  });

  test("20,000 calls of distinct networks keep the day's network cap, count the rest as dropped, and read fast", async () => {
    const report = createRedisReport(client, { prefix: 'pcap:', flushMs: 60_000, maxNetworksPerDay: 1_000 });
    const at = new Date();
    for (let i = 0; i < 20_000; i++) {
      report.add(callWith({ networkId: i + 1 }), at);
      if (i % 5_000 === 4_999) await report.flush();
    }
    await report.flush();
    expect(report.metrics()).toMatchObject({ droppedCalls: 0, cappedCalls: 19_000 });
    const day = at.toISOString().slice(0, 10);
    // 1,000 networks × 3 counters (calls, noeids, eff:none), `#networks` and `#dropped`; the hour: no `#dropped`.
    expect(await client.hLen(`pcap:d:${day}`)).toBe(3_002);
    expect(await client.hLen(`pcap:h:${at.toISOString().slice(0, 13)}`)).toBe(3_001);
    const started = performance.now();
    const json = await report.toJSON();
    const readMs = performance.now() - started;
    expect(json.rows.map((r) => r.networkId)).toEqual(Array.from({ length: 1_000 }, (_, i) => i + 1));
    expect(json.droppedCalls).toBe(19_000);
    expect((await report.toJSON({ granularity: 'hour' })).droppedCalls).toBe(19_000);
    // Uncapped, the same calls stored 60,000 fields a day and its read took 436 ms.
    expect(readMs).toBeLessThan(250);
    await report.close();
  });

  test('add costs no more for 8,000 network ids that V8 hashes alike than for ordinary ones (staged by a string)', async () => {
    const at = new Date();
    const calls = (ids: number[]) => ids.map((networkId) => callWith({ networkId, pid: 'p', eids: [ID5] }));
    const reports = [0, 1].map((i) => createRedisReport(client, { prefix: `pflood${i}:`, flushMs: 600_000 }));
    const adding = (list: ReturnType<typeof calls>, report: (typeof reports)[number]) => {
      let i = 0;
      return () => report.add(list[i++ % list.length], at);
    };
    const colliding = calls(collidingIds(8_000, 13) as number[]);
    const ordinary = calls(Array.from({ length: 8_000 }, (_, i) => 1_000 + i));
    const { ratios } = interleavedRounds(
      { ordinary: adding(ordinary, reports[0]), colliding: adding(colliding, reports[1]) },
      { rounds: 9, iterations: 8_000, warmup: 16_000, cpu: true },
    );
    expect(quantile(ratios.colliding, 0.5)).toBeLessThanOrEqual(2);
    await reports[1].flush();
    const rows = (await reports[1].toJSON()).rows;
    expect(rows).toHaveLength(8_000);
    expect(rows.reduce((n, r) => n + r.calls, 0)).toBe(16_000 + 9 * 8_000);
    await Promise.all(reports.map((r) => r.close()));
  });

  test('networks a full day already counts keep being counted; maxNetworksPerDay is checked when created', async () => {
    const report = createRedisReport(client, { prefix: 'pcap2:', flushMs: 60_000, maxNetworksPerDay: 2 });
    const at = new Date();
    for (const networkId of [1, 2, 3, 1, 3, 2]) report.add(callWith({ networkId }), at);
    await report.flush();
    expect((await report.toJSON()).rows.map((r) => [r.networkId, r.calls])).toEqual([
      [1, 2],
      [2, 2],
    ]);
    expect((await report.toJSON()).droppedCalls).toBe(2);
    await report.close();
    const bad = () => createRedisReport(client, { maxNetworksPerDay: 0 });
    expect(bad).toThrow('maxNetworksPerDay must be a whole number > 0 (got 0)');
  });

  test.each([
    // Each with the calls it drops and the most experiments a row keeps.
    ['default caps', {}, 0, 2],
    ['2 networks a day, 1 experiment a network', { maxNetworksPerDay: 2, maxExperimentsPerNetwork: 1 }, 1, 1],
  ] as const)(
    'every fact of the counters table reads back as the in-memory report reads it, per day and per hour (%s)',
    async (name, caps, dropped, experiments) => {
      // The table's times moved by whole days to yesterday, so that the Redis report's retention keeps them.
      const shift = (Math.floor(Date.now() / DAY) - Math.floor(AT / DAY) - 1) * DAY;
      const memory = createReport({ dmps: DMPS, ...caps });
      const prefix = `ptable${name.length}:`;
      const shared = createRedisReport(client, { prefix, flushMs: 60_000, dmps: DMPS, ...caps });
      for (const row of facts) for (const report of [memory, shared]) feed(report, row, shift);
      await shared.flush();
      for (const granularity of ['day', 'hour'] as const)
        expect(await shared.toJSON({ granularity })).toEqual(memory.toJSON({ granularity }));
      const { rows, droppedCalls } = await shared.toJSON();
      const calls = facts.filter((r) => r.fact.kind === 'call').length;
      expect(rows.reduce((n, r) => n + r.calls, 0) + droppedCalls).toBe(calls);
      expect(droppedCalls).toBe(dropped);
      expect(Math.max(...rows.map((r) => r.experiments?.length ?? 0))).toBe(experiments);
      await shared.close();
    },
  );

  test('forwarding counts (sent, withheld by reason) merge across two processes as in memory', async () => {
    const policy = createForwardingPolicy({ permissions: [{ source: 'uidapi.com', partners: ['dsp-a'] }] });
    const partners = [{ id: 'dsp-a' }, { id: 'dsp-b' }];
    const at = new Date();
    const calls = [callWith({ eids: [ID5, UID2] }), { ...callWith({ eids: [ID5, UID2] }), consent: { gpc: true } }];
    const a = createRedisReport(client, { prefix: 'pfw:', flushMs: 60_000 });
    const b = createRedisReport(client, { prefix: 'pfw:', flushMs: 60_000 });
    const memory = createReport();
    for (const r of [a, b, memory])
      for (const c of calls) {
        r.add(c, at);
        r.addForwarding(c, policy.explain(c, partners), at);
      }
    await Promise.all([a.flush(), b.flush()]);
    const row = (await a.toJSON()).rows[0];
    const expected = memory.toJSON().rows[0].forwarding!.map((f) => ({
      ...f,
      sent: f.sent * 2,
      withheld: Object.fromEntries(Object.entries(f.withheld).map(([k, n]) => [k, n * 2])),
    }));
    expect(row.forwarding).toEqual(expected);
    expect(row.forwarding?.find((f) => f.partner === 'dsp-b' && f.providerId === 4)?.withheld).toEqual({
      'permissions[0]': 4,
    });
    await Promise.all([a.close(), b.close()]);
  });
});
