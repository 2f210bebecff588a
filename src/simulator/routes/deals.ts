/**
 * The single-deal routes (docs/deal-rules.md#endpoints): read, create (or copy), replace and delete one of the caller's
 * deals, and attach or detach its domain list; writes are checked by the shared deal rules and the daily quotas. Each
 * route is a row of {@link DEAL_ROUTES}: its operation (./deal-operations.ts) and a named handler.
 */
import type { Context, Hono } from 'hono';
import { validateDeal, type CompleteDealWrite, type DealIssue, type DealReference } from '../../deals/rules/index.js';
import { makeDealId, toRead } from '../deal-view.js';
import type { ReferenceData } from '../reference.js';
import type { SimulatorStore, StoredDeal } from '../store.js';
import type { ApiEnv, AppContext } from './context.js';
import { fieldError, forbiddenForDsp, parseJsonBody, readJson, validationError } from './http.js';
import { dailyQuotas, type DailyQuotas } from './quota.js';
import { registerRoutes, type RouteDef } from './operation.js';
import {
  ATTACH_DOMAIN_LIST,
  CREATE_DEAL,
  DELETE_DEAL,
  DETACH_DOMAIN_LIST,
  GET_DEAL,
  REPLACE_DEAL,
} from './deal-operations.js';

/** What the single-deal handlers work with: the app, the reference data as the deal rules read it, the quotas. */
interface DealDeps extends AppContext {
  dealRef: DealReference;
  daily: DailyQuotas;
}

type DealContext = Context<ApiEnv>;

/** The single-deal routes, in the order they are registered. */
const DEAL_ROUTES: readonly RouteDef<DealDeps>[] = [
  { operation: GET_DEAL, handler: getDeal },
  { operation: CREATE_DEAL, handler: createDeal },
  { operation: REPLACE_DEAL, handler: replaceDeal },
  { operation: DELETE_DEAL, handler: deleteDeal },
  { operation: ATTACH_DOMAIN_LIST, handler: attachDomainList },
  { operation: DETACH_DOMAIN_LIST, handler: detachDomainList },
];

/** Registers GET, PUT and DELETE /deals/:id, POST /deals and POST and DELETE /deals/:id/domainlists on `api`. */
export function registerDealRoutes(api: Hono<ApiEnv>, ctx: AppContext): void {
  const deps: DealDeps = { ...ctx, dealRef: dealReference(ctx.reference), daily: dailyQuotas(ctx.store, ctx.now) };
  registerRoutes(api, DEAL_ROUTES, deps);
}

/** GET /deals/{id}. */
function getDeal(c: DealContext, deps: DealDeps): Response {
  const d = ownDeal(c, deps);
  return d ? c.json(readView(deps, d)) : notFound(c);
}

/** POST /deals: a new deal, or a copy of one (X-CopyOfDealId) with the body's fields over it. */
async function createDeal(c: DealContext, deps: DealDeps): Promise<Response> {
  const { store, now, daily } = deps;
  const user = c.get('user');
  const body = await readJson(c);
  if (!body.ok) return body.response;
  const copied = copyOf(c, deps, body.value);
  if ('response' in copied) return copied.response;
  const input = copied.input;
  if (
    user.kind === 'dsp' &&
    input &&
    typeof input === 'object' &&
    (input as Record<string, unknown>).domainListId != null
  ) {
    return forbiddenForDsp(c, 'domain lists');
  }
  const r = validateDeal(input, { mode: 'create', now: now(), reference: deps.dealRef });
  if (!r.ok) return validationError(c, r.issues);
  if (daily.quota(user.companyId).creations >= deps.quotas.creationsPerDay)
    return daily.quotaExceeded(c, 'CREATION_QUOTA_EXCEEDED', deps.quotas.creationsPerDay);
  const stamp = new Date(now()).toISOString();
  const id = store.nextId;
  const deal: StoredDeal = {
    companyId: user.companyId,
    id,
    dealId: makeDealId(user.companyId, id),
    createdAt: stamp,
    updatedAt: stamp,
    historyId: store.nextHistoryId,
    write: r.value!,
  };
  let undoQuota = () => {};
  store.commit(
    () => {
      store.nextId++;
      store.nextHistoryId++;
      store.deals.set(id, deal);
      undoQuota = daily.bumpQuota(user.companyId, 'creations');
    },
    () => {
      store.deals.delete(id);
      store.nextId--;
      store.nextHistoryId--;
      undoQuota();
    },
  );
  c.header('Location', new URL(`deals/${id}`, new URL('./', c.req.url)).toString());
  c.header('X-HistoryId', String(deal.historyId));
  warn(c, r.warnings);
  return c.json(readView(deps, deal), 201);
}

