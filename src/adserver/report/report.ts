/**
 * Report dimensions (docs/wire-format.md#report-dimensions), aggregated per UTC day (and hour) and network:
 * Extended Ids (calls carrying each provider's eids), Has User Uid and Has User Pid (calls with / without).
 * Readable as JSON and CSV (the CSV also carries which id served as the user id: uid, pid or none).
 */
import { providerById, providerForSource } from '../../core/index.js';
import { decisionReason } from '../forward/index.js';
import type { ForwardingExplanation } from '../forward/index.js';
import { dmpIds } from './dmp.js';
import type { DmpConfig } from './dmp.js';
import { reportCSV } from './report-csv.js';
import type { AdCall } from '../parse/index.js';
import { providerIdsOf } from './providers.js';
import { given, OptionsError, positiveOption } from '../common/index.js';
import {
  admitExperiment,
  DEFAULT_MAX_EXPERIMENTS,
  experimentCountersOf,
  experimentsOf,
  outcomeCountersOf,
} from './experiments.js';
import type {
  CallOutcome,
  Counters,
  ForwardingCount,
  ReportGranularity,
  ReportJson,
  ReportRow,
} from './report-types.js';
export type {
  Counters,
  ExtendedIdsCount,
  ForwardingCount,
  ReportGranularity,
  ReportJson,
  ReportRow,
  WithWithout,
} from './report-types.js';

/** What a report read returns. */
export interface ReportReadOptions {
  /** `'day'` (default) or `'hour'`. */
  granularity?: ReportGranularity;
}

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
 * The counter fields one ad call increments, shared by the in-memory and the Redis report: `calls`, `p:<provider id>`
 * per provider present, `noeids`, `uid` and `pid` (carried), `eff:uid|pid|none` (the id used as the user id).
 */
export function countersOf(call: AdCall, dmps: readonly DmpConfig[] = []): string[] {
  const ids = providerIdsOf(call.eids);
  const out = ['calls'];
  for (let i = 0; i < ids.length; i++) out.push(providerField(ids[i]));
  if (ids.length === 0) out.push('noeids');
  if (call.uid !== undefined) out.push('uid');
  if (call.pid !== undefined) out.push('pid');
  out.push(call.uid !== undefined ? 'eff:uid' : call.pid !== undefined ? 'eff:pid' : 'eff:none');
  // Has DMP Id: `dmp:<name>` when the call carries that DMP's preferred provider's id.
  if (dmps.length)
    for (const [dmp, id] of Object.entries(dmpIds(call, dmps))) if (id !== undefined) out.push(`dmp:${dmp}`);
  return out;
}

/** Longest partner id kept in a forwarding counter (longer ones are cut): counters are report keys. */
const MAX_PARTNER_KEY = 128;

/**
 * The counter fields of one call's forwarding decisions, one per eid and partner:
 * `fw:<partner>\t<provider id>\t<reason>` (reason `sent`, or why it was withheld: {@link decisionReason}).
 * Bounded: partners are the server's own, providers the registry's ids, reasons come from the policy's rules.
 */
export function forwardingCountersOf(explanation: ForwardingExplanation): string[] {
  const out: string[] = [];
  for (const p of explanation.partners) {
    const partner = p.partner.slice(0, MAX_PARTNER_KEY).replace(/[\t\n]/g, ' ');
    for (const [list, kept] of [
      [p.kept, true],
      [p.removed, false],
    ] as const)
      for (const d of list)
        out.push(`fw:${partner}\t${providerForSource(d.eid.source).id}\t${decisionReason(d, p, kept)}`);
  }
  return out;
}

/** The forwarding lines of a row from its `fw:` counters (see {@link forwardingCountersOf}). */
function forwardingOf(counters: Counters): ForwardingCount[] | undefined {
  const lines = new Map<string, ForwardingCount>();
  for (const [field, n] of counters) {
    if (!field.startsWith('fw:')) continue;
    const [partner, id, reason] = field.slice(3).split('\t');
    const providerId = Number(id);
    const key = `${partner}\t${id}`;
    let line = lines.get(key);
    if (!line) {
      const providerName = providerById(providerId).name;
      lines.set(key, (line = { partner, providerId, providerName, sent: 0, withheld: {} }));
    }
    if (reason === 'sent') line.sent += n;
    else line.withheld[reason] = (line.withheld[reason] ?? 0) + n;
  }
  return lines.size
    ? [...lines.values()].sort((a, b) => a.partner.localeCompare(b.partner) || a.providerId - b.providerId)
    : undefined;
}

