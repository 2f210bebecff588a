/**
 * The statistics of holdout experiments, from a report's counts alone (no per-call data): per network and
 * experiment, the sample-ratio check, revenue and fill per 1,000 calls per arm, the lift of the held-out sources with
 * its 95 % interval, the holdout's leakage, and the days until the interval is as narrow as asked
 * (docs/ad-server.md#reading-the-uplift-report). Pure functions: they read a `ReportJson` and return data.
 *
 * The lift is control revenue per call over held-out revenue per call, minus one. Revenue per call is skewed (most
 * calls earn nothing, a few earn much), so the interval is built on the log of the ratio of the two means, with
 * each mean's variance from the sums the report keeps (revenue and its square): the delta method. On the log scale
 * the ratio's sampling distribution is close to normal at far smaller samples than the ratio itself, and the
 * interval stays asymmetric and above -100 %. A bootstrap would need every call's revenue, which the report does
 * not keep. The simulator in the tests checks the interval's coverage on fill × log-normal revenue.
 */
import type { ReportJson, ReportRow } from './report.js';
import { emptyArm } from './experiments.js';
import type { ExperimentArmCount } from './experiments.js';

/** Options of {@link upliftOf}. */
export interface UpliftOptions {
  /** The interval's half-width to reach, as a fraction of revenue per call (default 0.05: ±5 points of lift). */
  targetHalfWidth?: number;
  /** Only this network (null: calls without a network id); default every network. */
  networkId?: number | null;
  /** Only this experiment; default every one. */
  experimentId?: string;
}

/** One arm, summarised. */
export interface ArmSummary {
  calls: number;
  /** Share of the calls whose arm was kept per browser (the rest were drawn per page view). */
  stickyShare: number;
  /** Eids per call. */
  eidsPerCall: number;
  /** Calls that carried one of the experiment's sources (held-out arm: leakage). */
  callsWithSources: number;
  /** Outcomes fed back, impressions, wins, revenue (sums). */
  outcomes: number;
  impressions: number;
  wins: number;
  revenue: number;
  /** Revenue per 1,000 calls. */
  revenuePerMille: number;
  /** Impressions per 1,000 calls. */
  fillPerMille: number;
}

/** The sample-ratio check: the held-out calls against the declared share. */
export interface SampleRatio {
  declaredShare: number;
  observedShare: number;
  chiSquare: number;
  /** The chance of a split at least this far off the declared one if assignment worked; below 0.001: a mismatch. */
  pValue: number;
  mismatch: boolean;
}

/** The lift of the held-out sources and its 95 % interval. */
export interface Lift {
  /** Control revenue per call over held-out revenue per call, minus one (0.05: the sources are worth +5 %). */
  lift: number;
  /** 95 % interval of `lift`. */
  low: number;
  high: number;
  /** Half the interval's width. */
  halfWidth: number;
  /** Two-sided p-value of no lift. */
  pValue: number;
  /** The interval excludes 0. */
  significant: boolean;
  /** Standard error of the log of the ratio. */
  standardError: number;
}

/** One experiment of one network, analysed. */
export interface UpliftResult {
  networkId: number | null;
  experimentId: string;
  /** The providers of the held-out sources. */
  providers: { providerId: number; providerName: string }[];
  /** First and last day counted, and the number of days with calls. */
  from: string;
  to: string;
  days: number;
  sampleRatio: SampleRatio;
  holdout: ArmSummary;
  control: ArmSummary;
  /** Revenue lift; null when an arm has no revenue yet. */
  revenueLift: Lift | null;
  /** Fill lift (impressions per call, same method); null when an arm has no impression yet. */
  fillLift: Lift | null;
  /** Held-out calls that still carried a held-out source, and their share of the held-out calls: should be 0. */
  leakage: { calls: number; share: number };
  /** Calls whose arm was drawn per page view (no storage consent), of all calls. */
  perPageViewShare: number;
  /** In the control arm, the share of calls that carried one of the sources: the id's coverage. */
  coverage: number;
  /** The forwarding counts of the experiment's providers on this network (sent, withheld by reason). */
  forwarding: { sent: number; withheld: Record<string, number> };
  /** Calls per day, the mean of the days counted. */
  callsPerDay: number;
  /** The half-width asked for, and the further days at `callsPerDay` until it is reached (0: reached; null: unknown).
   */
  targetHalfWidth: number;
  daysToTarget: number | null;
  /** False when the sample ratio mismatches: the arms differ by more than chance, so the lift means nothing. */
  trustworthy: boolean;
  /** What a reader must know, in words. */
  notes: string[];
}

const Z95 = 1.959963984540054;
/** Below this, the sample-ratio check says the split is broken (the threshold experimentation platforms use). */
export const SAMPLE_RATIO_ALPHA = 0.001;

