/**
 * Report dimensions (extended-ids.md §2.3), aggregated per UTC day and network:
 * Extended Ids (calls carrying each provider's eids), Has User Uid and Has User Pid (calls with / without).
 * Readable as JSON and CSV (the CSV also carries which id served as the user id: uid, pid or none).
 */
import { providerById } from '../core/index.js';
import { csvRow } from '../core/csv.js';
import type { AdCall } from './parse.js';
import { providerIdsOf } from './providers.js';

/** Calls with and without a value. */
export interface WithWithout {
  with: number;
  without: number;
}

/** One provider's line of the Extended Ids dimension. */
export interface ExtendedIdsCount {
  providerId: number;
  providerName: string;
  /** Ad calls that carried at least one eid of this provider. */
  calls: number;
}

/** The three dimensions for one day and one network. */
export interface ReportRow {
  /** UTC day, `YYYY-MM-DD`. */
  date: string;
  /** Network id; null for calls without a valid network id. */
  networkId: number | null;
  /** All ad calls counted in this row. */
  calls: number;
  /** Extended Ids: per provider (ascending id, `Unknown` = 0 included), the calls carrying its eids. */
  extendedIds: ExtendedIdsCount[];
  /** Calls that carried no eid at all. */
  callsWithoutEids: number;
  /** Has User Uid. */
  hasUserUid: WithWithout;
  /** Has User Pid. */
  hasUserPid: WithWithout;
  /** Which id served as the user id: `uid` when present (it overrides `pid`), else `pid`, else none. */
  userId: { uid: number; pid: number; none: number };
}

/** A whole report: every day and network kept, oldest day first, then by network id. */
export interface ReportJson {
  rows: ReportRow[];
  /** Calls not counted because a day already had `maxNetworksPerDay` networks. */
  droppedCalls: number;
}

/** Caps of the in-memory report. */
export interface ReportOptions {
  /** Days kept; older days are pruned as new ones arrive. Default 90. */
  maxDays?: number;
  /** Networks kept per day; calls of further networks are counted in `droppedCalls`. Default 10,000. */
  maxNetworksPerDay?: number;
}

/** An in-memory report you feed with ad calls and read as JSON or CSV. */
export interface Report {
  /** Counts one ad call, on the UTC day of `at` (default now: the server's clock, not the tag's timestamp). */
  add(call: AdCall, at?: Date): void;
  /** The report as plain data. */
  toJSON(): ReportJson;
  /** The report as CSV: `date,network_id,dimension,key,label,calls`, one line per count. */
  toCSV(): string;
}

interface Bucket {
  calls: number;
  providers: Map<number, number>;
  withoutEids: number;
  uid: number;
  pid: number;
  effective: { uid: number; pid: number; none: number };
}

const dayOf = (d: Date) => d.toISOString().slice(0, 10);

/**
 * Creates an in-memory report.
 * @example const report = createReport(); report.add(call); res.end(report.toCSV());
 */
export function createReport(options: ReportOptions = {}): Report {
  const maxDays = options.maxDays ?? 90;
  const maxNetworks = options.maxNetworksPerDay ?? 10_000;
  const days = new Map<string, Map<number | null, Bucket>>();
  let droppedCalls = 0;

  function bucketFor(date: string, networkId: number | null): Bucket | undefined {
    let day = days.get(date);
    if (!day) {
      day = new Map();
      days.set(date, day);
      if (days.size > maxDays) {
        const oldest = [...days.keys()].sort().slice(0, days.size - maxDays);
        for (const k of oldest) days.delete(k);
        if (!days.has(date)) return undefined;
      }
    }
    let b = day.get(networkId);
    if (!b) {
      if (day.size >= maxNetworks) return undefined;
      b = { calls: 0, providers: new Map(), withoutEids: 0, uid: 0, pid: 0, effective: { uid: 0, pid: 0, none: 0 } };
      day.set(networkId, b);
    }
    return b;
  }

  function rows(): ReportRow[] {
    const out: ReportRow[] = [];
    for (const date of [...days.keys()].sort()) {
      const day = days.get(date)!;
      const ids = [...day.keys()].sort((a, b) => (a ?? -1) - (b ?? -1));
      for (const networkId of ids) {
        const b = day.get(networkId)!;
        out.push({
          date,
          networkId,
          calls: b.calls,
          extendedIds: [...b.providers.entries()]
            .sort(([a], [c]) => a - c)
            .map(([providerId, calls]) => ({ providerId, providerName: providerById(providerId).name, calls })),
          callsWithoutEids: b.withoutEids,
          hasUserUid: { with: b.uid, without: b.calls - b.uid },
          hasUserPid: { with: b.pid, without: b.calls - b.pid },
          userId: { ...b.effective },
        });
      }
    }
    return out;
  }

  return {
    add(call, at = new Date()) {
      const b = bucketFor(dayOf(at), call.networkId ?? null);
      if (!b) {
        droppedCalls++;
        return;
      }
      b.calls++;
      const ids = providerIdsOf(call.eids);
      for (const id of ids) b.providers.set(id, (b.providers.get(id) ?? 0) + 1);
      if (ids.length === 0) b.withoutEids++;
      if (call.uid !== undefined) b.uid++;
      if (call.pid !== undefined) b.pid++;
      b.effective[call.uid !== undefined ? 'uid' : call.pid !== undefined ? 'pid' : 'none']++;
    },
    toJSON: () => ({ rows: rows(), droppedCalls }),
    toCSV() {
      const lines = [csvRow(['date', 'network_id', 'dimension', 'key', 'label', 'calls'])];
      const line = (r: ReportRow, dimension: string, key: string | number, label: string, calls: number) =>
        lines.push(csvRow([r.date, r.networkId, dimension, key, label, calls]));
      for (const r of rows()) {
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
      }
      return lines.join('');
    },
  };
}
