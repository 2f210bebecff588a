// Two ad-server processes (child processes, each its own node-redis client, the built package) sharing one real
// redis-server: caps are exact across them, and their reports merge. `npm test` builds before the suites run.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createReport, createRedisReport } from '../../src/adserver/index.js';
import type { AdCall } from '../../src/adserver/index.js';
// @ts-expect-error plain ESM helper shared with the bench
import { connectRedis, startRedis } from '../support/redis-server.mjs';
// @ts-expect-error plain ESM helper shared with the worker processes
import { fleetCall, fleetExperimentCall, fleetStart } from '../support/fleet-calls.mjs';

const worker = fileURLToPath(new URL('../support/redis-worker.mjs', import.meta.url));
const dist = fileURLToPath(new URL('../../dist/node/adserver/capping/redis-store.js', import.meta.url));

/** Starts one worker per job, releases them together once all are ready (and `beforeGo`), returns their results. */
async function runFleet(jobs: object[], beforeGo?: () => Promise<unknown>): Promise<any[]> {
  const procs = jobs.map((job) =>
    spawn(process.execPath, [worker, JSON.stringify(job)], { stdio: ['pipe', 'pipe', 'inherit'] }),
  );
  const lines = procs.map((p) => {
    let buf = '';
    const waiters: ((line: string) => void)[] = [];
    p.stdout.on('data', (d) => {
      buf += d;
      let nl;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        waiters.shift()?.(line);
      }
    });
    return () => new Promise<string>((resolve) => waiters.push(resolve));
  });
  const ready = lines.map((next) => next());
  const done = lines.map((next, i) => ready[i].then(() => next()));
  expect(await Promise.all(ready)).toEqual(jobs.map(() => 'ready'));
  await beforeGo?.();
  for (const p of procs) p.stdin.write('go\n');
  return (await Promise.all(done)).map((line) => JSON.parse(line));
}

let redis: Awaited<ReturnType<typeof startRedis>>;
beforeAll(async () => {
  if (!existsSync(dist)) throw new Error('build first: npm run build');
  redis = await startRedis();
});
afterAll(() => redis?.stop());

describe('two processes sharing Redis', () => {
  test('500 concurrent takes per process for the same users with max 3: exactly 3 served per user across both', async () => {
    const cap = {
      item: 'deal:race',
      windows: [
        { max: 3, per: 'day' },
        { max: 3, windowMs: 3_600_000 },
      ],
    };
    const job = { kind: 'take', url: redis.url, users: 10, perUser: 50, cap };
    const [a, b] = await runFleet([job, job]);
    for (let u = 0; u < 10; u++) {
      const user = `user-${u}`;
      expect((a.served[user] ?? 0) + (b.served[user] ?? 0), user).toBe(3);
    }
    expect(a.metrics.timeouts + b.metrics.timeouts + a.metrics.errors + b.metrics.errors).toBe(0);
    expect(a.metrics.storeCalls + b.metrics.storeCalls).toBe(1000);
    const client = await connectRedis(redis.url);
    expect(await client.zCard('eidkit:fc:{pid:user-0}deal:race')).toBe(3);
    await client.close();
  }, 60_000);

  test('two processes each add 10,000 calls: merged totals equal the calls sent, per dimension, per hour and per day', async () => {
    const start = fleetStart();
    const [a, b] = await runFleet([
      { kind: 'report', url: redis.url, offset: 0, count: 10_000, start },
      { kind: 'report', url: redis.url, offset: 10_000, count: 10_000, start },
    ]);
    expect(a.metrics).toMatchObject({ buffered: 0, droppedCalls: 0, flushErrors: 0 });
    expect(b.metrics).toMatchObject({ buffered: 0, droppedCalls: 0, flushErrors: 0 });
    // What was sent, counted by the in-memory report: the same rows, through the same row builder.
    const expected = createReport();
    for (let i = 0; i < 20_000; i++) {
      const { call, at } = fleetCall(i, start) as { call: AdCall; at: Date };
      expected.add(call, at);
    }
    const client = await connectRedis(redis.url);
    const merged = createRedisReport(client);
    const day = await merged.toJSON();
    expect(day.rows.reduce((n, r) => n + r.calls, 0)).toBe(20_000);
    expect(new Set(day.rows.map((r) => r.date)).size).toBe(2); // the calls span a UTC midnight
    expect(day).toEqual(expected.toJSON());
    const hour = await merged.toJSON({ granularity: 'hour' });
    expect(hour.rows.length).toBeGreaterThanOrEqual(6 * 3);
    expect(hour).toEqual(expected.toJSON({ granularity: 'hour' }));
    expect(await merged.toCSV()).toBe(expected.toCSV());
    expect(await merged.toCSV({ granularity: 'hour' })).toBe(expected.toCSV({ granularity: 'hour' }));
    const firstDay = new Date(start).toISOString().slice(0, 10);
    expect((await merged.toCSV()).split('\r\n').slice(0, 2)).toEqual([
      'date,network_id,dimension,key,label,calls',
      `${firstDay},,Ad Calls,all,all ad calls,${day.rows[0].calls}`,
    ]);
    expect(day.rows[0]).toMatchObject({ date: firstDay, networkId: null });
    await merged.close();
    await client.close();
  }, 60_000);
});

