// One ad-server process of the cluster fleet test (and the cluster bench's fleet): the built package (dist/), its
// own cluster client (argv: JSON `{ client: 'node-redis' | 'ioredis', rootNodes, startupNodes }`), the cap store and
// the report on it with their default options, as docs/ad-server.md configures them. Prints "ready", then reads one
// JSON command per line on stdin and answers each with one JSON line:
//   { op: 'burst', item, users, perUser, max }   all takes at once (users × perUser), one cap `max` a day
//   { op: 'load', item, users, ms, every, max, caps, report } takes at a pace (one every `every` ms, users in
//                                                 turn) for `ms`; with `report: { offset, start }` each is also
//                                                 added to the report (as fleet call offset + i)
//   { op: 'report', offset, count, start }        adds fleet calls to the Redis report
//   { op: 'flush' }                               the capper's late answers and write-backs, the report's buffer
//   { op: 'exit' }
// Each answer carries `served` (per user), the capper's and the store's metrics since the command began, and `errors`:
// the messages of the store's failed decisions, counted (what reached the capper).
import { createCluster } from 'redis';
import { Redis } from 'ioredis';
import { createInterface } from 'node:readline';
import {
  createFrequencyCapper,
  createRedisFrequencyCapStore,
  createRedisReport,
} from '../../dist/node/adserver/index.js';
import { clusterClient } from './cluster-client.mjs';
import { fleetCall } from './fleet-calls.mjs';
import { sampleWaits } from './cpu-wait.mjs';

const config = JSON.parse(process.argv[2]);
const redis = await clusterClient(config, { createCluster, Redis });
const store = createRedisFrequencyCapStore(redis);
const report = createRedisReport(redis, { flushMs: 100 });

// The store's failed decisions, by message (the decision's settle callback, through the store's queue entry point).
const errors = {};
const enqueue = Object.getOwnPropertySymbols(store).find((s) => s.description === 'eidkit.enqueue');
const accept = store[enqueue];
store[enqueue] = (decision) =>
  accept({
    ...decision,
    settle: (error, outcome) => {
      if (error) {
        const m = String(error?.message ?? error).slice(0, 80);
        errors[m] = (errors[m] ?? 0) + 1;
      }
      decision.settle(error, outcome);
    },
  });
const capper = createFrequencyCapper({ store });

const call = (pid) => ({ endpoint: 'ac', networkId: 1, formats: [], eids: [], consent: {}, issues: [], pid });
const capsOf = (job) => {
  const deal = { item: job.item, max: job.max ?? 3, per: 'day' };
  // `caps: 2`: the deal and a campaign, both counted (two keys of one user in one decision).
  return job.caps === 2 ? [deal, { item: `${job.item}:campaign`, max: 100, per: 'day' }] : deal;
};

let reported = 0;
async function run(job, body) {
  reported = 0;
  const before = { capper: capper.metrics(), store: store.metrics() };
  for (const k of Object.keys(errors)) delete errors[k];
  const served = {};
  let slowestMs = 0;
  const take = async (pid, cap) => {
    const t0 = performance.now();
    const d = await capper.take(call(pid), cap);
    slowestMs = Math.max(slowestMs, performance.now() - t0);
    if (d.allowed) served[pid] = (served[pid] ?? 0) + 1;
  };
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const waits = sampleWaits(['self']);
  await body(take);
  const cpu = process.cpuUsage(cpu0);
  const waitedMs = waits.stop();
  const since = (now, then) => Object.fromEntries(Object.entries(now).map(([k, v]) => [k, v - (then[k] ?? 0)]));
  return {
    served,
    slowestMs,
    ms: performance.now() - t0,
    cpuUs: cpu.user + cpu.system,
    // The most this process was ready to run but without a core within any 100 ms of the command (the machine's
    // load, not this process's work).
    waitedMs,
    capper: since(capper.metrics(), before.capper),
    store: since(store.metrics(), before.store),
    errors: { ...errors },
    reported,
  };
}

const ops = {
  burst: (job) =>
    run(job, async (take) => {
      const cap = capsOf(job);
      const all = [];
      for (let u = 0; u < job.users; u++) for (let i = 0; i < job.perUser; i++) all.push(take(`${job.item}-${u}`, cap));
      await Promise.all(all);
    }),
  load: (job) =>
    run(job, async (take) => {
      const cap = capsOf(job);
      const pending = [];
      const end = performance.now() + job.ms;
      for (let i = 0; performance.now() < end; i++) {
        pending.push(take(`${job.item}-${i % job.users}`, cap));
        // `report`: each ad call is counted in the Redis report too, as fleet call `offset + i`.
        if (job.report) {
          const { call: c, at } = fleetCall(job.report.offset + i, job.report.start);
          report.add(c, at);
          reported++;
        }
        await new Promise((r) => setTimeout(r, job.every));
      }
      await Promise.all(pending);
    }),
  async report(job) {
    for (let i = job.offset; i < job.offset + job.count; i++) {
      const { call: c, at } = fleetCall(i, job.start);
      report.add(c, at);
    }
    return { added: job.count };
  },
  async flush() {
    await capper.flush();
    await report.flush();
    return { capper: capper.metrics(), store: store.metrics(), report: report.metrics() };
  },
  async exit() {
    await report.close().catch(() => {});
    if (config.client === 'ioredis') redis.disconnect();
    else await redis.close().catch(() => {});
    setImmediate(() => process.exit(0));
    return {};
  },
};

// A warm process, as a server in service: the scripts loaded on every primary and the code paths compiled by V8's
// optimizing tiers, which takes a few thousand decisions (the first 2,000-take burst of a fresh process costs 3-5
// times the CPU of the fourth).
for (let i = 0; i < 4; i++) await ops.burst({ item: `warm${i}`, users: 500, perUser: 4, max: 1_000 });
process.stdout.write('ready\n');
for await (const line of createInterface({ input: process.stdin })) {
  const job = JSON.parse(line);
  process.stdout.write(JSON.stringify(await ops[job.op](job)) + '\n');
}