// `p:<id>` of the registry's ids, made once: countersOf runs on every ad call.
const PROVIDER_FIELDS = Array.from({ length: 64 }, (_, id) => `p:${id}`);
const providerField = (id: number) => PROVIDER_FIELDS[id] ?? `p:${id}`;

/** A report row from one period's counters (`period`: `YYYY-MM-DD` or `YYYY-MM-DDTHH`). */
export function rowOf(
  period: string,
  networkId: number | null,
  counters: Counters,
  dmps: readonly DmpConfig[] = [],
): ReportRow {
  const n = (field: string) => counters.get(field) ?? 0;
  const calls = n('calls');
  const providers = [...counters.keys()].filter((k) => k.startsWith('p:')).map((k) => Number(k.slice(2)));
  const row: ReportRow = {
    date: period.slice(0, 10),
    networkId,
    calls,
    extendedIds: providers
      .sort((a, c) => a - c)
      .map((providerId) => ({ providerId, providerName: providerById(providerId).name, calls: n(`p:${providerId}`) })),
    callsWithoutEids: n('noeids'),
    hasUserUid: { with: n('uid'), without: calls - n('uid') },
    hasUserPid: { with: n('pid'), without: calls - n('pid') },
    userId: { uid: n('eff:uid'), pid: n('eff:pid'), none: n('eff:none') },
  };
  const forwarding = forwardingOf(counters);
  if (forwarding) row.forwarding = forwarding;
  const experiments = experimentsOf(counters);
  if (experiments) row.experiments = experiments;
  if (dmps.length)
    row.hasDmpId = Object.fromEntries(
      dmps.map((d) => [d.dmp, { with: n(`dmp:${d.dmp}`), without: calls - n(`dmp:${d.dmp}`) }]),
    );
  if (period.length <= 10) return row;
  const { date, ...rest } = row;
  return { date, hour: Number(period.slice(11, 13)), ...rest };
}

/** Sorts rows oldest period first, then by network id (no network first). */
export function sortRows(rows: ReportRow[]): ReportRow[] {
  return rows.sort(
    (a, b) =>
      a.date.localeCompare(b.date) || (a.hour ?? 0) - (b.hour ?? 0) || (a.networkId ?? -1) - (b.networkId ?? -1),
  );
}

let lastHour = { start: NaN, day: '', hour: '' };

/** UTC day `YYYY-MM-DD` and hour `YYYY-MM-DDTHH` of a time (a Date, or milliseconds since the epoch). */
export function periodsOf(d: Date | number): { day: string; hour: string } {
  const t = typeof d === 'number' ? d : d.getTime();
  // Calls arrive in the same hour: reuse its strings (toISOString costs more than the rest of report.add).
  if (!(t >= lastHour.start && t < lastHour.start + 3_600_000)) {
    const iso = new Date(t).toISOString();
    lastHour = { start: t - (t % 3_600_000), day: iso.slice(0, 10), hour: iso.slice(0, 13) };
  }
  return lastHour;
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
   * Adds one (or `amounts[i]`) to each of `fields` of the call's network, in its day and hour; false when its day is
   * full. An experiment's fields only while the network has room for the experiment.
   */
  function count(call: AdCall, fields: readonly string[], at: Date | undefined, amounts?: readonly number[]): boolean {
    const { day, hour } = periodsOf(at ?? Date.now());
    const network = networkKey(call.networkId);
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
      const fields = countersOf(call, dmps);
      if (!call.experiments) {
        if (!count(call, fields, at)) droppedCalls++;
        return;
      }
      const amounts = fields.map(() => 1);
      experimentCountersOf(call, fields, amounts);
      if (!count(call, fields, at, amounts)) droppedCalls++;
    },
    addOutcome(call, outcome, at) {
      const fields: string[] = [];
      const amounts: number[] = [];
      outcomeCountersOf(call, outcome, fields, amounts);
      if (fields.length) count(call, fields, at, amounts);
    },
    addForwarding(call, explanation, at) {
      count(call, forwardingCountersOf(explanation), at);
    },
    toJSON: (o) => ({ rows: rows(o?.granularity), droppedCalls }),
    toCSV: (o) => reportCSV(rows(o?.granularity), o?.granularity),
  };
}

export { reportCSV };