describe('holdout experiments across two processes', () => {
  test('two processes each add 10,000 calls in experiments and their outcomes: the experiment totals are exact', async () => {
    const start = fleetStart();
    const job = { kind: 'report', url: redis.url, count: 10_000, start, experiments: true, options: { prefix: 'xp:' } };
    const [a, b] = await runFleet([
      { ...job, offset: 0 },
      { ...job, offset: 10_000 },
    ]);
    expect(a.metrics).toMatchObject({ buffered: 0, droppedCalls: 0, flushErrors: 0 });
    expect(b.metrics).toMatchObject({ buffered: 0, droppedCalls: 0, flushErrors: 0 });
    const expected = createReport();
    for (let i = 0; i < 20_000; i++) {
      const { call, at, outcome } = fleetExperimentCall(i, start) as {
        call: AdCall;
        at: Date;
        outcome: { impression: boolean; revenue?: number };
      };
      expected.add(call, at);
      expected.addOutcome(call, outcome, at);
    }
    const client = await connectRedis(redis.url);
    const merged = createRedisReport(client, { prefix: 'xp:' });
    const day = await merged.toJSON();
    expect(day).toEqual(expected.toJSON());
    expect(await merged.toJSON({ granularity: 'hour' })).toEqual(expected.toJSON({ granularity: 'hour' }));
    // Every call counted once in each experiment, every outcome once.
    const total = (id: string, k: 'calls' | 'outcomes' | 'impressions') =>
      day.rows.reduce((n, r) => {
        const x = r.experiments?.find((e) => e.id === id);
        return n + (x ? x.holdout[k] + x.control[k] : 0);
      }, 0);
    expect([total('id5-q3', 'calls'), total('uid2', 'outcomes'), total('uid2', 'impressions')]).toEqual([
      20_000, 20_000, 6_667,
    ]);
    await merged.close();
    await client.close();
  }, 60_000);
});

describe('a burst through the default options', () => {
  // Ad traffic comes in bursts: 2 processes × 300 concurrent takes (50 users, 6 each per process), cap 3 a day.
  // Each process has answered a few hundred takes before (`warm`), as a server in service has.
  const burst = (item: string, flush = false) => {
    const cap = { item, max: 3, per: 'day' };
    return { kind: 'take', url: redis.url, users: 50, perUser: 6, cap, defaults: true, warm: true, flush };
  };
  // The metrics of the burst alone (the worker's snapshot after its warm-up subtracted).
  const burstMetrics = (r: any) =>
    Object.fromEntries(Object.entries(r.metrics).map(([k, v]) => [k, (v as number) - r.before[k]]));
  const servedPerUser = (results: any[]) =>
    Array.from({ length: 50 }, (_, u) => results.reduce((n, r) => n + (r.served[`user-${u}`] ?? 0), 0));

  test('2 processes × 300 concurrent takes, 50 users, cap 3, default options: exactly 3 served per user', async () => {
    const results = await runFleet([burst('deal:burst'), burst('deal:burst')]);
    expect(servedPerUser(results)).toEqual(Array(50).fill(3));
    const answered = { storeCalls: 300, timeouts: 0, errors: 0, servedOnError: 0 };
    for (const r of results) expect(burstMetrics(r)).toMatchObject(answered);
  }, 60_000);

  test('the same burst with Redis paused: at most cap × processes per user, counted, then written', async () => {
    const admin = await connectRedis(redis.url);
    // Redis stops answering every client for 2 s: each take times out and the shadow count decides.
    const pause = () => admin.sendCommand(['CLIENT', 'PAUSE', '2000', 'ALL']);
    const results = await runFleet([burst('deal:paused', true), burst('deal:paused', true)], pause);
    const served = servedPerUser(results);
    expect(Math.max(...served)).toBeLessThanOrEqual(3 * 2);
    for (const r of results) {
      for (let u = 0; u < 50; u++) expect(r.served[`user-${u}`] ?? 0).toBeLessThanOrEqual(3);
      const m = burstMetrics(r);
      expect(m.timeouts + m.errors).toBe(300);
      expect(m.servedOnError + m.blockedOnError).toBe(300);
      expect(m.servedOnError).toBe(Object.values(r.served as Record<string, number>).reduce((a, b) => a + b, 0));
      expect(m.shadowCapped).toBe(m.blockedOnError);
      expect(r.metrics).toMatchObject({ replayPending: 0, replayDropped: 0 });
    }
    // Nothing served during the pause is missing from the counts Redis holds now.
    const counts = await Promise.all(served.map((_, u) => admin.zCard(`eidkit:fc:{pid:user-${u}}deal:paused`)));
    for (let u = 0; u < 50; u++) expect(counts[u], `user-${u}`).toBeGreaterThanOrEqual(served[u]);
    await admin.close();
  }, 60_000);
});

