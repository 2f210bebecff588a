/**
 * `plan`: what `apply` would do to make the live deals match a deals file, per key — create, update (field-level
 * diff), pause / resume, delete (prune), no change, refused (each issue with its path) — and when, given the daily
 * quotas. Reads only.
 */
import type { DealApiClient } from '../client/client.js';
import { dealKeyNamespace, dealKeyOf, userCallerDealIds, withDealKeyMarker } from '../client/keyed.js';
import type { DealIssue, DealRead, DealValidationResult } from '../rules/index.js';
import { dealContentHash, diffDeal, type FieldChange } from './diff.js';
import type { DealsFile, DealsFileEntry } from './file.js';
import { DEFAULT_QUOTAS, type QuotaLimits } from '../rules/index.js';
import { quotaStatus, scheduledDay, type QuotaStatus } from './quota.js';

/** What apply does for one key (or one live deal no longer in the file). */
export type PlanAction = 'create' | 'update' | 'pause' | 'resume' | 'delete' | 'no-change' | 'refused' | 'orphan';

/** What happens to live deals whose key left the file (and to doubled deals of one key). */
export type PruneMode = 'pause' | 'delete';

/** One line of a plan. */
export interface PlanItem {
  /** The key of the file entry, or of the live deal no longer in the file. */
  key: string;
  action: PlanAction;
  /** The live deal's service-side id, when there is one. */
  id?: number;
  /** The deal name (desired, else live). */
  name?: string;
  /** For update / pause / resume: each changed field, live value → desired value. */
  changes?: FieldChange[];
  /**
   * True when the live deal was changed outside eidkit since apply last wrote it (its content no longer matches the
   * marker).
   */
  drift?: boolean;
  /** For refused: every problem, each naming its field. */
  issues?: DealIssue[];
  /** Accepted but noteworthy (e.g. frequency capping that the service will ignore). */
  warnings?: DealIssue[];
  /** For work beyond today's quota: the UTC day (`YYYY-MM-DD`) it can go. */
  deferredUntil?: string;
  /** Why a live deal is touched or left alone (orphans, duplicates). */
  reason?: string;
}

/** Counts per action; `create` and `update` count only today's work, `deferred` the rest. */
export interface PlanSummary {
  create: number;
  update: number;
  pause: number;
  resume: number;
  delete: number;
  noChange: number;
  refused: number;
  orphan: number;
  deferred: number;
}

/** A plan: the items in file order (then the live deals not in the file), the quota situation and a summary. */
export interface Plan {
  /** The deals file it was made from. */
  source: string;
  /** The file's namespace, when it has one (every key of the plan then starts with `<namespace>/`). */
  namespace?: string;
  /** When it was made (the client's clock), ISO 8601. */
  at: string;
  /** True when apply has something to do, today or on a later day. */
  changes: boolean;
  /** Problems of the file as a whole; apply refuses to start while there is one. */
  issues: DealIssue[];
  summary: PlanSummary;
  quota: QuotaStatus;
  /** The prune mode the plan was made with. */
  prune?: PruneMode;
  items: PlanItem[];
}

/** Options of {@link planDeals}. */
export interface PlanOptions {
  /** What to do with live deals whose key left the file; default: leave them (shown as `orphan`). */
  prune?: PruneMode;
  /** Daily quotas (by default 15 creations, 500 updates). */
  quotas?: Partial<QuotaLimits>;
}

/** The validator a plan uses: the client's (pure rules plus reference lookups), or validateDeal for an offline plan. */
export type PlanValidator = (
  deal: unknown,
  context: { mode: 'create' | 'update'; stored?: DealRead },
) => Promise<DealValidationResult> | DealValidationResult;

/** What apply needs beyond the plan's items: the body to send and the live deal. Kept out of the plan's JSON. */
export interface PlanWork {
  /** The full deal to PUT (create, update, pause, resume of a file entry). */
  desired?: Record<string, unknown>;
  /** A patch merged into the live deal (pruning pauses: only isActive and the marker's hash change). */
  patch?: Record<string, unknown>;
  live?: DealRead;
}

const WORK = new WeakMap<PlanItem, PlanWork>();

/** @internal The body and live deal behind a plan item (for apply). */
export function planWork(item: PlanItem): PlanWork {
  return WORK.get(item) ?? {};
}

