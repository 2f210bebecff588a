#!/usr/bin/env node
// Capacity on a Redis Cluster (`npm run bench cluster`): the receiving path of docs/ad-server.md (parse, provider log,
// report, `take` on one cap, OpenRTB for two partners) served by one ad-server process whose Redis stores run on a
// local cluster of 3 primaries and 3 replicas, through node-redis's createCluster (/redis) and ioredis's
// Redis.Cluster (/ioredis), 16 connections, 500 users. Prints per ad call: redis-server CPU on the primaries and on
// the replicas (INFO cpu), the primaries' command time (INFO commandstats, scripts included), Redis commands sent,
// decisions per script call; then memory per capped user × item (MEMORY USAGE, per copy) with 1 and 3 impressions.
// Budget: commands sent per ad call ≤ 0.3 at 16 connections, per client. Exit 1 when over.
import autocannon from 'autocannon';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { createCluster } from 'redis';
import { Redis } from 'ioredis';
import { createFrequencyCapper, createRedisFrequencyCapStore } from '../../dist/node/adserver/index.js';
import { startRedisCluster } from '../support/redis-cluster.mjs';
import { clusterClient } from '../support/cluster-client.mjs';
import { eids } from './eids.mjs';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = 16;
const USERS = 500;
const BUDGET = 0.3;

