// A separate ad-server process for the two-process Redis tests: its own node-redis client, the built package
// (dist/). Reads one JSON job from argv, prints "ready", waits for "go" on stdin, does the job, prints the JSON result.
import { createClient } from 'redis';
import { createFrequencyCapper, createRedisFrequencyCapStore, createRedisReport } from '../../dist/node/adserver/index.js';
import { fleetCall } from './fleet-calls.mjs';

const job = JSON.parse(process.argv[2]);
const redis = createClient({ url: job.url });
redis.on('error', () => {});
await redis.connect();

let run;
if (job.kind === 'take') {
  // `job.users` users, `job.perUser` concurrent takes each, all started at once.
  const capper = createFrequencyCapper({ store: createRedisFrequencyCapStore(redis), timeoutMs: 30_000 });
  run = async () => {
    const calls = [];
    for (let u = 0; u < job.users; u++) for (let i = 0; i < job.perUser; i++) calls.push({ endpoint: 'ac', networkId: 1, formats: [], eids: [], consent: {}, issues: [], pid: `user-${u}` });
    const decisions = await Promise.all(calls.map((call) => capper.take(call, job.cap)));
    const served = {};
    decisions.forEach((d, i) => d.allowed && (served[calls[i].pid] = (served[calls[i].pid] ?? 0) + 1));
    return { served, metrics: capper.metrics() };
  };
} else {
  // `job.count` calls from the shared generator, numbered from `job.offset`; with `job.distinct`, each call of its
  // own network (`offset + i + 1`) at `job.start`. `job.options` are passed to createRedisReport.
  const report = createRedisReport(redis, { flushMs: 50, ...job.options });
  const distinctCall = (i) => ({
    call: { endpoint: 'ac', networkId: i + 1, formats: [], eids: [], consent: {}, issues: [] },
    at: new Date(job.start),
  });
  run = async () => {
    for (let i = job.offset; i < job.offset + job.count; i++) {
      const { call, at } = job.distinct ? distinctCall(i) : fleetCall(i, job.start);
      report.add(call, at);
      if (i % 1000 === 0) await new Promise((r) => setImmediate(r)); // let the flush timer run mid-stream
    }
    await report.close();
    return { metrics: report.metrics() };
  };
}

process.stdout.write('ready\n');
process.stdin.once('data', async () => {
  const result = await run();
  process.stdout.write(JSON.stringify(result) + '\n');
  await redis.close();
  process.exit(0);
});
