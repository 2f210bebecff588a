/**
 * `apply`: carries out a plan — updates, pauses and resumes first (update quota), then deletes, then creates
 * (creation quota) with `create(deal, { key })`, so no create is lost or doubled. Work beyond today's quota is
 * left for its day; a quota refusal from the service stops that kind of work cleanly and defers the rest.
 */
import type { DealApiClient } from '../client/client.js';
import { CreationQuotaExceededError, UpdateQuotaExceededError } from '../client/errors.js';
import type { DealWriteInput } from '../rules/index.js';
import { planHasIssues, planWork, UPDATE_ACTIONS, type Plan, type PlanAction, type PlanItem } from './plan.js';
import { scheduledDay } from './quota.js';

/** The outcome of one plan item. */
export interface ApplyItem {
  key: string;
  action: PlanAction;
  /** done, deferred to a later day (quota), failed, or skipped (refused and `skipInvalid`). */
  status: 'done' | 'deferred' | 'failed' | 'skipped';
  id?: number;
  /** For a create whose answer was lost: the deal was found by its key. */
  recovered?: true;
  /** For deferred work: the UTC day it can go. */
  deferredUntil?: string;
  /** For failed work: the error message (secrets scrubbed) and class. */
  error?: { name: string; message: string };
}

/** Progress of an apply, one event when each piece of work starts and one when it ends. */
export interface ApplyProgress {
  /** 1-based position among the work of this apply. */
  index: number;
  total: number;
  item: ApplyItem;
  phase: 'start' | 'end';
}

/** Options of {@link applyPlan}. */
export interface ApplyOptions {
  /** Apply the valid deals even when others are refused (they are skipped). */
  skipInvalid?: boolean;
  onProgress?: (progress: ApplyProgress) => void;
  signal?: AbortSignal;
}

/** The outcome of an apply. */
export interface ApplyResult {
  /** One entry per piece of work (no-change and orphan items are not listed). */
  items: ApplyItem[];
  summary: {
    created: number;
    recovered: number;
    updated: number;
    paused: number;
    resumed: number;
    deleted: number;
    deferred: number;
    failed: number;
    skipped: number;
  };
  /** The earliest UTC day deferred work can go, when some was deferred. */
  nextDay?: string;
  /** True when nothing is left: no deferred, failed or skipped work. */
  complete: boolean;
}

/** Apply refused to start: the file has problems (fix them, or pass `skipInvalid` for refused deals). */
export class PlanRefusedError extends Error {
  override name = 'PlanRefusedError';
  constructor(
    message: string,
    readonly items: PlanItem[],
  ) {
    super(message);
  }
}

const ORDER: Partial<Record<PlanAction, number>> = { update: 0, pause: 0, resume: 0, delete: 1, create: 2 };

/**
 * Applies a plan made by {@link planDeals} a moment ago.
 * @example
 * const result = await applyPlan(client, plan, {
 *   onProgress: (p) => p.phase === 'end' && console.error(p.item.status, p.item.key),
 * });
 */
export async function applyPlan(client: DealApiClient, plan: Plan, options: ApplyOptions = {}): Promise<ApplyResult> {
  const refused = plan.items.filter((i) => i.action === 'refused');
  if (plan.issues.length > 0) {
    throw new PlanRefusedError(
      `${plan.source} has ${plan.issues.length} problem${plan.issues.length === 1 ? '' : 's'}; nothing was applied`,
      [],
    );
  }
  if (planHasIssues(plan) && !options.skipInvalid) {
    throw new PlanRefusedError(
      `${refused.length} deal${refused.length === 1 ? ' is' : 's are'} invalid (${refused.map((i) => i.key).join(', ')}); fix ${refused.length === 1 ? 'it' : 'them'} or pass --skip-invalid; nothing was applied`,
      refused,
    );
  }
  const items: ApplyItem[] = refused.map((i) => ({
    key: i.key,
    action: i.action,
    status: 'skipped',
    ...(i.id !== undefined ? { id: i.id } : {}),
  }));
  const work = plan.items
    .filter((i) => ORDER[i.action] !== undefined)
    .sort((a, b) => ORDER[a.action]! - ORDER[b.action]!);
  const now = client.now();
  let creationsStopped = -1;
  let updatesStopped = -1;
  let index = 0;
  for (const planned of work) {
    index++;
    const out: ApplyItem = {
      key: planned.key,
      action: planned.action,
      status: 'done',
      ...(planned.id !== undefined ? { id: planned.id } : {}),
    };
    items.push(out);
    const isCreate = planned.action === 'create';
    const isUpdate = UPDATE_ACTIONS.has(planned.action);
    // Beyond the quota, as planned or as the service just said: leave it for its day.
    if (planned.deferredUntil || (isCreate && creationsStopped >= 0) || (isUpdate && updatesStopped >= 0)) {
      out.status = 'deferred';
      out.deferredUntil =
        planned.deferredUntil ??
        scheduledDay(
          isCreate ? creationsStopped++ : updatesStopped++,
          0,
          isCreate ? plan.quota.creationsPerDay : plan.quota.updatesPerDay,
          now,
        );
      continue;
    }
    options.onProgress?.({ index, total: work.length, item: { ...out }, phase: 'start' });
    const { desired, patch, live } = planWork(planned);
    try {
      if (isCreate) {
        const created = await client.deals.create(desired as DealWriteInput, {
          key: planned.key,
          signal: options.signal,
        });
        out.id = created.id;
        if (created.recovered) out.recovered = true;
      } else if (planned.action === 'delete') {
        await client.deals.delete(live!.id, { signal: options.signal });
      } else if (desired) {
        await client.deals.replace(live!.id, desired as DealWriteInput, { stored: live, signal: options.signal });
      } else {
        // Pruning pauses: only isActive (and the marker's hash) change, every other field is kept.
        await client.deals.update(live!.id, patch!, { signal: options.signal });
      }
    } catch (err) {
      if (options.signal?.aborted) throw err;
      if (err instanceof CreationQuotaExceededError || err instanceof UpdateQuotaExceededError) {
        // The service's count beat the estimate: stop this kind of work; the rest goes from the next day.
        out.status = 'deferred';
        if (isCreate) {
          creationsStopped = 0;
          out.deferredUntil = scheduledDay(creationsStopped++, 0, plan.quota.creationsPerDay, now);
        } else {
          updatesStopped = 0;
          out.deferredUntil = scheduledDay(updatesStopped++, 0, plan.quota.updatesPerDay, now);
        }
      } else {
        out.status = 'failed';
        out.error = {
          name: err instanceof Error ? err.name : 'Error',
          message: err instanceof Error ? err.message : String(err),
        };
      }
    }
    options.onProgress?.({ index, total: work.length, item: { ...out }, phase: 'end' });
  }
  const count = (action: PlanAction) => items.filter((i) => i.action === action && i.status === 'done').length;
  const deferredDays = items
    .map((i) => i.deferredUntil)
    .filter((d): d is string => !!d)
    .sort();
  const summary = {
    created: count('create'),
    recovered: items.filter((i) => i.recovered).length,
    updated: count('update'),
    paused: count('pause'),
    resumed: count('resume'),
    deleted: count('delete'),
    deferred: items.filter((i) => i.status === 'deferred').length,
    failed: items.filter((i) => i.status === 'failed').length,
    skipped: items.filter((i) => i.status === 'skipped').length,
  };
  return {
    items,
    summary,
    ...(deferredDays.length ? { nextDay: deferredDays[0] } : {}),
    complete: summary.deferred === 0 && summary.failed === 0 && summary.skipped === 0,
  };
}
