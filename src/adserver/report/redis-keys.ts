/**
 * Where the Redis report keeps its counts (key prefix, default `eidkit:report:`): `d:<YYYY-MM-DD>` and
 * `h:<YYYY-MM-DDTHH>` hashes, one per UTC day and hour, with fields `<network id>|<counter>` (counters.ts) plus the
 * bucket's own bookkeeping, fields starting with `#` (`#networks`, `#dropped`, `#x…`: see redis-flush.ts); the
 * sorted sets `days` and `hours` indexing them by the end of their period; the hash `meta`.
 */
import type { ReportGranularity } from './report-types.js';

export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;

/** The keys of one report's prefix. */
export interface RedisReportKeys {
  /** The sorted sets of the periods written, scored by each period's end. */
  readonly index: Readonly<Record<ReportGranularity, string>>;
  /** The fleet's own counts (`dropped`: calls dropped at a full buffer). */
  readonly meta: string;
  /** The hash of one period. */
  bucket(g: ReportGranularity, period: string): string;
}

/** The keys under `prefix`. */
export function redisReportKeys(prefix: string): RedisReportKeys {
  return {
    index: { day: `${prefix}days`, hour: `${prefix}hours` },
    meta: `${prefix}meta`,
    bucket: (g, period) => `${prefix}${g === 'day' ? 'd' : 'h'}:${period}`,
  };
}

/** When a period (`YYYY-MM-DD` or `YYYY-MM-DDTHH`) ends, in milliseconds since the epoch. */
export const periodEnd = (g: ReportGranularity, period: string): number =>
  Date.parse(g === 'day' ? `${period}T00:00:00Z` : `${period}:00:00Z`) + (g === 'day' ? DAY : HOUR);

/**
 * The prefix of a network's fields: `<network id>|`, or `|` for calls without one. A string that is no number, also
 * where the report keys a Map by network: V8 hashes small integers without a seed, so caller-chosen network ids
 * could all collide in a Map keyed by them (report.ts, networkKey).
 */
export const networkFieldPrefix = (networkId: number | undefined): string => `${networkId ?? ''}|`;

/** The network id of a {@link networkFieldPrefix} (null for calls without one). */
export const networkOfFieldPrefix = (net: string): number | null => (net === '|' ? null : Number(net.slice(0, -1)));
