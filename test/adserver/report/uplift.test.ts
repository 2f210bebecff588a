// The uplift statistics against a traffic simulator with a known true lift per provider: over many simulated
// experiments the 95 % interval covers the truth 93-97 % of the time, a zero lift is called significant about 5 %
// of the time, and a skewed assignment is flagged by the sample-ratio check. Seeded: the rates are the same on
// every run (printed below).
import { describe, expect, test } from 'vitest';
import { createReport, liftOf, parseAdCall, sampleRatioCheck, upliftOf } from '../../../src/adserver/index.js';
import type { AdCall, ArmSums } from '../../../src/adserver/index.js';
import { daysToHalfWidth } from '../../../src/adserver/report/index.js';
import { ID5, UID2, b64url } from '../fixtures.js';
import { random, simulateCalls, simulateSums, trueLift } from './traffic-simulator.js';
import type { Traffic } from './traffic-simulator.js';

const RUNS = 1000;
/** Revenue per filled call around 0.002 (a 2.00 CPM), log-normal with a long tail. */
const BASE: Traffic = {
  calls: 12_000,
  share: 0.2,
  fill: 0.25,
  fillGain: 0,
  mu: Math.log(0.002),
  sigma: 1,
  priceGain: 0,
};
const PROVIDERS: Record<string, Traffic> = {
  // ID5 held out from 20 % of browsers: +5 % fill, +3 % price with it (true lift 8.15 %).
  'id5-sync.com': { ...BASE, fillGain: 0.05, priceGain: 0.03 },
  // UID2 held out from half the browsers, a heavier tail: +2 % fill (true lift 2 %).
  'uidapi.com': { ...BASE, share: 0.5, sigma: 1.2, fillGain: 0.02 },
};

function runExperiments(t: Traffic, seed: number, runs = RUNS) {
  const next = random(seed);
  const truth = trueLift(t);
  let covered = 0;
  let significant = 0;
  let srmFlags = 0;
  for (let r = 0; r < runs; r++) {
    const s = simulateSums(t, next);
    const lift = liftOf(s.control.revenue, s.holdout.revenue)!;
    if (lift.low <= truth && truth <= lift.high) covered++;
    if (lift.significant) significant++;
    if (sampleRatioCheck(s.holdout.revenue.n, s.control.revenue.n, 0.2).mismatch) srmFlags++;
  }
  return { coverage: covered / runs, significant: significant / runs, srm: srmFlags / runs };
}

describe('the lift and its 95 % interval, on simulated traffic', () => {
  test.each(Object.entries(PROVIDERS))(
    `%s: over ${RUNS} experiments of 12,000 calls the interval covers the true lift in 93-97 % of them`,
    (source, traffic) => {
      const { coverage } = runExperiments(traffic, source.length);
      console.log(`${source}: true lift ${(trueLift(traffic) * 100).toFixed(2)} %, coverage ${coverage * 100} %`);
      expect(coverage).toBeGreaterThanOrEqual(0.93);
      expect(coverage).toBeLessThanOrEqual(0.97);
    },
  );
  test(`a zero true lift is called significant in about 5 % of ${RUNS} experiments; an honest split is flagged ~0.1 %`, () => {
    const { coverage, significant, srm } = runExperiments(BASE, 99);
    console.log(
      `zero lift: significant ${significant * 100} %, coverage ${coverage * 100} %, ratio flagged ${srm * 100} %`,
    );
    expect(significant).toBeLessThanOrEqual(0.065);
    expect(significant).toBeGreaterThanOrEqual(0.035);
    expect(srm).toBeLessThanOrEqual(0.005);
  });
  test('a skewed assignment (22 % held out where 20 % is declared) is flagged by the sample-ratio check', () => {
    const { srm } = runExperiments({ ...BASE, share: 0.22 }, 7, 200);
    console.log(`22 % held out of a declared 20 %: flagged in ${srm * 100} % of 200 experiments`);
    expect(srm).toBeGreaterThanOrEqual(0.95);
  });
});

