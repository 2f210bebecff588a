/**
 * The daily quotas of the deal API (15 creations, 500 updates; reset daily, at 00:00 UTC in the simulator) as a plan
 * sees them: what is left today, estimated from the live deals' createdAt / updatedAt (the API has no quota
 * endpoint), and on which UTC day each piece of work beyond it can go.
 */
import { DEFAULT_QUOTAS, utcDay, type DealRead, type QuotaLimits } from '../rules/index.js';

const DAY_MS = 86_400_000;

/** The quota situation today. */
export interface QuotaStatus extends QuotaLimits {
  /** Today, UTC (`YYYY-MM-DD`). */
  day: string;
  /** When the quotas reset (the next UTC midnight), ISO 8601. */
  resetsAt: string;
  /** Creations left today: the limit minus the deals created today that are still listed (deleted ones are unseen). */
  creationsLeft: number;
  /** Updates left today, estimated: one per deal updated today (a deal updated twice counts once). */
  updatesLeft: number;
}

/** Estimates today's quota situation from the live deals. */
export function quotaStatus(live: readonly DealRead[], now: number, limits: QuotaLimits = DEFAULT_QUOTAS): QuotaStatus {
  const start = Math.floor(now / DAY_MS) * DAY_MS;
  let created = 0;
  let updated = 0;
  for (const d of live) {
    const c = Date.parse(d.createdAt);
    const u = Date.parse(d.updatedAt);
    if (c >= start) created++;
    if (u >= start && u !== c) updated++;
  }
  return {
    ...limits,
    day: utcDay(now),
    resetsAt: new Date(start + DAY_MS).toISOString(),
    creationsLeft: Math.max(0, limits.creationsPerDay - created),
    updatesLeft: Math.max(0, limits.updatesPerDay - updated),
  };
}

/**
 * The UTC day on which the `n`-th (0-based) piece of work can go when `leftToday` remain today and `perDay` each
 * day after: undefined for today.
 */
export function scheduledDay(n: number, leftToday: number, perDay: number, now: number): string | undefined {
  if (n < leftToday) return undefined;
  if (perDay <= 0) return 'never';
  const daysAhead = 1 + Math.floor((n - leftToday) / perDay);
  return utcDay(Math.floor(now / DAY_MS) * DAY_MS + daysAhead * DAY_MS);
}
