/**
 * The holdout experiments in the report (docs/ad-server.md#holdout-experiments): per network, experiment and arm,
 * the calls (sticky or drawn per page view), the eids they carried, the calls that carried one of the held-out
 * sources (in the held-out arm: leakage, which should be 0), and the outcomes the ad server feeds back
 * (`addOutcome`: impressions, wins, revenue and its sum of squares, from which uplift.ts computes the statistics).
 * The counter fields are shared by the in-memory and the Redis report.
 */
import { providerById, providerForSource } from '../../core/index.js';
import { OptionsError, given } from '../common/index.js';
import type { AdCall } from '../parse/index.js';
import type { CallOutcome, Counters, ExperimentArmCount, ExperimentCount } from './report-types.js';
export type { CallOutcome, ExperimentArmCount, ExperimentCount } from './report-types.js';

/** The largest revenue one call's outcome can claim: anything larger is a unit mistake, refused. */
export const MAX_CALL_REVENUE = 1_000_000;
/** Experiments counted per network and period by default (`maxExperimentsPerNetwork`). */
export const DEFAULT_MAX_EXPERIMENTS = 100;

const ARMS = { holdout: 'h', control: 'c' } as const;
/** The counter suffixes of one arm (field `x:<id>\t<h|c>\t<suffix>`). `q~`: a sum of non-integers (see below). */
const METRIC = {
  calls: 'c',
  stickyCalls: 's',
  eids: 'e',
  callsWithSources: 'l',
  outcomes: 'o',
  impressions: 'i',
  wins: 'w',
  revenue: 'r',
  revenueSquares: 'q~',
} as const;

/**
 * The fields one call adds to, and by how much: per experiment `x:<id>\t<arm>\t<metric>`, the share declared
 * (`x:<id>\t*\tpct`, in basis points, summed) and the providers held out (`x:<id>\t*\tv<provider id>`). Provider ids
 * come from the registry, so an experiment has a bounded number of fields whatever sources the caller names.
 */
export function experimentCountersOf(call: AdCall, fields: string[], amounts: number[]): void {
  const xs = call.experiments;
  if (!xs) return;
  for (const x of xs) {
    const base = `x:${x.id}\t`;
    const arm = `${base}${ARMS[x.arm]}\t`;
    const push = (f: string, n: number) => {
      fields.push(f);
      amounts.push(n);
    };
    push(`${arm}c`, 1);
    if (x.sticky) push(`${arm}s`, 1);
    if (call.eids.length) push(`${arm}e`, call.eids.length);
    if (call.eids.some((e) => x.sources.includes(e.source.toLowerCase()))) push(`${arm}l`, 1);
    push(`${base}*\tpct`, Math.round(x.share * 10_000));
    const providers = new Set(x.sources.map((s) => providerForSource(s).id));
    for (const id of providers) push(`${base}*\tv${id}`, 1);
  }
}

/** Checks an outcome: a typed error naming the field when it is not one. */
function checkOutcome(outcome: CallOutcome): Required<CallOutcome> {
  if (typeof outcome !== 'object' || outcome === null)
    throw new OptionsError('outcome', `must be an object (got ${given(outcome)})`);
  const { impression = false, revenue = 0 } = outcome;
  const won = outcome.won ?? impression;
  if (typeof impression !== 'boolean')
    throw new OptionsError('outcome.impression', `must be a boolean (got ${given(impression)})`);
  if (typeof won !== 'boolean') throw new OptionsError('outcome.won', `must be a boolean (got ${given(won)})`);
  if (typeof revenue !== 'number' || !(revenue >= 0 && revenue <= MAX_CALL_REVENUE))
    throw new OptionsError('outcome.revenue', `must be a number from 0 to ${MAX_CALL_REVENUE} (got ${given(revenue)})`);
  return { impression, revenue, won };
}

/**
 * The fields one outcome adds to, per experiment of the call: outcomes, impressions, wins, the revenue in millionths
 * (an integer: exact in Redis whichever process adds it) and its square (a sum of floats, `q~`: Redis adds it with
 * HINCRBYFLOAT, since squares of millionths overflow 64-bit integers on a large day).
 */
export function outcomeCountersOf(call: AdCall, outcome: CallOutcome, fields: string[], amounts: number[]): void {
  const { impression, revenue, won } = checkOutcome(outcome);
  const xs = call.experiments;
  if (!xs) return;
  const micros = Math.round(revenue * 1e6);
  for (const x of xs) {
    const arm = `x:${x.id}\t${ARMS[x.arm]}\t`;
    fields.push(`${arm}o`);
    amounts.push(1);
    if (impression) {
      fields.push(`${arm}i`);
      amounts.push(1);
    }
    if (won) {
      fields.push(`${arm}w`);
      amounts.push(1);
    }
    if (micros) {
      fields.push(`${arm}r`, `${arm}q~`);
      amounts.push(micros, micros * micros);
    }
  }
}

/** The experiment of a field (`x:<id>\t…`), or undefined when it is no experiment field. */
export const experimentOfField = (field: string): string | undefined =>
  field.startsWith('x:') ? field.slice(2, field.indexOf('\t')) : undefined;

/** An arm with nothing counted. */
export const emptyArm = (): ExperimentArmCount => ({
  calls: 0,
  stickyCalls: 0,
  eids: 0,
  callsWithSources: 0,
  outcomes: 0,
  impressions: 0,
  wins: 0,
  revenue: 0,
  revenueSquares: 0,
});
const METRIC_OF = new Map<string, keyof ExperimentArmCount>(
  Object.entries(METRIC).map(([k, v]) => [v, k as keyof ExperimentArmCount]),
);

/** The experiment lines of a row from its `x:` counters, by experiment name; undefined when there are none. */
export function experimentsOf(counters: Counters): ExperimentCount[] | undefined {
  const byId = new Map<string, ExperimentCount & { pct: number }>();
  for (const [field, n] of counters) {
    const id = experimentOfField(field);
    if (id === undefined) continue;
    const [, arm, metric] = field.split('\t');
    let x = byId.get(id);
    if (!x)
      byId.set(id, (x = { id, declaredShare: 0, providers: [], holdout: emptyArm(), control: emptyArm(), pct: 0 }));
    if (arm === '*') {
      if (metric === 'pct') x.pct += n;
      else if (metric.startsWith('v')) {
        const providerId = Number(metric.slice(1));
        x.providers.push({ providerId, providerName: providerById(providerId).name, calls: n });
      }
      continue;
    }
    const key = METRIC_OF.get(metric);
    if (key) (arm === 'h' ? x.holdout : x.control)[key] += n;
  }
  if (!byId.size) return undefined;
  return [...byId.values()]
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .map(({ pct, ...x }) => {
      const calls = x.holdout.calls + x.control.calls;
      for (const arm of [x.holdout, x.control]) {
        arm.revenue /= 1e6;
        arm.revenueSquares /= 1e12;
      }
      x.providers.sort((a, b) => a.providerId - b.providerId);
      return { ...x, declaredShare: calls ? pct / 10_000 / calls : 0 };
    });
}

/**
 * Whether a counter may be added to, under the cap of experiments per network and period (in-memory counters: the
 * Redis report applies the same rule inside Redis). Marks the experiment as counted when it is admitted.
 */
export function admitExperiment(counters: Counters, field: string, max: number): boolean {
  const id = experimentOfField(field);
  if (id === undefined) return true;
  const mark = `#x:${id}`;
  if (counters.has(mark)) return true;
  const n = counters.get('#xn') ?? 0;
  if (n >= max) return false;
  counters.set(mark, 1);
  counters.set('#xn', n + 1);
  return true;
}
