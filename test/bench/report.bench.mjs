#!/usr/bin/env node
// Counting ad calls in the report, in one process: `add` of the in-memory report (createReport) and of the Redis
// report (createRedisReport: what it costs the ad call, the counters staged in its local buffer; no flush runs
// during the bench, so no network), for a call with 10 eids, the same in two holdout experiments, and an outcome of
// that call. Interleaved rounds, CPU time, median of the per-round ratios. Budget: the Redis report's `add` ≤ 1.5×
// the in-memory report's (its buffer must cost an ad call no more than counting in memory does).
//
// BASELINE=<dir of another checkout, built> (e.g. BASELINE=/work/wt-base): also imports createReport and
// createRedisReport from `$BASELINE/dist/node/adserver/index.js`, runs the same cases against them in the same
// rounds, interleaved, and prints this build ÷ the baseline per case (median of the per-round ratios); budget
// ≤ 1.05× each. Exit 1 when over a budget.
import { createClient } from 'redis';
import { parseAdCall } from '../../dist/node/adserver/index.js';
import { eids } from './eids.mjs';
import { interleavedRounds, quantile } from './rounds.mjs';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 81);
const ITERATIONS = 5_000;
const WARMUP = 20_000;
const USERS = 500;
const REDIS_BUDGET = 1.5;
const BASELINE_BUDGET = 1.05;

const builds = { new: await import('../../dist/node/adserver/index.js') };
if (process.env.BASELINE) builds.baseline = await import(`${process.env.BASELINE}/dist/node/adserver/index.js`);

const b64 = (v) => Buffer.from(JSON.stringify(v)).toString('base64url');
const xp = [
  { id: 'id5-holdout', arm: 'h', pct: 10, src: ['id5-sync.com'], st: 1 },
  { id: 'uid2-holdout', arm: 'c', pct: 20, src: ['uidapi.com', 'euid.eu'], st: 1 },
];
const query = `nwid=1234&siteid=56789&pgid=1234567&fmtid=12345&eids=${b64(eids)}`;
const parse = (q, i) => parseAdCall({ url: `/ac?${q}`, headers: { cookie: `pid=user-${i}` } });
const plain = Array.from({ length: USERS }, (_, i) => parse(query, i));
const inExperiments = Array.from({ length: USERS }, (_, i) => parse(`${query}&xp=${b64(xp)}`, i));
if (plain[0].eids.length !== 10 || inExperiments[0].experiments?.length !== 2)
  throw new Error('bench input did not parse as meant');
const OUTCOME = { impression: true, revenue: 0.0042 };

// Never connected: the Redis report's `add` only touches memory, and its flush timer does not fire in the run.
const client = createClient();
const reports = Object.fromEntries(
  Object.entries(builds).map(([name, m]) => [
    name,
    { memory: m.createReport(), redis: m.createRedisReport(client, { flushMs: 2_000_000_000 }) },
  ]),
);

/** The cases of one build: name → one call. */
function casesOf(build) {
  const r = reports[build];
  let i = 0;
  const next = (list) => list[i++ % USERS];
  return {
    'memory add (10 eids)': () => r.memory.add(next(plain)),
    'memory add (10 eids, 2 experiments)': () => r.memory.add(next(inExperiments)),
    'memory addOutcome (2 experiments)': () => r.memory.addOutcome(next(inExperiments), OUTCOME),
    'Redis add (10 eids)': () => r.redis.add(next(plain)),
    'Redis add (10 eids, 2 experiments)': () => r.redis.add(next(inExperiments)),
    'Redis addOutcome (2 experiments)': () => r.redis.addOutcome(next(inExperiments), OUTCOME),
  };
}

// Each case of this build beside the same case of the baseline, so that both sides of a ratio run back to back.
const perBuild = Object.fromEntries(Object.keys(builds).map((build) => [build, casesOf(build)]));
const names = Object.keys(perBuild.new);
const cases = {};
for (const name of names) for (const build of Object.keys(builds)) cases[`${build}: ${name}`] = perBuild[build][name];
const { perOp } = interleavedRounds(cases, { rounds: ROUNDS, iterations: ITERATIONS, warmup: WARMUP, cpu: true });

/** Median over rounds of a ÷ b, each round's two sides measured back to back. */
const ratio = (a, b) =>
  quantile(
    perOp[a].map((t, r) => t / perOp[b][r]),
    0.5,
  );
console.log(
  `${ROUNDS} interleaved rounds of ${ITERATIONS} calls after a warm-up of ${WARMUP}, CPU time, ${USERS} users`,
);
const checks = [];
for (const name of names) {
  const line = [`  ${name.padEnd(38)} ${quantile(perOp[`new: ${name}`], 0.5).toFixed(0).padStart(6)} ns/op`];
  if (builds.baseline) {
    const x = ratio(`new: ${name}`, `baseline: ${name}`);
    line.push(
      `baseline ${quantile(perOp[`baseline: ${name}`], 0.5).toFixed(0).padStart(6)} ns/op   new ÷ baseline ${x.toFixed(3)}`,
    );
    checks.push([`${name}: new ÷ baseline = ${x.toFixed(3)}x (budget ≤ ${BASELINE_BUDGET}x)`, x <= BASELINE_BUDGET]);
  }
  console.log(line.join('   '));
}
for (const kind of ['(10 eids)', '(10 eids, 2 experiments)']) {
  const x = ratio(`new: Redis add ${kind}`, `new: memory add ${kind}`);
  checks.push([
    `Redis report add ÷ in-memory add ${kind} = ${x.toFixed(2)}x (budget ≤ ${REDIS_BUDGET}x)`,
    x <= REDIS_BUDGET,
  ]);
}
for (const [text, ok] of checks) console.log(`${text}: ${ok ? 'OK' : 'OVER BUDGET'}`);
process.exit(checks.every(([, ok]) => ok) ? 0 : 1);