/** Actions that change something. */
export const CHANGING_ACTIONS: ReadonlySet<PlanAction> = new Set(['create', 'update', 'pause', 'resume', 'delete']);
/** Actions that spend the daily update quota. */
export const UPDATE_ACTIONS: ReadonlySet<PlanAction> = new Set(['update', 'pause', 'resume']);

function isEditable(deal: DealRead): boolean {
  return !deal.isArchived && deal.isEditable;
}

function labelIssues(entry: DealsFileEntry, issues: DealIssue[]): DealIssue[] {
  return issues.map((i) => {
    const field = /^[A-Za-z0-9_$]+/.exec(i.path)?.[0];
    return field && !entry.own.has(field) && field in entry.fields
      ? { ...i, message: `${i.message} (from defaults)` }
      : i;
  });
}

async function planEntry(
  entry: DealsFileEntry,
  key: string,
  group: DealRead[],
  validate: PlanValidator,
): Promise<{ item: PlanItem; work?: PlanWork }> {
  const live = group[0];
  const base = { key, ...(live ? { id: live.id } : {}) };
  if (entry.issues.length > 0) return { item: { ...base, action: 'refused', issues: entry.issues } };
  const body: Record<string, unknown> = { ...entry.fields };
  if (live) for (const field of entry.unmanaged) body[field] = (live as Record<string, unknown>)[field] ?? null;
  if (Array.isArray(body.callerDealIds)) body.callerDealIds = userCallerDealIds(body.callerDealIds as string[]);
  const result = await validate(body, live ? { mode: 'update', stored: live } : { mode: 'create' });
  const name = typeof body.name === 'string' ? body.name : live?.name;
  if (!result.ok || !result.value)
    return { item: { ...base, name, action: 'refused', issues: labelIssues(entry, result.issues) } };
  const desired: Record<string, unknown> = { ...result.value };
  desired.callerDealIds = withDealKeyMarker(desired.callerDealIds as string[], key, dealContentHash(desired));
  const warnings = result.warnings.length ? { warnings: result.warnings } : {};
  if (!live) return { item: { ...base, name, action: 'create', ...warnings }, work: { desired } };
  const changes = diffDeal(live, desired);
  const marker = dealKeyOf(live);
  const drift = marker?.hash !== undefined && marker.hash !== dealContentHash(live);
  const item: PlanItem = { ...base, name, action: 'no-change', ...(drift ? { drift } : {}), ...warnings };
  if (changes.length === 0) return { item };
  if (!isEditable(live)) {
    return {
      item: {
        ...item,
        action: 'refused',
        changes,
        issues: [
          {
            path: '',
            message: `live deal ${live.id} is archived and cannot be changed; give this deal a new key to create a new one`,
          },
        ],
      },
    };
  }
  const only = changes.length === 1 && changes[0].field === 'isActive' ? changes[0] : undefined;
  item.action = only ? (only.to === false ? 'pause' : 'resume') : 'update';
  item.changes = changes;
  return { item, work: { desired, live } };
}

function pruneItem(
  deal: DealRead,
  key: string,
  why: string,
  prune: PruneMode | undefined,
): { item: PlanItem; work?: PlanWork } {
  const base = { key, id: deal.id, name: deal.name };
  if (prune === 'delete') return { item: { ...base, action: 'delete', reason: why }, work: { live: deal } };
  if (prune === 'pause' && deal.isActive && isEditable(deal)) {
    // The marker's hash follows the pause, so the deal does not read as changed outside eidkit afterwards.
    const hash = dealContentHash({ ...(deal as unknown as Record<string, unknown>), isActive: false });
    const patch = { isActive: false, callerDealIds: withDealKeyMarker(deal.callerDealIds, key, hash) };
    return {
      item: { ...base, action: 'pause', reason: why, changes: [{ field: 'isActive', from: true, to: false }] },
      work: { live: deal, patch },
    };
  }
  const left =
    prune === 'pause'
      ? deal.isActive
        ? 'archived, left as is'
        : 'already paused'
      : 'left as is (apply --prune pause|delete handles it)';
  return { item: { ...base, action: 'orphan', reason: `${why}; ${left}` } };
}

/**
 * Builds a plan from a parsed deals file and the live deals (every deal of the company; deals without a key marker
 * are never touched).
 */
