/**
 * Frequency caps as ad-server users write them: one item, one or more windows ("3 a day and 10 a week,
 * 20 lifetime"), each a UTC calendar period (day, ISO week, month), a rolling period, or a rolling window of any
 * length. Validated when the cap is defined, so a bad cap fails at start-up, never at the first ad call.
 */
import { given } from '../common/index.js';

/** A calendar unit of a cap window; `lifetime` counts everything kept (see {@link LIFETIME_MS}). */
export type CapPeriod = 'day' | 'week' | 'month' | 'lifetime';

/** One window of a cap: at most `max` impressions per `per` (calendar by default) or within `windowMs`. */
export interface CapWindow {
  /** Impressions allowed in the window (an integer ≥ 1). */
  max: number;
  /**
   * `day` (UTC midnight to midnight), `week` (ISO week, Monday 00:00 UTC), `month` (UTC calendar month) or
   * `lifetime`. Calendar periods are the default because that is how GAM, Kevel and Smart AdServer count
   * "3 a day", how advertisers read a cap, and how the report buckets days: a cap and the report agree.
   */
  per?: CapPeriod;
  /** With `per`: count the last 24 h / 7 days / 30 days instead of the current calendar period. */
  rolling?: boolean;
  /** A rolling window of this many milliseconds (instead of `per`). */
  windowMs?: number;
}

/**
 * A frequency cap on `item`: either one window written inline (`{ item, max: 3, per: 'day' }`, or the original
 * rolling form `{ item, max, windowMs }`) or several (`{ item, windows: [{ max: 3, per: 'day' }, { max: 10, per: 'week'
 * }] }`). Every window must allow the impression.
 */
export interface FrequencyCap extends Partial<CapWindow> {
  /** What is capped, for example `deal:123` or `campaign:9`. */
  item: string;
  /** Several windows, all enforced. */
  windows?: readonly CapWindow[];
}

/** A validated window: where it starts for a given time, and how long an impression must be kept for it. */
export interface ResolvedWindow {
  max: number;
  /** Human-readable, for decisions and messages: `3/day`, `10/rolling week`, `2/3600000ms`. */
  label: string;
  /** How long an impression counts in this window at most (ms). */
  keepMs: number;
  /** First instant (ms since the epoch) counted at `now`; `-Infinity` for lifetime. */
  since(now: number): number;
}

