/**
 * The report's counters, apart from where they are kept: which counters one fact (an ad call, its outcome, its
 * forwarding decisions) adds to and by how much ({@link callIncrements}, {@link outcomeIncrements},
 * {@link forwardingIncrements}), and the rows read back from them ({@link rowOf}). The in-memory and the Redis
 * report both count through them, so a fact counts the same
 * wherever it lands; each keeps the counters of a network per UTC day and hour ({@link periodsOf}).
 *
 * Counter fields: `calls`, `p:<provider id>` per provider present, `noeids`, `uid` and `pid` (carried),
 * `eff:uid|pid|none` (the id used as the user id), `dmp:<name>` (Has DMP Id), `fw:<partner>\t<provider id>\t<reason>`
 * (forwarding decisions), and the experiments' `x:<id>\t…` (experiments.ts).
 */
import { providerById, providerForSource } from '../../core/index.js';
import { decisionReason } from '../forward/index.js';
import type { ForwardingExplanation } from '../forward/index.js';
import type { AdCall } from '../parse/index.js';
import { dmpIds } from './dmp.js';
import type { DmpConfig } from './dmp.js';
import { experimentCountersOf, experimentsOf, outcomeCountersOf } from './experiments.js';
import { providerIdsOf } from './providers.js';
import type { CallOutcome, Counters, ForwardingCount, ReportRow } from './report-types.js';

/** The counters one fact adds to, in the day and the hour it is counted on, under its call's network. */
export interface CounterIncrements {
  /** The call's network; undefined for calls without a valid network id (their own row). */
  networkId: number | undefined;
  /** Counter fields, each once. */
  fields: string[];
  /** What each of `fields` adds, by position; undefined when each adds one (the common case, no array built). */
  amounts: number[] | undefined;
}

// The rule both reports follow, one function per fact a report is told. Pure (no clock, no state): the day and hour
// come from the caller ({@link periodsOf}).

/** What one ad call adds to: its own counters (see the module's comment) and those of its experiments. */
export function callIncrements(call: AdCall, dmps: readonly DmpConfig[] = []): CounterIncrements {
  const fields = countersOf(call, dmps);
  if (!call.experiments) return { networkId: call.networkId, fields, amounts: undefined };
  const amounts = fields.map(() => 1);
  experimentCountersOf(call, fields, amounts);
  return { networkId: call.networkId, fields, amounts };
}

/**
 * What the outcome of a call adds to, in each experiment of the call (nothing for a call in none). Throws an
 * `OptionsError` naming the field of an outcome that is not one.
 */
export function outcomeIncrements(call: AdCall, outcome: CallOutcome): CounterIncrements {
  const fields: string[] = [];
  const amounts: number[] = [];
  outcomeCountersOf(call, outcome, fields, amounts);
  return { networkId: call.networkId, fields, amounts };
}

/** What a call's forwarding decisions add to: one counter per eid and partner (the call itself is counted apart). */
export function forwardingIncrements(call: AdCall, explanation: ForwardingExplanation): CounterIncrements {
  return { networkId: call.networkId, fields: forwardingCountersOf(explanation), amounts: undefined };
}

/** The call's own counter fields (without its experiments'): see the module's comment. */
function countersOf(call: AdCall, dmps: readonly DmpConfig[]): string[] {
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

// `p:<id>` of the registry's ids, made once: countersOf runs on every ad call.
const PROVIDER_FIELDS = Array.from({ length: 64 }, (_, id) => `p:${id}`);
const providerField = (id: number) => PROVIDER_FIELDS[id] ?? `p:${id}`;

/** Longest partner id kept in a forwarding counter (longer ones are cut): counters are report keys. */
const MAX_PARTNER_KEY = 128;

/**
 * The counter fields of one call's forwarding decisions, one per eid and partner:
 * `fw:<partner>\t<provider id>\t<reason>` (reason `sent`, or why it was withheld: {@link decisionReason}).
 * Bounded: partners are the server's own, providers the registry's ids, reasons come from the policy's rules.
 */
function forwardingCountersOf(explanation: ForwardingExplanation): string[] {
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
