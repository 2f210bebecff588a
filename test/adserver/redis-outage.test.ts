// Redis killed mid-run, then restarted on the same port: ad calls keep being answered within the capper's
// timeout with the policy applied and counted, and the report counts buffered during the outage arrive after
// the restart. The server persists with appendfsync always, so what it acknowledged before the kill survives.
import { afterAll, beforeAll, expect, test } from 'vitest';
import {
  createFrequencyCapper,
  createRedisFrequencyCapStore,
  createRedisReport,
  createReport,
  defineFrequencyCap,
} from '../../src/adserver/index.js';
// @ts-expect-error plain ESM helper shared with the bench
import { connectRedis, startRedis, untilReconnected } from '../support/redis-server.mjs';
import { ID5, UID2, callWith } from './fixtures.js';

let redis: Awaited<ReturnType<typeof startRedis>>;
beforeAll(async () => {
  redis = await startRedis({ persist: true });
});
afterAll(() => redis?.stop());

test('Redis stopped mid-run and restarted: calls answered within the timeout, policy counted, 0 report counts lost', async () => {
  // The ad server's clients: no offline queue, so commands fail at once while the server is down.
  const capClient = await connectRedis(redis.url, { disableOfflineQueue: true });
  const reportClient = await connectRedis(redis.url, { disableOfflineQueue: true });
  // Generous: the healthy phases (an fsync on every write) must not time out on a loaded CI machine; during the
  // outage the clients fail at once (no offline queue) and the timeout is only the bound.
  const timeoutMs = 250;
  const capper = createFrequencyCapper({ store: createRedisFrequencyCapStore(capClient), timeoutMs });
  const report = createRedisReport(reportClient, { flushMs: 20 });
  const expected = createReport();
  const cap = defineFrequencyCap({ item: 'deal:outage', max: 1000, per: 'day' });
  let sent = 0;

  async function adCall() {
    const call = callWith({ pid: `p${sent % 7}`, eids: sent % 3 ? [ID5] : [UID2], networkId: 1 + (sent % 2) });
    const at = new Date();
    sent++;
    report.add(call, at);
    expected.add(call, at);
    const t0 = performance.now();
    const decision = await capper.take(call, cap);
    return { decision, ms: performance.now() - t0 };
  }

  for (let i = 0; i < 200; i++) {
    const { decision } = await adCall();
    expect([decision.allowed, decision.storeError]).toEqual([true, undefined]);
  }
  await report.flush();

  await redis.kill();
  const during = [];
  for (let i = 0; i < 300; i++) during.push(await adCall());
  // Every call answered by the policy, within the timeout (plus slack for a loaded machine), none failed.
  expect(during.every((r) => r.decision.allowed && r.decision.storeError)).toBe(true);
  expect(Math.max(...during.map((r) => r.ms))).toBeLessThan(timeoutMs + 500);
  const m = capper.metrics();
  expect(m.servedOnError).toBe(300);
  expect(m.timeouts + m.errors).toBe(300);
  await expect(report.flush()).rejects.toThrow(/flush failed; \d+ counter entries kept/);
  expect(report.metrics().buffered).toBeGreaterThan(0);
  expect(report.metrics().flushErrors).toBeGreaterThan(0);

  await redis.start();
  // The clients reconnect on their own; wait until both answer again.
  for (const c of [capClient, reportClient]) await untilReconnected(c);
  for (let i = 0; i < 100; i++) expect((await adCall()).decision.storeError).toBeUndefined();

  await report.close();
  expect(report.metrics()).toMatchObject({ buffered: 0, droppedCalls: 0 });
  const merged = await report.toJSON();
  expect(merged.rows.reduce((n, r) => n + r.calls, 0)).toBe(sent);
  expect(merged).toEqual(expected.toJSON());
  expect(await report.toJSON({ granularity: 'hour' })).toEqual(expected.toJSON({ granularity: 'hour' }));
  await Promise.all([capClient.close(), reportClient.close()]);
}, 60_000);