/** The complementary error function, to a relative error below 1.2e-7 (Chebyshev fit). */
export function erfc(x: number): number {
  const z = Math.abs(x);
  const t = 1 / (1 + 0.5 * z);
  const r =
    t *
    Math.exp(
      -z * z -
        1.26551223 +
        t *
          (1.00002368 +
            t *
              (0.37409196 +
                t *
                  (0.09678418 +
                    t *
                      (-0.18628806 +
                        t *
                          (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))),
    );
  return x >= 0 ? r : 2 - r;
}

/** The chi-square test of `holdout` of `holdout + control` calls against the declared held-out `share` (1 df). */
export function sampleRatioCheck(holdout: number, control: number, share: number): SampleRatio {
  const n = holdout + control;
  const eh = n * share;
  const ec = n - eh;
  const chiSquare = n && eh > 0 && ec > 0 ? (holdout - eh) ** 2 / eh + (control - ec) ** 2 / ec : 0;
  const pValue = Math.min(1, erfc(Math.sqrt(chiSquare / 2)));
  return {
    declaredShare: share,
    observedShare: n ? holdout / n : 0,
    chiSquare,
    pValue,
    mismatch: pValue < SAMPLE_RATIO_ALPHA,
  };
}

/** Sums of a per-call value over an arm: the calls, the sum and the sum of squares. */
export interface ArmSums {
  n: number;
  sum: number;
  sumSquares: number;
}

/**
 * The ratio of the control mean to the held-out mean, minus one, with its 95 % interval by the delta method on the
 * log of the ratio; null when either mean is 0 or an arm has fewer than 2 calls.
 */
export function liftOf(control: ArmSums, holdout: ArmSums): Lift | null {
  if (control.n < 2 || holdout.n < 2 || !(control.sum > 0) || !(holdout.sum > 0)) return null;
  const relVar = (a: ArmSums) => {
    const mean = a.sum / a.n;
    const variance = Math.max(0, (a.sumSquares - a.n * mean * mean) / (a.n - 1));
    return variance / a.n / (mean * mean);
  };
  const logRatio = Math.log(control.sum / control.n) - Math.log(holdout.sum / holdout.n);
  const se = Math.sqrt(relVar(control) + relVar(holdout));
  const low = Math.exp(logRatio - Z95 * se) - 1;
  const high = Math.exp(logRatio + Z95 * se) - 1;
  const pValue = se > 0 ? Math.min(1, erfc(Math.abs(logRatio) / se / Math.SQRT2)) : logRatio === 0 ? 1 : 0;
  return {
    lift: Math.exp(logRatio) - 1,
    low,
    high,
    halfWidth: (high - low) / 2,
    pValue,
    significant: low > 0 || high < 0,
    standardError: se,
  };
}

/**
 * Further days at `callsPerDay` (the same split) until the interval's half-width reaches `target`: the standard
 * error shrinks with the square root of the calls. 0 when reached; null when there is no lift or no traffic.
 */
export function daysToHalfWidth(lift: Lift | null, calls: number, callsPerDay: number, target: number): number | null {
  if (!lift || !(callsPerDay > 0)) return null;
  if (lift.halfWidth <= target) return 0;
  const ratio = 1 + lift.lift;
  // halfWidth = ratio × sinh(z × se): the standard error that gives `target`.
  const seTarget = Math.asinh(target / ratio) / Z95;
  const needed = calls * (lift.standardError / seTarget) ** 2;
  return Math.ceil((needed - calls) / callsPerDay);
}

const summary = (a: ExperimentArmCount): ArmSummary => ({
  calls: a.calls,
  stickyShare: a.calls ? a.stickyCalls / a.calls : 0,
  eidsPerCall: a.calls ? a.eids / a.calls : 0,
  callsWithSources: a.callsWithSources,
  outcomes: a.outcomes,
  impressions: a.impressions,
  wins: a.wins,
  revenue: a.revenue,
  revenuePerMille: a.calls ? (a.revenue / a.calls) * 1000 : 0,
  fillPerMille: a.calls ? (a.impressions / a.calls) * 1000 : 0,
});

const percent = (x: number) => `${(x * 100).toFixed(x < 0.01 ? 2 : 1)} %`;

interface Pooled {
  networkId: number | null;
  id: string;
  days: Set<string>;
  providers: Map<number, string>;
  share: number;
  holdout: ExperimentArmCount;
  control: ExperimentArmCount;
  rows: ReportRow[];
}

function addArm(into: ExperimentArmCount, a: ExperimentArmCount) {
  for (const k of Object.keys(a) as (keyof ExperimentArmCount)[]) into[k] += a[k];
}

/**
 * Every experiment of a report (day rows), pooled over its days per network, and analysed.
 * @example upliftOf(report.toJSON()).map((r) => [r.experimentId, r.revenueLift?.lift])
 */
export function upliftOf(report: ReportJson, options: UpliftOptions = {}): UpliftResult[] {
  const target = options.targetHalfWidth ?? 0.05;
  if (!(target > 0 && target < 10))
    throw new RangeError(`targetHalfWidth must be above 0 and below 10 (got ${target})`);
  const pooled = new Map<string, Pooled>();
  for (const row of report.rows) {
    if (row.hour !== undefined) continue; // hourly rows repeat the days' counts
    if (options.networkId !== undefined && row.networkId !== options.networkId) continue;
    for (const x of row.experiments ?? []) {
      if (options.experimentId !== undefined && x.id !== options.experimentId) continue;
      const key = `${row.networkId ?? ''}|${x.id}`;
      let p = pooled.get(key);
      if (!p) {
        p = {
          networkId: row.networkId,
          id: x.id,
          days: new Set(),
          providers: new Map(),
          share: 0,
          holdout: emptyArm(),
          control: emptyArm(),
          rows: [],
        };
        pooled.set(key, p);
      }
      const calls = x.holdout.calls + x.control.calls;
      p.share += x.declaredShare * calls; // weighted by calls, divided below
      addArm(p.holdout, x.holdout);
      addArm(p.control, x.control);
      if (calls) p.days.add(row.date);
      for (const v of x.providers) p.providers.set(v.providerId, v.providerName);
      p.rows.push(row);
    }
  }
  return [...pooled.values()]
    .sort((a, b) => (a.networkId ?? -1) - (b.networkId ?? -1) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .map((p) => analyse(p, target));
}

function analyse(p: Pooled, target: number): UpliftResult {
  const { holdout: h, control: c } = p;
  const calls = h.calls + c.calls;
  const share = calls ? p.share / calls : 0;
  const srm = sampleRatioCheck(h.calls, c.calls, share);
  const sums = (a: ExperimentArmCount, what: 'revenue' | 'fill'): ArmSums =>
    what === 'revenue'
      ? { n: a.calls, sum: a.revenue, sumSquares: a.revenueSquares }
      : { n: a.calls, sum: a.impressions, sumSquares: a.impressions }; // 0/1 per call: its square is itself
  const revenueLift = liftOf(sums(c, 'revenue'), sums(h, 'revenue'));
  const fillLift = liftOf(sums(c, 'fill'), sums(h, 'fill'));
  const days = [...p.days].sort();
  const callsPerDay = days.length ? calls / days.length : 0;
  const providerIds = new Set(p.providers.keys());
  const forwarding = { sent: 0, withheld: {} as Record<string, number> };
  for (const row of p.rows)
    for (const f of row.forwarding ?? []) {
      if (!providerIds.has(f.providerId)) continue;
      forwarding.sent += f.sent;
      for (const [reason, n] of Object.entries(f.withheld))
        forwarding.withheld[reason] = (forwarding.withheld[reason] ?? 0) + n;
    }
  const notes: string[] = [];
  if (srm.mismatch)
    notes.push(
      `sample ratio mismatch: ${percent(srm.observedShare)} of calls held out where ${percent(share)} was declared ` +
        `(p = ${srm.pValue.toExponential(1)}); the arms differ by more than chance, so the lift is not trustworthy`,
    );
  if (h.callsWithSources)
    notes.push(`${h.callsWithSources} held-out calls still carried a held-out source: the holdout leaks`);
  const perPageView = calls ? (calls - h.stickyCalls - c.stickyCalls) / calls : 0;
  if (perPageView > 0)
    notes.push(
      `${percent(perPageView)} of calls had their arm drawn per page view (no storage consent): their browsers mix arms`,
    );
  if (!revenueLift) notes.push('no revenue in an arm yet: feed outcomes with addOutcome');
  const outcomes = h.outcomes + c.outcomes;
  if (outcomes > calls)
    notes.push(`${outcomes} outcomes for ${calls} calls: addOutcome was called more than once per call`);
  return {
    networkId: p.networkId,
    experimentId: p.id,
    providers: [...p.providers]
      .sort((a, b) => a[0] - b[0])
      .map(([providerId, providerName]) => ({ providerId, providerName })),
    from: days[0] ?? '',
    to: days[days.length - 1] ?? '',
    days: days.length,
    sampleRatio: srm,
    holdout: summary(h),
    control: summary(c),
    revenueLift,
    fillLift,
    leakage: { calls: h.callsWithSources, share: h.calls ? h.callsWithSources / h.calls : 0 },
    perPageViewShare: perPageView,
    coverage: c.calls ? c.callsWithSources / c.calls : 0,
    forwarding,
    callsPerDay,
    targetHalfWidth: target,
    daysToTarget: daysToHalfWidth(revenueLift, calls, callsPerDay, target),
    trustworthy: !srm.mismatch,
    notes,
  };
}