/** A validated cap: its windows and how long its impressions must be kept (the longest window). */
export interface ResolvedCap {
  item: string;
  windows: readonly ResolvedWindow[];
  keepMs: number;
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/**
 * How far back a `lifetime` window counts: a store cannot keep every user forever (366 days, longer than any cookie).
 */
export const LIFETIME_MS = 366 * DAY;

const PERIODS: readonly CapPeriod[] = ['day', 'week', 'month', 'lifetime'];
const ROLLING_MS: Record<CapPeriod, number> = { day: DAY, week: 7 * DAY, month: 30 * DAY, lifetime: LIFETIME_MS };
// Longest span of each calendar period: an impression older than this cannot be in the current one.
const CALENDAR_KEEP_MS: Record<CapPeriod, number> = { day: DAY, week: 7 * DAY, month: 31 * DAY, lifetime: LIFETIME_MS };

/** Start (ms) of the UTC calendar period holding `now`: midnight, ISO-week Monday, or the 1st of the month. */
export function periodStart(per: Exclude<CapPeriod, 'lifetime'>, now: number): number {
  const d = new Date(now);
  const midnight = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
  if (per === 'day') return midnight;
  if (per === 'week') return midnight - ((d.getUTCDay() + 6) % 7) * DAY; // ISO weeks start on Monday
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}

function resolveWindow(w: CapWindow, where: string, fail: (msg: string) => never): ResolvedWindow {
  if (!w || typeof w !== 'object') fail(`${where} must be an object`);
  if (!Number.isInteger(w.max) || w.max < 1) fail(`${where}max must be an integer >= 1 (got ${given(w.max)})`);
  if (w.windowMs !== undefined && w.per !== undefined) fail(`${where}windowMs and ${where}per are exclusive`);
  if (w.windowMs !== undefined) {
    if (typeof w.windowMs !== 'number' || !Number.isFinite(w.windowMs) || w.windowMs <= 0) {
      fail(`${where}windowMs must be a number of milliseconds > 0 (got ${String(w.windowMs)})`);
    }
    const ms = w.windowMs;
    return { max: w.max, label: `${w.max}/${ms}ms`, keepMs: ms, since: (now) => now - ms };
  }
  if (w.per === undefined) fail(`${where}per or ${where}windowMs is required`);
  if (!PERIODS.includes(w.per)) fail(`${where}per must be one of ${PERIODS.join(', ')} (got ${JSON.stringify(w.per)})`);
  if (w.rolling !== undefined && typeof w.rolling !== 'boolean') fail(`${where}rolling must be a boolean`);
  const per = w.per;
  if (per === 'lifetime')
    return { max: w.max, label: `${w.max}/lifetime`, keepMs: LIFETIME_MS, since: () => -Infinity };
  if (w.rolling) {
    const ms = ROLLING_MS[per];
    return { max: w.max, label: `${w.max}/rolling ${per}`, keepMs: ms, since: (now) => now - ms };
  }
  // A calendar period starts at a UTC midnight, so its start is the same all day: computed once per day.
  let day = NaN;
  let start = NaN;
  const since = (now: number) => {
    const midnight = now - (((now % DAY) + DAY) % DAY);
    if (midnight !== day) {
      start = periodStart(per, now);
      day = midnight;
    }
    return start;
  };
  return { max: w.max, label: `${w.max}/${per}`, keepMs: CALENDAR_KEEP_MS[per], since };
}

const resolved = new WeakMap<object, ResolvedCap>();

/**
 * Validates a cap and returns its resolved form; throws a TypeError naming the bad setting
 * (`frequency cap "deal:42": windows[1].per must be one of day, week, month, lifetime (got "fortnight")`).
 * Results are cached per cap object, so passing the same cap on every ad call costs nothing.
 */
export function resolveCap(cap: FrequencyCap): ResolvedCap {
  const hit = cap && typeof cap === 'object' ? resolved.get(cap) : undefined;
  if (hit) return hit;
  if (!cap || typeof cap !== 'object') throw new TypeError('frequency cap must be an object with an item');
  if (typeof cap.item !== 'string' || !cap.item) throw new TypeError('frequency cap: item must be a non-empty string');
  const fail = (msg: string): never => {
    throw new TypeError(`frequency cap "${cap.item}": ${msg}`);
  };
  const inline =
    cap.max !== undefined || cap.windowMs !== undefined || cap.per !== undefined || cap.rolling !== undefined;
  if (cap.windows !== undefined && inline)
    fail('give either windows or one inline window (max with per or windowMs), not both');
  let windows: ResolvedWindow[];
  if (cap.windows !== undefined) {
    if (!Array.isArray(cap.windows) || cap.windows.length === 0) fail('windows must be a non-empty array');
    windows = (cap.windows as readonly CapWindow[]).map((w, i) => resolveWindow(w, `windows[${i}].`, fail));
  } else {
    if (!inline) fail('needs max with per or windowMs, or windows');
    windows = [resolveWindow(cap as CapWindow, '', fail)];
  }
  const out: ResolvedCap = { item: cap.item, windows, keepMs: Math.max(...windows.map((w) => w.keepMs)) };
  resolved.set(cap, out);
  return out;
}

/**
 * Defines a cap, validated now (at start-up) rather than at the first ad call; returns it frozen.
 * @example
 * const cap = defineFrequencyCap({ item: 'deal:42', windows: [{ max: 3, per: 'day' }, { max: 10, per: 'week' }] });
 */
export function defineFrequencyCap<C extends FrequencyCap>(cap: C): Readonly<C> {
  const frozen = Object.freeze({
    ...cap,
    ...(cap?.windows ? { windows: Object.freeze(cap.windows.map((w) => Object.freeze({ ...w }))) } : {}),
  });
  resolveCap(frozen);
  return frozen;
}