/**
 * The deal to create: the body, or with X-CopyOfDealId the caller's deal of that id, as it is (name included), with
 * the body's fields over it; the 404 or 400 to answer when the copied deal or the body will not do.
 */
function copyOf(c: DealContext, deps: DealDeps, body: unknown): { input: unknown } | { response: Response } {
  const header = c.req.header('x-copyofdealid');
  if (header === undefined) return { input: body };
  const source = /^\d+$/.test(header.trim()) ? deps.store.deals.get(Number(header.trim())) : undefined;
  if (source?.companyId !== c.get('user').companyId)
    return { response: fieldError(c, 'X-CopyOfDealId', `deal ${header} not found`, 404) };
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    return { response: validationError(c, [{ path: '', message: 'the deal must be a JSON object' }]) };
  return { input: { ...source.write, ...(body as Record<string, unknown>) } };
}

/** PUT /deals/{id}: full replacement, unless the deal is archived. */
async function replaceDeal(c: DealContext, deps: DealDeps): Promise<Response> {
  const { daily } = deps;
  const user = c.get('user');
  const existing = ownDeal(c, deps);
  if (!existing) return notFound(c);
  const body = await readJson(c);
  if (!body.ok) return body.response;
  const stored = { ...existing.write, id: existing.id, dealId: existing.dealId };
  if (
    user.kind === 'dsp' &&
    body.value &&
    typeof body.value === 'object' &&
    ((body.value as Record<string, unknown>).domainListId ?? null) !== existing.write.domainListId
  ) {
    return forbiddenForDsp(c, 'domain lists');
  }
  if (!readView(deps, existing).isEditable) {
    const errors = [{ field: '', message: 'the deal is archived', rule: 'archived-not-editable' }];
    return c.json({ message: `Deal ${existing.id} is archived and can no longer be edited`, errors }, 400);
  }
  const r = validateDeal(body.value, { mode: 'update', stored, now: deps.now(), reference: deps.dealRef });
  if (!r.ok) return validationError(c, r.issues);
  if (daily.quota(user.companyId).updates >= deps.quotas.updatesPerDay)
    return daily.quotaExceeded(c, 'UPDATE_QUOTA_EXCEEDED', deps.quotas.updatesPerDay);
  const next = nextVersion(deps, existing, r.value!);
  commitVersion(deps.store, existing, next, () => daily.bumpQuota(user.companyId, 'updates'));
  c.header('X-HistoryId', String(next.historyId));
  warn(c, r.warnings);
  return c.json(readView(deps, next));
}

/** DELETE /deals/{id}. */
function deleteDeal(c: DealContext, deps: DealDeps): Response {
  const { store } = deps;
  const d = ownDeal(c, deps);
  if (!d) return notFound(c);
  store.commit(
    () => store.deals.delete(d.id),
    () => store.deals.set(d.id, d),
  );
  return c.body(null, 204);
}

/** POST /deals/{id}/domainlists: sets the deal's domainListId to a known list. */
async function attachDomainList(c: DealContext, deps: DealDeps): Promise<Response> {
  if (c.get('user').kind === 'dsp') return forbiddenForDsp(c, 'the domain-list operations');
  const d = ownDeal(c, deps);
  if (!d) return notFound(c);
  const body = await readJson(c);
  if (!body.ok) return body.response;
  const ref = domainListRef(c, body.value);
  if ('response' in ref) return ref.response;
  const listId = ref.listId;
  if (!deps.reference.domainLists.some((l) => l.id === listId)) {
    return fieldError(c, 'domainListId', `unknown domain list ${listId}`, 400, 'known-domain-list');
  }
  commitVersion(deps.store, d, nextVersion(deps, d, { ...d.write, domainListId: listId }));
  return c.body(null, 204);
}

