#!/usr/bin/env node
// Frequency capping in one process: `capper.take` / `check` for a stream of 500 users × 4 items on the in-memory
// store (one cap of two calendar windows, two caps at once, a check, and a store that fails so the shadow count
// decides), beside the floor: the store's own `apply` for the same impressions, with the windows' starts worked out
// beforehand. Interleaved rounds of this process's CPU time (BENCH_ROUNDS, default 31, of BENCH_ITERATIONS
// decisions, default 10,000), each case after a full GC, each round's order reversed from the last. Budget: a take
// on one cap ≤ 8× the floor (what the capper adds: caps, user, windows, decision). Exit 1 when over.
//
// BASELINE=<worktree> (a checkout of an earlier commit, built: `git worktree add ../base <commit>`, then
// `npm run build:node` in it):
// the same cases are also run through `$BASELINE/dist/node/adserver/index.js`, in the same rounds, and each case's
// new ÷ baseline (median of the per-round ratios) is printed and held to ≤ 1.05. Both sides decide the same stream
// identically (checked before measuring).
import { interleavedRounds, quantile, time } from './rounds.mjs';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 31);
const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 10_000);
const WARMUP = 20_000;
const USERS = 500;
const ITEMS = 4;
const STEP_MS = 100; // the clock moves 100 ms per decision: a user × item comes back every 200 s
const BUDGET_FLOOR = 8;
const BUDGET_BASELINE = 1.05;

const here = await import('../../dist/node/adserver/index.js');
const base = process.env.BASELINE
  ? await import(`${process.env.BASELINE.replace(/\/$/, '')}/dist/node/adserver/index.js`)
  : undefined;

const calls = Array.from({ length: USERS }, (_, i) =>
  here.parseAdCall({
    url: '/ac?nwid=1234&siteid=56789&pgid=1234567&fmtid=12345',
    headers: { cookie: `pid=user-${i}` },
  }),
);
const START = Date.UTC(2025, 2, 12, 9);
// Item k's cap: 3 a UTC day and 10 an ISO week.
const dealCap = (k) => ({
  item: `deal:${k}`,
  windows: [
    { max: 3, per: 'day' },
    { max: 10, per: 'week' },
  ],
});

/** The capping cases of one build of the package, each with its own clock and stores. */
function casesOf(lib) {
  const dealCaps = Array.from({ length: ITEMS }, (_, k) => lib.defineFrequencyCap(dealCap(k)));
  const pairs = dealCaps.map((cap, k) => [
    lib.defineFrequencyCap({ item: `campaign:${k}`, max: 5, windowMs: 3_600_000 }),
    cap,
  ]);
  // A store failing at once, like a Redis client without an offline queue while Redis is down. Its error is made
  // once: capturing a stack trace on every call would otherwise be most of what is measured.
  const down = new Error('down');
  const failing = {
    count: () => 0,
    record: () => {},
    apply: () => {
      throw down;
    },
  };
  const capperOf = (options = {}) => {
    let t = START;
    return lib.createFrequencyCapper({ ...options, now: () => (t += STEP_MS) });
  };
  const one = capperOf();
  const two = capperOf();
  const checker = capperOf();
  const shadowed = capperOf({ store: failing });
  let i = 0;
  let j = 0;
  let k = 0;
  let l = 0;
  return {
    'take, 1 cap (3/day, 10/week)': () => one.take(calls[i % USERS], dealCaps[i++ % ITEMS]),
    'take, 2 caps (+ 5/rolling hour)': () => two.take(calls[j % USERS], pairs[j++ % ITEMS]),
    'check, 1 cap': () => checker.check(calls[k % USERS], dealCaps[k++ % ITEMS]),
    'take, store failing (shadow count)': () => shadowed.take(calls[l % USERS], dealCaps[l++ % ITEMS]),
  };
}

