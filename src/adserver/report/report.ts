/**
 * Report dimensions (docs/wire-format.md#report-dimensions), aggregated per UTC day (and hour) and network:
 * Extended Ids (calls carrying each provider's eids), Has User Uid and Has User Pid (calls with / without).
 * Readable as JSON and CSV (the CSV also carries which id served as the user id: uid, pid or none). This is the
 * in-memory report: which counters a fact adds to is counters.ts's rule, shared with the Redis report.
 */
import type { ForwardingExplanation } from '../forward/index.js';
import type { DmpConfig } from './dmp.js';
import { reportCSV } from './report-csv.js';
import type { AdCall } from '../parse/index.js';
import { given, OptionsError, positiveOption } from '../common/index.js';
import { admitExperiment, DEFAULT_MAX_EXPERIMENTS } from './experiments.js';
import { callIncrements, forwardingIncrements, outcomeIncrements, periodsOf, rowOf, sortRows } from './counters.js';
import type { CounterIncrements } from './counters.js';
import type {
  CallOutcome,
  Counters,
  ReportGranularity,
  ReportJson,
  ReportReadOptions,
  ReportRow,
} from './report-types.js';
export type {
  Counters,
  ExtendedIdsCount,
  ForwardingCount,
  ReportGranularity,
  ReportJson,
  ReportReadOptions,
  ReportRow,
  WithWithout,
} from './report-types.js';

/** Caps of the in-memory report. */
export interface ReportOptions {
  /** Days kept; older days are pruned as new ones arrive. Default 90. */
  maxDays?: number;
  /** Hours kept for hourly rows; older hours are pruned as new ones arrive. Default 168 (7 days). */
  maxHours?: number;
  /** Networks kept per day (and per hour); calls of further networks are counted in `droppedCalls`. Default 10,000. */
  maxNetworksPerDay?: number;
  /** DMPs and their preferred providers (parseDmpConfig): adds the Has DMP Id count per DMP. */
  dmps?: readonly DmpConfig[];
  /**
   * Experiments counted per network and day (and hour): their names are the caller's, so further ones are not
   * counted (the calls themselves are). Default 100.
   */
  maxExperimentsPerNetwork?: number;
}

/** An in-memory report you feed with ad calls and read as JSON or CSV. */
export interface Report {
  /** Counts one ad call, on the UTC day and hour of `at` (default now: the server's clock, not the tag's timestamp). */
  add(call: AdCall, at?: Date): void;
  /**
   * Counts one call's forwarding decisions (`policy.explain(call, partners)`): per partner and provider, the eids
   * sent and those withheld by reason. Counted apart from `add` (the call itself is counted there).
   */
  addForwarding(call: AdCall, explanation: ForwardingExplanation, at?: Date): void;
  /**
   * Counts what the ad server made of one call, in each experiment the call is in (`call.experiments`): the outcome,
   * an impression, a win, the call's revenue. Once per call, with the call's total revenue, on the day and hour of
   * `at` (default now). A call in no experiment counts nothing. Throws an `OptionsError` naming the field of an
   * outcome that is not one (a negative or non-finite revenue).
   * @example report.addOutcome(call, { impression: true, revenue: 0.0042 })
   */
  addOutcome(call: AdCall, outcome: CallOutcome, at?: Date): void;
  /** The report as plain data, per day (default) or per hour. */
  toJSON(options?: ReportReadOptions): ReportJson;
  /**
   * The report as CSV: `date,network_id,dimension,key,label,calls` (hourly: `date,hour,network_id,…`), one line per
   * count.
   */
  toCSV(options?: ReportReadOptions): string;
}

/**
 * The key a report files a network's counters under: `#<id>`, or `#` for calls without a network id. Network ids
 * come from the caller, and V8 hashes small integers (and strings of digits alike) without a seed, so 20,000
 * chosen ids can all land in one bucket of a Map keyed by them: keyed by a string that is no number, the hash is
 * seeded per process and the cost stays flat (docs/ad-server.md "Caps").
 */