/** DELETE /deals/{id}/domainlists: clears the deal's domainListId (a body, if any, names the attached list). */
async function detachDomainList(c: DealContext, deps: DealDeps): Promise<Response> {
  if (c.get('user').kind === 'dsp') return forbiddenForDsp(c, 'the domain-list operations');
  const d = ownDeal(c, deps);
  if (!d) return notFound(c);
  // The body is optional (the API leaves it open); when it names a list, it must be the attached one.
  const text = await c.req.text();
  if (text.trim() !== '') {
    const parsed = parseJsonBody(c, text);
    if ('response' in parsed) return parsed.response;
    // The same shape as the attach body (DomainListRef), then the attached list.
    const ref = domainListRef(c, parsed.value);
    if ('response' in ref) return ref.response;
    const listId = ref.listId;
    if (listId !== d.write.domainListId) {
      const message = `domain list ${JSON.stringify(listId)} is not attached to deal ${d.id}`;
      return fieldError(c, 'domainListId', message, 400, 'attached-domain-list');
    }
  }
  if (d.write.domainListId !== null)
    commitVersion(deps.store, d, nextVersion(deps, d, { ...d.write, domainListId: null }));
  return c.body(null, 204);
}

/** The 404 of a path id that names none of the caller's deals. */
function notFound(c: DealContext): Response {
  return c.json({ message: `Deal ${c.req.param('id')} not found`, code: 'NOT_FOUND' }, 404);
}

/** The caller's deal with this path id, or undefined (other companies' deals are invisible: 404, not 403). */
function ownDeal(c: DealContext, { store }: DealDeps): StoredDeal | undefined {
  const raw = c.req.param('id') ?? '';
  if (!/^\d+$/.test(raw)) return undefined;
  const d = store.deals.get(Number(raw));
  return d?.companyId === c.get('user').companyId ? d : undefined;
}

/** The read shape of a stored deal, now. */
function readView({ reference, now }: DealDeps, d: StoredDeal) {
  return toRead(d, reference, now());
}

/** `existing` with a new write, stamped now, under the next history id. */
function nextVersion({ store, now }: DealDeps, existing: StoredDeal, write: CompleteDealWrite): StoredDeal {
  return { ...existing, write, updatedAt: new Date(now()).toISOString(), historyId: store.nextHistoryId };
}

/**
 * Stores `next` in place of `existing` and counts the history id (and, with `count`, a quota): all undone when the
 * store's commit fails.
 */
function commitVersion(
  store: SimulatorStore,
  existing: StoredDeal,
  next: StoredDeal,
  count: () => () => void = () => () => {},
): void {
  let undoCount = () => {};
  store.commit(
    () => {
      store.nextHistoryId++;
      store.deals.set(existing.id, next);
      undoCount = count();
    },
    () => {
      store.nextHistoryId--;
      store.deals.set(existing.id, existing);
      undoCount();
    },
  );
}

/** The Warning header of accepted but ignored input. */
function warn(c: DealContext, warnings: DealIssue[]): void {
  if (warnings.length > 0)
    c.header(
      'Warning',
      warnings.map((w) => `299 eidkit-simulator "${w.path}: ${w.message.replace(/"/g, "'")}"`).join(', '),
    );
}

/** The list id of a `{ domainListId }` body (DomainListRef), or the 400 naming what is wrong with it. */
function domainListRef(c: DealContext, value: unknown): { listId: number } | { response: Response } {
  const b = value as Record<string, unknown> | null;
  if (b === null || typeof b !== 'object' || Array.isArray(b))
    return { response: fieldError(c, '', 'must be a JSON object with domainListId') };
  const unknownKey = Object.keys(b).find((k) => k !== 'domainListId');
  if (unknownKey) return { response: fieldError(c, unknownKey, `unknown field "${unknownKey}"`) };
  const listId = b.domainListId;
  if (typeof listId !== 'number' || !Number.isInteger(listId) || listId <= 0)
    return { response: fieldError(c, 'domainListId', 'must be a positive integer') };
  return { listId };
}

function dealReference(ref: ReferenceData): DealReference {
  return {
    dsps: new Map(ref.dsps.map((d) => [d.id, d])),
    buyers: new Map(ref.buyers.map((b) => [b.id, b])),
    identityProviders: new Map(ref.identityProviders.map((p) => [p.id, p])),
    complete: true,
  };
}