const cluster = await startRedisCluster();
const config = { rootNodes: cluster.rootNodes, startupNodes: cluster.startupNodes };
const child = spawn(
  process.execPath,
  [fileURLToPath(new URL('./receiving-server.mjs', import.meta.url)), JSON.stringify(config), 'node'],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
const { port } = JSON.parse(
  await new Promise((resolve) => createInterface({ input: child.stdout }).once('line', resolve)),
);
const param = Buffer.from(JSON.stringify(eids)).toString('base64url');
const query = `?nwid=1234&siteid=56789&pgid=1234567&fmtid=12345&eids=${param}`;
const requests = (path) =>
  Array.from({ length: USERS }, (_, i) => ({
    method: 'GET',
    path: path + query,
    headers: { cookie: `pid=user-${i}`, 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64)' },
  }));
const load = (path, duration) =>
  autocannon({ url: `http://127.0.0.1:${port}`, connections: CONNECTIONS, duration, requests: requests(path) });
const metrics = async () => (await fetch(`http://127.0.0.1:${port}/metrics`)).json();

/** Per primary and replica: CPU µs; per primary: commands and their µs (INFO commandstats). */
async function redisState() {
  const { primaries } = await cluster.topology();
  const cpu = await cluster.cpu();
  const primary = new Set(primaries.map((p) => p.node.address));
  let primaryCpu = 0;
  let replicaCpu = 0;
  for (const [address, us] of Object.entries(cpu)) {
    if (primary.has(address)) primaryCpu += us;
    else replicaCpu += us;
  }
  let usec = 0;
  const calls = {};
  for (const stats of await cluster.eachPrimary((n) => cluster.command(n, ['INFO', 'commandstats']))) {
    for (const m of String(stats).matchAll(/cmdstat_(\w+):calls=(\d+),usec=(\d+)/g)) {
      if (['info', 'config', 'cluster', 'ping', 'replconf', 'client'].includes(m[1])) continue;
      calls[m[1]] = (calls[m[1]] ?? 0) + Number(m[2]);
      usec += Number(m[3]);
    }
  }
  return { primaryCpu, replicaCpu, usec, calls };
}

const results = {};
for (const path of ['/redis', '/ioredis']) {
  await load(path, 1); // warm-up: scripts loaded on every primary, code compiled
  await new Promise((r) => setTimeout(r, 1_200)); // the report's flush of the warm-up
  const r0 = await redisState();
  const m0 = (await metrics())[path];
  const run = await load(path, SECONDS);
  await new Promise((r) => setTimeout(r, 1_200)); // the report's last flush of the run
  const r1 = await redisState();
  const m1 = (await metrics())[path];
  if (run.non2xx || run.errors) throw new Error(`${path}: ${run.non2xx} non-2xx, ${run.errors} errors`);
  const n = run.requests.total;
  const scriptCalls = m1.store.calls - m0.store.calls;
  const reportCommands = m1.report.commands - m0.report.commands;
  results[path] = {
    rps: run.requests.average,
    n,
    primaryCpu: (r1.primaryCpu - r0.primaryCpu) / n,
    replicaCpu: (r1.replicaCpu - r0.replicaCpu) / n,
    usec: (r1.usec - r0.usec) / n,
    sent: (scriptCalls + reportCommands) / n,
    scriptCalls: scriptCalls / n,
    perCall: (m1.store.decisions - m0.store.decisions) / scriptCalls,
    timeouts: m1.capper.timeouts - m0.capper.timeouts,
    errors: m1.capper.errors - m0.capper.errors,
  };
}
child.kill();

// Memory per capped user × item (Redis MEMORY USAGE of the key, per copy: a replica holds as much), 1 and 3
// impressions, over 500 users.
async function memoryPerUser(impressions) {
  const redis = await clusterClient({ ...config, client: 'node-redis' }, { createCluster, Redis });
  const store = createRedisFrequencyCapStore(redis, { prefix: `mem${impressions}:` });
  const capper = createFrequencyCapper({ store });
  const cap = {
    item: 'deal:42',
    windows: [
      { max: 3, per: 'day' },
      { max: 10, per: 'week' },
    ],
  };
  const call = (pid) => ({ endpoint: 'ac', networkId: 1, formats: [], eids: [], consent: {}, issues: [], pid });
  const N = 500;
  for (let k = 0; k < impressions; k++) {
    await Promise.all(Array.from({ length: N }, (_, u) => capper.take(call(`mem-${u}`), cap)));
  }
  let bytes = 0;
  for (let u = 0; u < N; u++) bytes += Number(await redis.memoryUsage(store.keyOf(`pid:mem-${u}`, 'deal:42')));
  await redis.close();
  return bytes / N;
}
const memory = { 1: await memoryPerUser(1), 3: await memoryPerUser(3) };
await cluster.stop();

console.log(
  `Redis Cluster, 3 primaries + 3 replicas on this machine; one ad-server process, ${CONNECTIONS} connections, ` +
    `${USERS} users, ${SECONDS} s per client, GET /ac with 10 eids (the whole receiving path, one cap of 2 windows)`,
);
for (const [path, r] of Object.entries(results)) {
  console.log(
    `  ${path.padEnd(9)} ${r.rps.toFixed(0).padStart(6)} ad calls/s   per ad call: redis-server CPU ` +
      `${r.primaryCpu.toFixed(1)} µs on the primaries + ${r.replicaCpu.toFixed(1)} µs on the replicas, ` +
      `command time ${r.usec.toFixed(1)} µs, commands sent ${r.sent.toFixed(3)} (${r.scriptCalls.toFixed(3)} script ` +
      `calls); ${r.perCall.toFixed(1)} decisions per script call; ${r.timeouts} timeouts, ${r.errors} errors`,
  );
}
console.log(
  `  memory per capped user × item (MEMORY USAGE, per copy; a replica holds as much): ${memory[1].toFixed(0)} B with 1 ` +
    `impression, ${memory[3].toFixed(0)} B with 3`,
);
const worst = Math.max(...Object.values(results).map((r) => r.primaryCpu));
console.log(
  `sizing: at ${worst.toFixed(0)} µs of primary CPU per ad call, one primary core serves about ` +
    `${Math.floor(1e6 / worst).toLocaleString('en-US')} ad calls/s`,
);
const checks = Object.entries(results).map(([path, r]) => [
  `Redis commands sent per ad call (${path.slice(1)}, ${CONNECTIONS} connections) = ${r.sent.toFixed(3)} (budget ≤ ${BUDGET})`,
  r.sent <= BUDGET,
]);
for (const [text, ok] of checks) console.log(`${text}: ${ok ? 'OK' : 'OVER BUDGET'}`);
process.exit(checks.every(([, ok]) => ok) ? 0 : 1);
