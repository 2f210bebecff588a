// Holdout experiments in the report, in memory and in a real Redis: per network × experiment × arm the calls
// (sticky or not), eids, calls carrying a held-out source, outcomes; the cap of experiments per network; the same
// rows from both reports.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createRedisReport, createReport, parseAdCall } from '../../../src/adserver/index.js';
import type { AdCall } from '../../../src/adserver/index.js';
// @ts-expect-error plain ESM helper shared with the bench
import { connectRedis, startRedis } from '../../support/redis-server.mjs';
import { EUID, ID5, UID2, b64url } from '../fixtures.js';

/** 10:00 UTC yesterday: within the Redis report's retention. */
const AT = new Date(Math.floor(Date.now() / 86_400_000) * 86_400_000 - 14 * 3_600_000);
const DAY = AT.toISOString().slice(0, 10);
const entry = (id: string, arm: 'h' | 'c', src: string[], st = 1, pct = 10) => ({ id, arm, pct, src, st });
const call = (eids: unknown[], xp: unknown[], nwid = 5): AdCall =>
  parseAdCall({ url: `/ac?nwid=${nwid}&eids=${b64url(eids)}&xp=${b64url(xp)}` });

/** A small day of traffic: two experiments, both arms, a leak, outcomes. */
function feed(report: {
  add(c: AdCall, at?: Date): void;
  addOutcome: (typeof createReport extends () => infer R ? R : never)['addOutcome'];
}) {
  const held = call([UID2], [entry('id5', 'h', ['id5-sync.com']), entry('ids', 'c', ['uidapi.com', 'euid.eu'], 0, 50)]);
  const control = call(
    [ID5, UID2, EUID],
    [entry('id5', 'c', ['id5-sync.com']), entry('ids', 'h', ['uidapi.com', 'euid.eu'], 0, 50)],
  );
  const leak = call([ID5], [entry('id5', 'h', ['ID5-sync.com'])]);
  for (const c of [held, control, control, leak]) report.add(c, AT);
  report.addOutcome(held, { impression: true, revenue: 0.0025 }, AT);
  report.addOutcome(control, { impression: true, revenue: 0.004, won: true }, AT);
  report.addOutcome(control, { impression: false, won: false }, AT);
  report.addOutcome(leak, { revenue: 0 }, AT);
  // A call in no experiment: its outcome counts nothing.
  report.addOutcome(call([ID5], []), { impression: true, revenue: 1 }, AT);
}

const arm = (o: Partial<Record<string, number>>) => ({
  calls: 0,
  stickyCalls: 0,
  eids: 0,
  callsWithSources: 0,
  outcomes: 0,
  impressions: 0,
  wins: 0,
  revenue: 0,
  revenueSquares: 0,
  ...o,
});
const EXPECTED = [
  {
    id: 'id5',
    declaredShare: 0.1,
    providers: [{ providerId: 2, providerName: 'ID5', calls: 4 }],
    holdout: arm({
      calls: 2,
      stickyCalls: 2,
      eids: 2,
      callsWithSources: 1,
      outcomes: 2,
      impressions: 1,
      wins: 1,
      revenue: 0.0025,
      revenueSquares: 0.0025 ** 2,
    }),
    control: arm({
      calls: 2,
      stickyCalls: 2,
      eids: 6,
      callsWithSources: 2,
      outcomes: 2,
      impressions: 1,
      wins: 1,
      revenue: 0.004,
      revenueSquares: 0.004 ** 2,
    }),
  },
  {
    id: 'ids',
    declaredShare: 0.5,
    providers: [
      { providerId: 4, providerName: 'Unified ID 2.0', calls: 3 },
      { providerId: 5, providerName: 'European Unified ID', calls: 3 },
    ],
    holdout: arm({
      calls: 2,
      eids: 6,
      callsWithSources: 2,
      outcomes: 2,
      impressions: 1,
      wins: 1,
      revenue: 0.004,
      revenueSquares: 0.004 ** 2,
    }),
    control: arm({
      calls: 1,
      eids: 1,
      callsWithSources: 1,
      outcomes: 1,
      impressions: 1,
      wins: 1,
      revenue: 0.0025,
      revenueSquares: 0.0025 ** 2,
    }),
  },
];

