// A separate ad-server process for the two-process Redis tests: its own node-redis client, the built package
// (dist/). Reads one JSON job from argv, prints "ready", waits for "go" on stdin, does the job, prints the JSON result.
import { createClient } from 'redis';
import {
  createFrequencyCapper,
  createRedisFrequencyCapStore,
  createRedisReport,
} from '../../dist/node/adserver/index.js';
import { fleetCall, fleetExperimentCall } from './fleet-calls.mjs';

const job = JSON.parse(process.argv[2]);
const redis = createClient({ url: job.url });
redis.on('error', () => {});
await redis.connect();

let run;
let warmUp;
if (job.kind === 'take') {
  // `job.users` users, `job.perUser` concurrent takes each, all started at once. `job.defaults`: the capper's
  // default options (else `job.timeoutMs`, default 30 s); `job.flush`: wait for late answers and written
  // impressions before reporting.
  const options = job.defaults ? {} : { timeoutMs: job.timeoutMs ?? 30_000 };
  const capper = createFrequencyCapper({ store: createRedisFrequencyCapStore(redis), ...options });
  const call = (pid) => ({ endpoint: 'ac', networkId: 1, formats: [], eids: [], consent: {}, issues: [], pid });
  warmUp = async () => {
    const cap = { item: 'warm-up', max: 1_000, per: 'day' };
    for (let i = 0; i < 5; i++) {
      await Promise.all(Array.from({ length: 100 }, (_, u) => capper.take(call(`warm-${u}`), cap)));
    }
  };
  run = async () => {
    const calls = [];
    for (let u = 0; u < job.users; u++) for (let i = 0; i < job.perUser; i++) calls.push(call(`user-${u}`));
    const before = capper.metrics(); // after the warm-up
    let slowestMs = 0;
    const t0 = performance.now();
    const timed = async (call) => {
      const d = await capper.take(call, job.cap);
      slowestMs = performance.now() - t0; // the last one to answer sets it
      return d;
    };
    const decisions = await Promise.all(calls.map(timed));
    const served = {};
    decisions.forEach((d, i) => d.allowed && (served[calls[i].pid] = (served[calls[i].pid] ?? 0) + 1));
    if (job.flush) await capper.flush();
    return { served, slowestMs, before, metrics: capper.metrics() };
  };
} else {
  // `job.count` calls from the shared generator, numbered from `job.offset`; with `job.distinct`, each call of its
  // own network (`offset + i + 1`) at `job.start`; with `job.experiments`, calls in holdout experiments and their
  // outcomes. `job.options` are passed to createRedisReport.
  const report = createRedisReport(redis, { flushMs: 50, ...job.options });
  const distinctCall = (i) => ({
    call: { endpoint: 'ac', networkId: i + 1, formats: [], eids: [], consent: {}, issues: [] },
    at: new Date(job.start),
  });
  run = async () => {
    for (let i = job.offset; i < job.offset + job.count; i++) {
      if (job.experiments) {
        const { call, at, outcome } = fleetExperimentCall(i, job.start);
        report.add(call, at);
        report.addOutcome(call, outcome, at);
        if (i % 1000 === 0) await new Promise((r) => setImmediate(r));
        continue;
      }
      const { call, at } = job.distinct ? distinctCall(i) : fleetCall(i, job.start);
      report.add(call, at);
      if (i % 1000 === 0) await new Promise((r) => setImmediate(r)); // let the flush timer run mid-stream
    }
    await report.close();
    return { metrics: report.metrics() };
  };
}

// `job.warm`: a few takes on another item before "ready", as a server that has been answering a while: the script
// is loaded in Redis and the code paths are compiled.
if (job.warm) await warmUp();

process.stdout.write('ready\n');
process.stdin.once('data', async () => {
  const result = await run();
  process.stdout.write(JSON.stringify(result) + '\n');
  await redis.close();
  process.exit(0);
});