export const networkKey = (networkId: number | undefined): string => (networkId === undefined ? '#' : `#${networkId}`);

/** The network id of a {@link networkKey} (null for calls without one). */
export const networkOfKey = (key: string): number | null => (key === '#' ? null : Number(key.slice(1)));

/**
 * Creates an in-memory report.
 * @example const report = createReport(); report.add(call); res.end(report.toCSV());
 */
export function createReport(options: ReportOptions = {}): Report {
  const maxNetworks = positiveOption(options.maxNetworksPerDay ?? 10_000, 'maxNetworksPerDay', true);
  // Per period, the networks' counters by networkKey: a string, never the network id itself (see networkKey).
  const periods = {
    day: new Map<string, Map<string, Counters>>(),
    hour: new Map<string, Map<string, Counters>>(),
  };
  const keep = {
    day: positiveOption(options.maxDays ?? 90, 'maxDays', true),
    hour: positiveOption(options.maxHours ?? 168, 'maxHours', true),
  };
  if (options.dmps !== undefined && !Array.isArray(options.dmps)) {
    throw new OptionsError('dmps', `must be an array from parseDmpConfig (got ${given(options.dmps)})`);
  }
  const dmps = options.dmps ?? [];
  const maxExperiments = positiveOption(
    options.maxExperimentsPerNetwork ?? DEFAULT_MAX_EXPERIMENTS,
    'maxExperimentsPerNetwork',
    true,
  );
  let droppedCalls = 0;

  function countersFor(granularity: ReportGranularity, period: string, network: string): Counters | undefined {
    const map = periods[granularity];
    let p = map.get(period);
    if (!p) {
      p = new Map();
      map.set(period, p);
      if (map.size > keep[granularity]) {
        const oldest = [...map.keys()].sort().slice(0, map.size - keep[granularity]);
        for (const k of oldest) map.delete(k);
        if (!map.has(period)) return undefined;
      }
    }
    let c = p.get(network);
    if (!c) {
      if (p.size >= maxNetworks) return undefined;
      c = new Map();
      p.set(network, c);
    }
    return c;
  }

  function rows(granularity: ReportGranularity = 'day'): ReportRow[] {
    const out: ReportRow[] = [];
    for (const [period, networks] of periods[granularity])
      for (const [network, c] of networks) out.push(rowOf(period, networkOfKey(network), c, dmps));
    return sortRows(out);
  }

  /**
   * Adds a fact's increments to its network's counters in the day and hour of `at`; false when the day is full. An
   * experiment's fields only while the network has room for the experiment.
   */
  function count({ networkId, fields, amounts }: CounterIncrements, at: Date | undefined): boolean {
    const { day, hour } = periodsOf(at ?? Date.now());
    const network = networkKey(networkId);
    const d = countersFor('day', day, network);
    if (!d) return false;
    const h = countersFor('hour', hour, network);
    for (let i = 0; i < fields.length; i++) {
      const field = fields[i];
      const n = amounts?.[i] ?? 1;
      if (admitExperiment(d, field, maxExperiments)) d.set(field, (d.get(field) ?? 0) + n);
      if (h && admitExperiment(h, field, maxExperiments)) h.set(field, (h.get(field) ?? 0) + n);
    }
    return true;
  }

  return {
    add(call, at) {
      if (!count(callIncrements(call, dmps), at)) droppedCalls++;
    },
    addOutcome(call, outcome, at) {
      const increments = outcomeIncrements(call, outcome);
      if (increments.fields.length) count(increments, at);
    },
    addForwarding(call, explanation, at) {
      count(forwardingIncrements(call, explanation), at);
    },
    toJSON: (o) => ({ rows: rows(o?.granularity), droppedCalls }),
    toCSV: (o) => reportCSV(rows(o?.granularity), o?.granularity),
  };
}