/** The floor: the in-memory store's `apply` for the same stream, its checks built by hand from the same caps. */
function floorCase() {
  const store = new here.MemoryFrequencyCapStore();
  const caps = Array.from({ length: ITEMS }, (_, k) => here.resolveCap(dealCap(k)));
  let t = START;
  let i = 0;
  return () => {
    const at = (t += STEP_MS);
    const user = `pid:user-${i % USERS}`;
    const cap = caps[i++ % ITEMS];
    const windows = cap.windows.map((w) => ({ since: w.since(at), max: w.max }));
    return store.apply('take', [{ key: `${user}|${cap.item}`, user, item: cap.item, keepMs: cap.keepMs, windows }], at);
  };
}

// Both builds decide the same stream alike: served or not, and every count.
if (base) {
  const a = casesOf(here);
  const b = casesOf(base);
  for (const name of Object.keys(a)) {
    for (let n = 0; n < 3 * USERS * ITEMS; n++) {
      const [x, y] = await Promise.all([a[name](), b[name]()]);
      const show = (d) => JSON.stringify([d.allowed, d.count, d.windows, d.user, d.storeError]);
      if (show(x) !== show(y)) throw new Error(`${name}: decision ${n} differs: ${show(x)} vs ${show(y)}`);
    }
  }
}

const FLOOR = 'floor: store.apply, take';
const cases = { [FLOOR]: floorCase() };
// Each case beside its baseline, so that the two sides of a ratio run back to back.
const baseCases = base ? casesOf(base) : {};
for (const [name, fn] of Object.entries(casesOf(here))) {
  cases[name] = fn;
  if (base) cases[`${name} [baseline]`] = baseCases[name];
}

// Interleaved rounds, each case timed after a full GC (so none pays for the garbage of the one before: the shadow
// count's and the store's old entries die in the old generation) and its order reversed every other round; the
// decisions' promises settle between rounds (a synchronous store answers at once).
const names = Object.keys(cases);
const perOp = Object.fromEntries(names.map((n) => [n, []]));
for (const fn of Object.values(cases)) time(fn, WARMUP);
for (let r = 0; r < ROUNDS; r++) {
  for (const n of r % 2 ? [...names].reverse() : names) {
    const one = interleavedRounds({ [n]: cases[n] }, { rounds: 1, iterations: ITERATIONS, warmup: 0, cpu: true });
    perOp[n].push(one.perOp[n][0]);
  }
  await new Promise((resolve) => setImmediate(resolve));
}

const median = (xs) => quantile(xs, 0.5);
const perRound = (a, b) => perOp[a].map((x, r) => x / perOp[b][r]);
console.log(
  `${USERS} users × ${ITEMS} items, in-memory store; ${ROUNDS} interleaved rounds of ${ITERATIONS} after a warm-up of ${WARMUP}, CPU time`,
);
const checks = [];
for (const name of names.filter((n) => !n.endsWith('[baseline]'))) {
  const ns = median(perOp[name]);
  let line = `  ${name.padEnd(36)} ${(1e9 / ns).toFixed(0).padStart(9)} ops/s ${(ns / 1000).toFixed(2).padStart(7)} µs`;
  if (name !== FLOOR) line += `   ${median(perRound(name, FLOOR)).toFixed(2)}× floor`;
  if (base && name !== FLOOR) {
    const ratio = median(perRound(name, `${name} [baseline]`));
    line += `   new ÷ baseline ${ratio.toFixed(3)} (quartiles ${quantile(perRound(name, `${name} [baseline]`), 0.25).toFixed(3)}–${quantile(perRound(name, `${name} [baseline]`), 0.75).toFixed(3)})`;
    checks.push([
      `${name}: new ÷ baseline = ${ratio.toFixed(3)} (budget ≤ ${BUDGET_BASELINE})`,
      ratio <= BUDGET_BASELINE,
    ]);
  }
  console.log(line);
}
const TAKE = 'take, 1 cap (3/day, 10/week)';
const overFloor = median(perRound(TAKE, FLOOR));
checks.unshift([`${TAKE} ÷ floor = ${overFloor.toFixed(2)}× (budget ≤ ${BUDGET_FLOOR}×)`, overFloor <= BUDGET_FLOOR]);
for (const [text, ok] of checks) console.log(`${text}: ${ok ? 'OK' : 'OVER BUDGET'}`);
process.exit(checks.every(([, ok]) => ok) ? 0 : 1);