describe('experiments in the in-memory report', () => {
  test('per network × experiment × arm: calls, sticky calls, eids, calls with the sources, outcomes', () => {
    const report = createReport();
    feed(report);
    const rows = report.toJSON().rows;
    expect(rows).toHaveLength(1);
    expect(rows[0].calls).toBe(4);
    expect(rows[0].experiments).toEqual(EXPECTED);
    expect(report.toJSON({ granularity: 'hour' }).rows[0].experiments).toEqual(EXPECTED);
    const csv = report.toCSV().split('\r\n');
    expect(csv).toContain(`${DAY},5,Experiment,"id5|holdout|callsWithSources","id5, holdout arm: callsWithSources",1`);
    expect(csv).toContain(`${DAY},5,Experiment,"ids|provider|5",ids: holds out European Unified ID,3`);
    expect(csv).toContain(`${DAY},5,Experiment,"id5|share",id5: declared held-out share,0.1`);
  });
  test('a row without experiments has no experiments key', () => {
    const report = createReport();
    report.add(call([ID5], []), AT);
    expect(report.toJSON().rows[0]).not.toHaveProperty('experiments');
  });
  test('an outcome that is not one throws a typed error naming the field; nothing is counted', () => {
    const report = createReport();
    const c = call([], [entry('a', 'h', ['id5-sync.com'])]);
    for (const [outcome, field] of [
      [{ revenue: -1 }, 'outcome.revenue'],
      [{ revenue: Number.NaN }, 'outcome.revenue'],
      [{ revenue: 2e6 }, 'outcome.revenue'],
      [{ revenue: '1' }, 'outcome.revenue'],
      [{ impression: 1 }, 'outcome.impression'],
      [{ won: 'yes' }, 'outcome.won'],
      [null, 'outcome'],
    ] as const) {
      expect(() => report.addOutcome(c, outcome as never, AT)).toThrow(
        expect.objectContaining({ name: 'OptionsError', field }),
      );
    }
    expect(report.toJSON().rows).toEqual([]);
  });
  test('experiments per network are capped (maxExperimentsPerNetwork): further ones are not counted, the calls are', () => {
    const report = createReport({ maxExperimentsPerNetwork: 3 });
    for (let i = 0; i < 10; i++) report.add(call([], [entry(`e${i}`, 'h', ['id5-sync.com'])]), AT);
    report.add(call([], [entry('e9', 'h', ['id5-sync.com']), entry('e0', 'c', ['id5-sync.com'])]), AT);
    const row = report.toJSON().rows[0];
    expect(row.calls).toBe(11);
    expect(row.experiments?.map((x) => [x.id, x.holdout.calls, x.control.calls])).toEqual([
      ['e0', 1, 1],
      ['e1', 1, 0],
      ['e2', 1, 0],
    ]);
    // Another network has its own room.
    report.add(call([], [entry('e9', 'h', ['id5-sync.com'])], 6), AT);
    expect(report.toJSON().rows[1].experiments?.map((x) => x.id)).toEqual(['e9']);
    expect(() => createReport({ maxExperimentsPerNetwork: 0 })).toThrow(/maxExperimentsPerNetwork/);
  });
});

describe('experiments in the Redis report', () => {
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

  test('the same rows as the in-memory report, per day and per hour', async () => {
    const shared = createRedisReport(client, { prefix: 'x1:', flushMs: 60_000 });
    const local = createReport();
    feed(shared);
    feed(local);
    expect(await shared.toJSON()).toEqual(local.toJSON());
    expect(await shared.toJSON({ granularity: 'hour' })).toEqual(local.toJSON({ granularity: 'hour' }));
    expect(await shared.toCSV()).toBe(local.toCSV());
    await shared.close();
  });
  test('the cap of experiments per network holds in Redis across reports (flushes of two writers)', async () => {
    const a = createRedisReport(client, { prefix: 'x2:', flushMs: 60_000, maxExperimentsPerNetwork: 3 });
    const b = createRedisReport(client, { prefix: 'x2:', flushMs: 60_000, maxExperimentsPerNetwork: 3 });
    a.add(call([], [entry('a1', 'h', ['id5-sync.com'])]), AT);
    a.add(call([], [entry('a2', 'h', ['id5-sync.com'])]), AT);
    await a.flush();
    for (const id of ['b1', 'b2', 'a1']) b.add(call([], [entry(id, 'c', ['id5-sync.com'])]), AT);
    b.addOutcome(call([], [entry('b2', 'c', ['id5-sync.com'])]), { impression: true, revenue: 0.5 }, AT);
    await b.flush();
    const row = (await a.toJSON()).rows[0];
    expect(row.calls).toBe(5);
    expect(row.experiments?.map((x) => [x.id, x.holdout.calls, x.control.calls, x.control.revenue])).toEqual([
      ['a1', 1, 1, 0],
      ['a2', 1, 0, 0],
      ['b1', 0, 1, 0],
    ]);
    const day = await client.hGetAll(`x2:d:${DAY}`);
    expect(Object.keys(day).filter((k) => k.includes('b2'))).toEqual([]);
    await a.close();
    await b.close();
  });
  test('sums of squared revenue are added as floats: a large day does not overflow a 64-bit counter', async () => {
    const report = createRedisReport(client, { prefix: 'x3:', flushMs: 60_000 });
    const c = call([], [entry('big', 'c', ['id5-sync.com'])]);
    // 10,000 outcomes of 1,000,000: the squares in millionths are 1e24 each, past any 64-bit integer.
    for (let i = 0; i < 10_000; i++) report.addOutcome(c, { impression: true, revenue: 1_000_000 }, AT);
    await report.flush();
    const control = (await report.toJSON()).rows[0].experiments![0].control;
    expect(control.revenue).toBe(1e10);
    expect(control.revenueSquares / 1e16).toBeCloseTo(1, 12);
    expect(report.metrics().flushErrors).toBe(0);
    await report.close();
  });
});