describe('the Redis report network cap across a fleet', () => {
  test('two processes add 10,000 calls of distinct networks each: one network cap for both, the rest dropped', async () => {
    const start = Date.now();
    const options = { maxNetworksPerDay: 1_000, prefix: 'fleetcap:' };
    const [a, b] = await runFleet([
      { kind: 'report', url: redis.url, offset: 0, count: 10_000, start, distinct: true, options },
      { kind: 'report', url: redis.url, offset: 10_000, count: 10_000, start, distinct: true, options },
    ]);
    expect(a.metrics.cappedCalls + b.metrics.cappedCalls).toBe(19_000);
    const client = await connectRedis(redis.url);
    const reader = createRedisReport(client, { ...options, now: () => start });
    const day = await reader.toJSON();
    expect(day.rows).toHaveLength(1_000);
    expect(day.rows.reduce((n, r) => n + r.calls, 0)).toBe(1_000);
    expect(day.droppedCalls).toBe(19_000);
    const hour = await reader.toJSON({ granularity: 'hour' });
    expect(hour.rows).toHaveLength(1_000);
    expect(hour.droppedCalls).toBe(19_000);
    // 1,000 networks × 3 counters (calls, noeids, eff:none) + `#networks` + `#dropped`.
    expect(await client.hLen(`fleetcap:d:${new Date(start).toISOString().slice(0, 10)}`)).toBe(3_002);
    await reader.close();
    await client.close();
  }, 60_000);
});

describe('the demo', () => {
  test('with REDIS_URL, two demo servers share one cap and one report through Redis', async () => {
    // @ts-expect-error plain ESM demo
    const { startDemo } = await import('../../demo/server.mjs');
    process.env.REDIS_URL = redis.url;
    const demos: { url: string; server: import('node:http').Server }[] = [];
    try {
      demos.push(await startDemo(0, { quiet: true }), await startDemo(0, { quiet: true }));
      const eids = Buffer.from(
        JSON.stringify([{ source: 'id5-sync.com', uids: [{ id: 'ID5*demo', atype: 1 }] }]),
      ).toString('base64url');
      const served = [];
      for (let i = 0; i < 6; i++) {
        const r = await fetch(`${demos[i % 2].url}ac?nwid=77&siteid=1&eids=${eids}`, {
          headers: { cookie: 'pid=demo-user' },
        });
        served.push((await r.json()).hasPid);
      }
      // The demo read the pid cookie on every call (its answer says so, never repeating the HttpOnly value).
      expect(served).toEqual(Array(6).fill(true));
      // Each demo flushes its counts every second; the reader's own are flushed before it reads.
      let json;
      for (let i = 0; i < 100; i++) {
        json = await (await fetch(`${demos[0].url}report.json`)).json();
        if (json.rows.find((r: { networkId: number }) => r.networkId === 77)?.calls === 6) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(json.store).toBe('redis');
      expect(json.rows.find((r: { networkId: number }) => r.networkId === 77)).toMatchObject({
        calls: 6,
        extendedIds: [{ providerId: 2, calls: 6 }],
      });
      // The demo cap (3 per rolling minute) is counted across both servers: each saw only 3 calls, so a call
      // refused with 3 counted proves the other server's impressions were seen. At most 3 served by the store.
      interface Capping {
        allowed: boolean;
        count: number;
        storeError: string | null;
      }
      const decisions: Capping[] = [json, await (await fetch(`${demos[1].url}report.json`)).json()].flatMap((j) =>
        j.lastCalls.map((c: { capping: Capping }) => c.capping),
      );
      expect(decisions).toHaveLength(6);
      expect(decisions.filter((d) => d.allowed && !d.storeError).length).toBeLessThanOrEqual(3);
      expect(decisions.some((d) => !d.allowed && d.count === 3)).toBe(true);
      expect((await (await fetch(`${demos[1].url}report.csv?granularity=hour`)).text()).split('\r\n')[0]).toBe(
        'date,hour,network_id,dimension,key,label,calls',
      );
    } finally {
      delete process.env.REDIS_URL;
      await Promise.all(demos.map((d) => new Promise((r) => d.server.close(r))));
    }
  }, 60_000);
});
