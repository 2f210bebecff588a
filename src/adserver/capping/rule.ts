/**
 * The frequency-cap rule, apart from what makes it fast and available: given the user, the caps and the impressions
 * counted before this one, whether the impression may be served, the count to report and why. No store, no clock, no
 * cache: the capper (capper.ts) gathers the facts (the store's answer, or the shadow count when the store did not
 * answer) and acts on the ruling; the in-memory store and the shadow count count with {@link impressionsSince} and
 * judge with {@link underEveryMax}.
 */
import type { ResolvedCap } from './windows.js';
import type { CapCheck } from './store.js';
import type { CappingUser } from './user.js';
import type { CapDecision, CapWindowState } from './capper-types.js';

/** Why a decision went the way it did. */
export type CapReason =
  /** The call carries no usable id: served uncapped (`withoutUser: 'serve'`, the default). */
  | 'no-user-serve'
  /** The call carries no usable id and `withoutUser` is `'block'`. */
  | 'no-user-block'
  /** The store counted fewer than the max in every window of every cap. */
  | 'under-max'
  /** The store counted the max (or more) in at least one window. */
  | 'at-max'
  /** The store failed or timed out; `onStoreError: 'serve'` and the shadow count is under every max. */
  | 'store-down-serve'
  /** The store failed or timed out; `onStoreError: 'serve'` but the shadow count reached a max. */
  | 'shadow-capped'
  /** The store failed or timed out and `onStoreError` is `'block'`. */
  | 'store-down-block';

const SERVES: Readonly<Record<CapReason, boolean>> = {
  'no-user-serve': true,
  'no-user-block': false,
  'under-max': true,
  'at-max': false,
  'store-down-serve': true,
  'shadow-capped': false,
  'store-down-block': false,
};

/** What one decision is made from. */
export interface CapFacts {
  user: CappingUser;
  caps: readonly ResolvedCap[];
  /**
   * Per cap, per window: the impressions counted before this one, by the store, or, with `storeError`, by this
   * process (the shadow count, a floor of the store's). Absent without a user.
   */
  counts?: readonly (readonly number[])[];
  /**
   * The store's own verdict on the counts it answered (it recorded a take only when it allowed it): a store that
   * refused is not overruled, even if its counts say otherwise.
   */
  storeAllowed?: boolean;
  /** Set when the store failed or did not answer in time: `counts` are then the shadow count's. */
  storeError?: 'timeout' | 'error';
  withoutUser: 'serve' | 'block';
  onStoreError: 'serve' | 'block';
}

/** Impressions at or after `since` in `times`, sorted oldest first (the newest are at the end). */
export function impressionsSince(times: readonly number[], since: number): number {
  let n = 0;
  for (let i = times.length - 1; i >= 0 && times[i] >= since; i--) n++;
  return n;
}

/** The rule: an impression may be served while every window of every cap counts fewer than its max. */
export function underEveryMax(
  caps: readonly { readonly windows: readonly { readonly max: number }[] }[],
  counts: readonly (readonly number[])[],
): boolean {
  // Loops, not every(): this runs on every ad call.
  for (let i = 0; i < caps.length; i++) {
    const windows = caps[i].windows;
    for (let j = 0; j < windows.length; j++) if (!(counts[i][j] < windows[j].max)) return false;
  }
  return true;
}

/** What a store is asked for a user's caps at `at`: per cap its key and, per window, where it starts and its max. */
export function checksOf(user: string, caps: readonly ResolvedCap[], at: number): CapCheck[] {
  const checks: CapCheck[] = [];
  for (const r of caps) {
    checks.push({
      key: `${user}|${r.item}`,
      user,
      item: r.item,
      keepMs: r.keepMs,
      windows: r.windows.map((w) => ({ since: w.since(at), max: w.max })),
    });
  }
  return checks;
}

/** Every window of every cap with its count (0 where there is none). */
export function windowsOf(caps: readonly ResolvedCap[], counts?: readonly (readonly number[])[]): CapWindowState[] {
  const out: CapWindowState[] = [];
  for (let i = 0; i < caps.length; i++) {
    const r = caps[i];
    for (let j = 0; j < r.windows.length; j++) {
      const w = r.windows[j];
      out.push({ item: r.item, window: w.label, max: w.max, count: counts?.[i][j] ?? 0 });
    }
  }
  return out;
}

/** Why the decision on `facts` goes the way it does; the reason alone says whether it serves. */
export function capReason(facts: CapFacts): CapReason {
  const { user, counts } = facts;
  if (!user.key || !counts) return facts.withoutUser === 'block' ? 'no-user-block' : 'no-user-serve';
  if (facts.storeError !== undefined) {
    if (facts.onStoreError === 'block') return 'store-down-block';
    return underEveryMax(facts.caps, counts) ? 'store-down-serve' : 'shadow-capped';
  }
  return facts.storeAllowed !== false && underEveryMax(facts.caps, counts) ? 'under-max' : 'at-max';
}

/** The decision on `facts`: served or not (by {@link capReason}), the first window's count, and every window's. */
export function decideCap(facts: CapFacts, reason = capReason(facts)): CapDecision {
  const { user, caps, counts, storeError } = facts;
  const allowed = SERVES[reason];
  const count = counts?.[0]?.[0] ?? 0;
  const windows = windowsOf(caps, counts);
  // Two literals, not a property added later: a decision's shape is then one of two fixed ones, and optimised code
  // that makes them is not thrown away when a collection frees a shape no live decision holds.
  return storeError !== undefined && user.key
    ? { allowed, count, windows, user, storeError }
    : { allowed, count, windows, user };
}
