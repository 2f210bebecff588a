// A traffic simulator for holdout experiments: ad calls assigned to the held-out arm with a chosen share, each
// filled with a chosen probability and priced log-normally (revenue per call is mostly 0 with a long tail), the
// held-out sources adding a known lift to fill and price in the control arm. Seeded, so every run is the same.
import type { ArmSums } from '../../../src/adserver/index.js';

/** A seeded generator of uniform numbers in [0, 1): the simulator's own (mulberry32), so a run repeats. */
export { prng as random } from '../../../src/simulator/seed.js';

/** One simulated experiment's traffic. */
export interface Traffic {
  calls: number;
  /** The share of calls actually held out (the tag's assignment). */
  share: number;
  /** Fill of the held-out arm, and the control arm's relative fill gain from the ids (0.05: +5 %). */
  fill: number;
  fillGain: number;
  /** Log-normal price per filled call: the log's mean and standard deviation; the control's relative price gain. */
  mu: number;
  sigma: number;
  priceGain: number;
}

/** The lift of control over held-out revenue per call that the traffic's parameters make. */
export const trueLift = (t: Traffic) => (1 + t.fillGain) * (1 + t.priceGain) - 1;

/** One call: its arm, whether it filled, its revenue. */
export interface SimulatedCall {
  holdout: boolean;
  impression: boolean;
  revenue: number;
}

/** The calls of one experiment, one at a time (for feeding a real report). */
export function* simulateCalls(t: Traffic, next: () => number): Generator<SimulatedCall> {
  for (let i = 0; i < t.calls; i++) {
    const holdout = next() < t.share;
    const fill = holdout ? t.fill : t.fill * (1 + t.fillGain);
    if (next() >= fill) {
      yield { holdout, impression: false, revenue: 0 };
      continue;
    }
    const price = Math.exp(t.mu + t.sigma * normal(next)) * (holdout ? 1 : 1 + t.priceGain);
    yield { holdout, impression: true, revenue: price };
  }
}

/** A standard normal draw (Box-Muller). */
const normal = (next: () => number) => Math.sqrt(-2 * Math.log(1 - next())) * Math.cos(2 * Math.PI * next());

/**
 * A binomial draw of `n` trials of chance `p`: exact (one uniform per trial) below 50 trials, the normal
 * approximation, rounded and clamped, above (n·p·(1-p) is in the hundreds in every scenario, where it is within a
 * fraction of a percent of the exact distribution), which keeps a thousand experiments of 20,000 calls to a second.
 */
export function binomial(n: number, p: number, next: () => number): number {
  if (n < 50) {
    let k = 0;
    for (let i = 0; i < n; i++) if (next() < p) k++;
    return k;
  }
  const k = Math.round(n * p + Math.sqrt(n * p * (1 - p)) * normal(next));
  return Math.min(n, Math.max(0, k));
}

/**
 * The sums the report keeps per arm (calls, revenue, revenue squared, impressions), as {@link simulateCalls} would
 * make them, drawn arm by arm: the held-out calls, each arm's filled calls, then a price per filled call.
 */
export function simulateSums(t: Traffic, next: () => number): { holdout: Sums; control: Sums } {
  const nh = binomial(t.calls, t.share, next);
  const arm = (n: number, fill: number, gain: number): Sums => {
    const k = binomial(n, Math.min(1, fill), next);
    let sum = 0;
    let sumSquares = 0;
    for (let i = 0; i < k; i++) {
      const price = Math.exp(t.mu + t.sigma * normal(next)) * (1 + gain);
      sum += price;
      sumSquares += price * price;
    }
    return { revenue: { n, sum, sumSquares }, fill: { n, sum: k, sumSquares: k } };
  };
  return {
    holdout: arm(nh, t.fill, 0),
    control: arm(t.calls - nh, t.fill * (1 + t.fillGain), t.priceGain),
  };
}

export interface Sums {
  revenue: ArmSums;
  fill: ArmSums;
}