describe('the statistics', () => {
  test('the sample-ratio check: chi-square with 1 degree of freedom against the declared share', () => {
    // 3.841 is the 95th percentile of chi-square(1); 10.83 the 99.9th.
    const at = (chi: number) => {
      // A split whose chi-square is `chi` for 10,000 calls declared 50/50.
      const d = Math.sqrt(chi * 2500);
      return sampleRatioCheck(5000 + d, 5000 - d, 0.5);
    };
    expect(at(3.841).pValue).toBeCloseTo(0.05, 4);
    expect(at(10.83).pValue).toBeCloseTo(0.001, 5);
    expect(at(10.8).mismatch).toBe(false);
    expect(at(11).mismatch).toBe(true);
    expect(sampleRatioCheck(1000, 9000, 0.1)).toMatchObject({ chiSquare: 0, pValue: 1, mismatch: false });
  });
  test('the lift: a ratio of means on the log scale; null while an arm earns nothing', () => {
    const arm = (n: number, sum: number, sumSquares: number): ArmSums => ({ n, sum, sumSquares });
    const lift = liftOf(arm(1000, 1.1, 0.01), arm(1000, 1, 0.01))!;
    expect(lift.lift).toBeCloseTo(0.1, 10);
    expect(lift.low).toBeLessThan(lift.lift);
    expect(lift.high - lift.lift).toBeGreaterThan(lift.lift - lift.low); // asymmetric, as a ratio is
    expect(liftOf(arm(1000, 1, 0.01), arm(1000, 0, 0))).toBeNull();
  });
  test('days to the target half-width: simulating that many more days reaches it', () => {
    const next = random(3);
    const t = { ...BASE, fillGain: 0.05, priceGain: 0.03, calls: 12_000 };
    const lift = liftOf(
      ...(({ control, holdout }) => [control.revenue, holdout.revenue] as const)(simulateSums(t, next)),
    )!;
    const days = daysToHalfWidth(lift, 12_000, 12_000, 0.05)!;
    expect(days).toBeGreaterThan(1);
    const later = simulateSums({ ...t, calls: 12_000 * (days + 1) }, next);
    const reached = liftOf(later.control.revenue, later.holdout.revenue)!;
    console.log(
      `half-width ±${(lift.halfWidth * 100).toFixed(1)} % after a day; ${days} more days: ±${(reached.halfWidth * 100).toFixed(2)} %`,
    );
    expect(reached.halfWidth).toBeGreaterThan(0.045);
    expect(reached.halfWidth).toBeLessThan(0.055);
    expect(daysToHalfWidth(reached, 1, 1, 0.06)).toBe(0);
  });
});

describe('upliftOf a report fed by the simulator', () => {
  const xp = (arm: 'h' | 'c', sticky = 1) => [{ id: 'id5-q3', arm, pct: 20, src: ['id5-sync.com'], st: sticky }];
  const callOf = (holdout: boolean, sticky = 1): AdCall =>
    parseAdCall({
      url: `/ac?nwid=7&eids=${b64url(holdout ? [UID2] : [ID5, UID2])}&xp=${b64url(xp(holdout ? 'h' : 'c', sticky))}`,
    });

  test('the report keeps the sums the statistics need: upliftOf equals the lift of the simulated calls', () => {
    const report = createReport();
    const t = PROVIDERS['id5-sync.com'];
    const sums = { h: { n: 0, sum: 0, sumSquares: 0 }, c: { n: 0, sum: 0, sumSquares: 0 } };
    const calls = { h: callOf(true), c: callOf(false) };
    const at = new Date('2026-01-05T12:00:00Z');
    for (const c of simulateCalls(t, random(11))) {
      const call = calls[c.holdout ? 'h' : 'c'];
      const s = sums[c.holdout ? 'h' : 'c'];
      report.add(call, at);
      // Revenue is counted to the millionth, as the report does.
      const revenue = Math.round(c.revenue * 1e6) / 1e6;
      report.addOutcome(call, { impression: c.impression, revenue }, at);
      s.n++;
      s.sum += revenue;
      s.sumSquares += revenue * revenue;
    }
    const [result] = upliftOf(report.toJSON());
    const direct = liftOf(sums.c, sums.h)!;
    expect(result.revenueLift!.lift).toBeCloseTo(direct.lift, 9);
    expect(result.revenueLift!.low).toBeCloseTo(direct.low, 9);
    expect(result).toMatchObject({
      networkId: 7,
      experimentId: 'id5-q3',
      providers: [{ providerId: 2, providerName: 'ID5' }],
      days: 1,
      trustworthy: true,
      leakage: { calls: 0, share: 0 },
      coverage: 1,
      perPageViewShare: 0,
      notes: [],
    });
    expect(result.holdout.calls + result.control.calls).toBe(12_000);
    expect(result.control.revenuePerMille).toBeCloseTo((sums.c.sum / sums.c.n) * 1000, 9);
  });

  test('a mismatched split, leakage and per-page-view arms are said in words', () => {
    const report = createReport();
    const at = new Date('2026-01-05T12:00:00Z');
    for (let i = 0; i < 1000; i++) report.add(callOf(i % 2 === 0, i % 4 === 0 ? 0 : 1), at); // 50 % held out of 20 %
    const leaky = parseAdCall({ url: `/ac?nwid=7&eids=${b64url([ID5])}&xp=${b64url(xp('h'))}` });
    report.add(leaky, at);
    report.addOutcome(leaky, { impression: true, revenue: 0.01 }, at);
    const [r] = upliftOf(report.toJSON());
    expect(r.trustworthy).toBe(false);
    expect(r.sampleRatio.mismatch).toBe(true);
    expect(r.leakage).toEqual({ calls: 1, share: 1 / 501 });
    expect(r.perPageViewShare).toBeCloseTo(250 / 1001, 10);
    expect(r.revenueLift).toBeNull();
    expect(r.notes).toEqual([
      expect.stringMatching(
        /^sample ratio mismatch: 50\.0 % of calls held out where 20\.0 % was declared .*not trustworthy$/,
      ),
      '1 held-out calls still carried a held-out source: the holdout leaks',
      '25.0 % of calls had their arm drawn per page view (no storage consent): their browsers mix arms',
      'no revenue in an arm yet: feed outcomes with addOutcome',
    ]);
  });
});