export async function buildPlan(
  file: DealsFile,
  live: readonly DealRead[],
  options: PlanOptions & { now: number; validate: PlanValidator },
): Promise<Plan> {
  const limits: QuotaLimits = { ...DEFAULT_QUOTAS, ...options.quotas };
  // A file sees only the keys of its own namespace (none: keys without one), so other files' deals are not its own.
  const fullKey = (key: string) => (file.namespace ? `${file.namespace}/${key}` : key);
  const byKey = new Map<string, DealRead[]>();
  for (const deal of live) {
    const key = dealKeyOf(deal)?.key;
    if (key !== undefined && dealKeyNamespace(key) === file.namespace)
      byKey.set(key, [...(byKey.get(key) ?? []), deal]);
  }
  for (const group of byKey.values()) group.sort((a, b) => a.id - b.id);

  const planned: { item: PlanItem; work?: PlanWork }[] = [];
  const inFile = new Set(file.entries.map((e) => fullKey(e.key)));
  for (const entry of file.entries) {
    const key = fullKey(entry.key);
    const group = byKey.get(key) ?? [];
    planned.push(await planEntry(entry, key, group, options.validate));
    for (const extra of group.slice(1))
      planned.push(pruneItem(extra, key, `duplicate of key ${key} (deal ${group[0].id} is kept)`, options.prune));
  }
  // An orphan is a deal a deals file applied (its marker carries the hash apply writes) whose key left the file;
  // a deal keyed by a script (`client.deals.create(deal, { key })`, no hash) is never one.
  const orphans = [...byKey]
    .filter(([key]) => !inFile.has(key))
    .flatMap(([key, group]) =>
      group.filter((deal) => dealKeyOf(deal)?.hash !== undefined).map((deal) => ({ key, deal })),
    );
  orphans.sort((a, b) => a.deal.id - b.deal.id);
  for (const { key, deal } of orphans) planned.push(pruneItem(deal, key, 'key no longer in the file', options.prune));

  const quota = quotaStatus(live, options.now, limits);
  let creates = 0;
  let updates = 0;
  const summary: PlanSummary = {
    create: 0,
    update: 0,
    pause: 0,
    resume: 0,
    delete: 0,
    noChange: 0,
    refused: 0,
    orphan: 0,
    deferred: 0,
  };
  for (const { item, work } of planned) {
    if (work) WORK.set(item, work);
    if (item.action === 'create') {
      const day = scheduledDay(creates++, quota.creationsLeft, limits.creationsPerDay, options.now);
      if (day) item.deferredUntil = day;
    } else if (UPDATE_ACTIONS.has(item.action)) {
      const day = scheduledDay(updates++, quota.updatesLeft, limits.updatesPerDay, options.now);
      if (day) item.deferredUntil = day;
    }
    if (item.deferredUntil) summary.deferred++;
    else if (item.action === 'no-change') summary.noChange++;
    else summary[item.action]++;
  }
  const items = planned.map((p) => p.item);
  return {
    source: file.source,
    ...(file.namespace ? { namespace: file.namespace } : {}),
    at: new Date(options.now).toISOString(),
    changes: items.some((i) => CHANGING_ACTIONS.has(i.action)),
    issues: file.issues,
    summary,
    quota,
    ...(options.prune ? { prune: options.prune } : {}),
    items,
  };
}

/**
 * Plans a deals file against the service: lists every live deal, validates each desired deal as the client would
 * before sending it (pure rules, then the DSPs, buyers and identity providers it names), and diffs.
 * @example
 * const plan = await planDeals(client, await loadDealsFile('deals.yaml'), { prune: 'pause' });
 * for (const item of plan.items) console.log(item.action, item.key, item.changes ?? item.issues ?? '');
 */
export async function planDeals(
  client: DealApiClient,
  file: DealsFile,
  options: PlanOptions & { signal?: AbortSignal } = {},
): Promise<Plan> {
  const live = await client.deals.list({ signal: options.signal }).toArray({ limit: Infinity });
  return buildPlan(file, live, {
    ...options,
    now: client.now(),
    validate: (deal, context) => client.deals.validate(deal, { ...context, signal: options.signal }),
  });
}

/** True when the plan holds refused deals or file-level problems. */
export function planHasIssues(plan: Plan): boolean {
  return plan.issues.length > 0 || plan.summary.refused > 0;
}
