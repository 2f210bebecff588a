/**
 * The daily deal quotas: creations and updates per company per UTC day, read and counted in the store,
 * and the 429 with Retry-After (seconds to the next UTC midnight) when one is spent.
 */
import type { Context } from 'hono';
import { utcDay } from '../../deals/rules/index.js';
import type { SimulatorStore } from '../store.js';

const DAY_MS = 86_400_000;

function secondsToNextUtcDay(ms: number): number {
  return Math.max(1, Math.ceil((DAY_MS - (ms % DAY_MS)) / 1000));
}

/** The quota operations of one simulator, over its store and clock. */
export interface DailyQuotas {
  /** A company's counts today (zeros when it has none yet, or only a past day's). */
  quota: (companyId: number) => { day: string; creations: number; updates: number };
  /** The 429 of a spent quota. */
  quotaExceeded: (c: Context, code: 'CREATION_QUOTA_EXCEEDED' | 'UPDATE_QUOTA_EXCEEDED', limit: number) => Response;
  /** Counts one creation or update; returns the undo, for a store commit that fails. */
  bumpQuota: (companyId: number, field: 'creations' | 'updates') => () => void;
}

/** The daily quotas kept in `store`, on the clock `now`. */
export function dailyQuotas(store: SimulatorStore, now: () => number): DailyQuotas {
  function quota(companyId: number): { day: string; creations: number; updates: number } {
    const day = utcDay(now());
    const q = store.quotas.get(companyId);
    return q?.day === day ? q : { day, creations: 0, updates: 0 };
  }

  function quotaExceeded(c: Context, code: 'CREATION_QUOTA_EXCEEDED' | 'UPDATE_QUOTA_EXCEEDED', limit: number) {
    c.header('Retry-After', String(secondsToNextUtcDay(now())));
    const what = code === 'CREATION_QUOTA_EXCEEDED' ? 'creations' : 'updates';
    return c.json({ message: `Daily quota of ${limit} deal ${what} reached; it resets at 00:00 UTC`, code }, 429);
  }

  function bumpQuota(companyId: number, field: 'creations' | 'updates'): () => void {
    const before = store.quotas.get(companyId);
    const q = { ...quota(companyId) };
    q[field] += 1;
    store.quotas.set(companyId, q);
    return () => (before ? store.quotas.set(companyId, before) : store.quotas.delete(companyId));
  }

  return { quota, quotaExceeded, bumpQuota };
}
