/**
 * The report's CSV: one line per count of every row (counters.ts, rowOf), shared by the in-memory and the Redis report,
 * through the project's one CSV writer.
 */
import { csvRow } from '../../core/csv.js';
import type { ReportGranularity, ReportRow } from './report-types.js';

/** The report's CSV (RFC 4180, formulas defused), the one writer for every report: one line per count. */
export function reportCSV(rows: readonly ReportRow[], granularity: ReportGranularity = 'day'): string {
  const hourly = granularity === 'hour';
  const lines = [
    csvRow(
      hourly
        ? ['date', 'hour', 'network_id', 'dimension', 'key', 'label', 'calls']
        : ['date', 'network_id', 'dimension', 'key', 'label', 'calls'],
    ),
  ];
  const line = (r: ReportRow, dimension: string, key: string | number, label: string, calls: number) =>
    lines.push(
      csvRow(
        hourly
          ? [r.date, r.hour ?? null, r.networkId, dimension, key, label, calls]
          : [r.date, r.networkId, dimension, key, label, calls],
      ),
    );
  for (const r of rows) {
    line(r, 'Ad Calls', 'all', 'all ad calls', r.calls);
    for (const p of r.extendedIds) line(r, 'Extended Ids', p.providerId, p.providerName, p.calls);
    line(r, 'Extended Ids', 'none', 'no extended id', r.callsWithoutEids);
    line(r, 'Has User Uid', 'yes', 'with uid', r.hasUserUid.with);
    line(r, 'Has User Uid', 'no', 'without uid', r.hasUserUid.without);
    line(r, 'Has User Pid', 'yes', 'with pid', r.hasUserPid.with);
    line(r, 'Has User Pid', 'no', 'without pid', r.hasUserPid.without);
    line(r, 'User Id', 'uid', 'uid (overrides pid)', r.userId.uid);
    line(r, 'User Id', 'pid', 'pid', r.userId.pid);
    line(r, 'User Id', 'none', 'neither', r.userId.none);
    for (const [dmp, n] of Object.entries(r.hasDmpId ?? {})) {
      line(r, 'Has DMP Id', dmp, `with ${dmp} id`, n.with);
      line(r, 'Has DMP Id', dmp, `without ${dmp} id`, n.without);
    }
    for (const x of r.experiments ?? []) {
      line(r, 'Experiment', `${x.id}|share`, `${x.id}: declared held-out share`, x.declaredShare);
      for (const p of x.providers)
        line(r, 'Experiment', `${x.id}|provider|${p.providerId}`, `${x.id}: holds out ${p.providerName}`, p.calls);
      for (const arm of ['holdout', 'control'] as const)
        for (const [metric, n] of Object.entries(x[arm]) as [string, number][])
          line(r, 'Experiment', `${x.id}|${arm}|${metric}`, `${x.id}, ${arm} arm: ${metric}`, n);
    }
    for (const f of r.forwarding ?? []) {
      const key = `${f.partner}|${f.providerId}`;
      line(r, 'Eids Forwarded', key, `${f.providerName} sent to ${f.partner}`, f.sent);
      for (const [reason, n] of Object.entries(f.withheld))
        line(r, 'Eids Withheld', `${key}|${reason}`, `${f.providerName} withheld from ${f.partner}: ${reason}`, n);
    }
  }
  return lines.join('');
}
