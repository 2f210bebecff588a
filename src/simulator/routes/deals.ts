/**
 * The single-deal routes (spec 4.2, 4.3, 7, 8): read, create (or copy), update and delete one of the caller's
 * deals, and attach or detach its domain list; writes are checked by the shared deal rules and the daily quotas.
 */
import type { Context, Hono } from 'hono';
import { validateDeal, type CompleteDealWrite, type DealIssue, type DealReference } from '../../deals/rules/index.js';
import { makeDealId, toRead } from '../deal-view.js';
import type { ReferenceData } from '../reference.js';
import type { StoredDeal } from '../store.js';
import type { ApiEnv, AppContext } from './context.js';
import { fieldError, forbiddenForDsp, readJson, validationError } from './http.js';
import { dailyQuotas } from './quota.js';

function dealReference(ref: ReferenceData): DealReference {
  return {
    dsps: new Map(ref.dsps.map((d) => [d.id, d])),
    buyers: new Map(ref.buyers.map((b) => [b.id, b])),
    identityProviders: new Map(ref.identityProviders.map((p) => [p.id, p])),
    complete: true,
  };
}

/** Registers GET, PUT and DELETE /deals/:id, POST /deals and POST and DELETE /deals/:id/domainlists on `api`. */
export function registerDealRoutes(api: Hono<ApiEnv>, ctx: AppContext): void {
  const { store, reference, now } = ctx;
  const dealRef = dealReference(reference);
  const { quota, quotaExceeded, bumpQuota } = dailyQuotas(store, now);

  const notFound = (c: Context, id: string) => c.json({ message: `Deal ${id} not found`, code: 'NOT_FOUND' }, 404);

  /** The caller's deal with this path id, or undefined (other companies' deals are invisible: 404, not 403). */
  function ownDeal(c: Context<ApiEnv>): StoredDeal | undefined {
    const raw = c.req.param('id') ?? '';
    if (!/^\d+$/.test(raw)) return undefined;
    const d = store.deals.get(Number(raw));
    return d && d.companyId === c.get('user').companyId ? d : undefined;
  }

  const read = (d: StoredDeal) => toRead(d, reference, now());

  api.get('/deals/:id', (c) => {
    const d = ownDeal(c);
    return d ? c.json(read(d)) : notFound(c, c.req.param('id'));
  });

  api.post('/deals', async (c) => {
    const user = c.get('user');
    const body = await readJson(c);
    if (!body.ok) return body.response;
    let input = body.value;
    const copyOf = c.req.header('x-copyofdealid');
    if (copyOf !== undefined) {
      const source = /^\d+$/.test(copyOf.trim()) ? store.deals.get(Number(copyOf.trim())) : undefined;
      if (!source || source.companyId !== user.companyId) return fieldError(c, 'X-CopyOfDealId', `deal ${copyOf} not found`, 404);
      if (input === null || typeof input !== 'object' || Array.isArray(input)) return validationError(c, [{ path: '', message: 'the deal must be a JSON object' }]);
      const given = input as Record<string, unknown>;
      input = { ...source.write, name: `${source.write.name} (copy)`, ...given };
    }
    if (user.kind === 'dsp' && input && typeof input === 'object' && (input as Record<string, unknown>).domainListId != null) {
      return forbiddenForDsp(c, 'domain lists');
    }
    const r = validateDeal(input, { mode: 'create', now: now(), reference: dealRef });
    if (!r.ok) return validationError(c, r.issues);
    const q = quota(user.companyId);
    if (q.creations >= ctx.quotas.creationsPerDay) return quotaExceeded(c, 'CREATION_QUOTA_EXCEEDED', ctx.quotas.creationsPerDay);
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
        undoQuota = bumpQuota(user.companyId, 'creations');
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
    return c.json(read(deal), 201);
  });

  api.put('/deals/:id', async (c) => {
    const user = c.get('user');
    const existing = ownDeal(c);
    if (!existing) return notFound(c, c.req.param('id'));
    const body = await readJson(c);
    if (!body.ok) return body.response;
    const stored = { ...existing.write, id: existing.id, dealId: existing.dealId };
    if (user.kind === 'dsp' && body.value && typeof body.value === 'object' && ((body.value as Record<string, unknown>).domainListId ?? null) !== existing.write.domainListId) {
      return forbiddenForDsp(c, 'domain lists');
    }
    if (!read(existing).isEditable) {
      return c.json({ message: `Deal ${existing.id} is archived and can no longer be edited`, errors: [{ field: '', message: 'the deal is archived' }] }, 400);
    }
    const r = validateDeal(body.value, { mode: 'update', stored, now: now(), reference: dealRef });
    if (!r.ok) return validationError(c, r.issues);
    if (quota(user.companyId).updates >= ctx.quotas.updatesPerDay) return quotaExceeded(c, 'UPDATE_QUOTA_EXCEEDED', ctx.quotas.updatesPerDay);
    const next = replaceWrite(existing, r.value!);
    let undoQuota = () => {};
    store.commit(
      () => {
        store.nextHistoryId++;
        store.deals.set(existing.id, next);
        undoQuota = bumpQuota(user.companyId, 'updates');
      },
      () => {
        store.nextHistoryId--;
        store.deals.set(existing.id, existing);
        undoQuota();
      },
    );
    c.header('X-HistoryId', String(next.historyId));
    warn(c, r.warnings);
    return c.json(read(next));
  });

  function replaceWrite(existing: StoredDeal, write: CompleteDealWrite): StoredDeal {
    return { ...existing, write, updatedAt: new Date(now()).toISOString(), historyId: store.nextHistoryId };
  }

  function warn(c: Context, warnings: DealIssue[]) {
    if (warnings.length > 0) c.header('Warning', warnings.map((w) => `299 eidkit-simulator "${w.path}: ${w.message.replace(/"/g, "'")}"`).join(', '));
  }

  api.delete('/deals/:id', (c) => {
    const d = ownDeal(c);
    if (!d) return notFound(c, c.req.param('id'));
    store.commit(() => store.deals.delete(d.id), () => store.deals.set(d.id, d));
    return c.body(null, 204);
  });

  api.post('/deals/:id/domainlists', async (c) => {
    if (c.get('user').kind === 'dsp') return forbiddenForDsp(c, 'the domain-list operations');
    const d = ownDeal(c);
    if (!d) return notFound(c, c.req.param('id'));
    const body = await readJson(c);
    if (!body.ok) return body.response;
    const b = body.value as Record<string, unknown> | null;
    if (b === null || typeof b !== 'object' || Array.isArray(b)) return fieldError(c, '', 'must be a JSON object with domainListId');
    const unknownKey = Object.keys(b).find((k) => k !== 'domainListId');
    if (unknownKey) return fieldError(c, unknownKey, `unknown field "${unknownKey}"`);
    const listId = b.domainListId;
    if (typeof listId !== 'number' || !Number.isInteger(listId) || listId <= 0) return fieldError(c, 'domainListId', 'must be a positive integer');
    if (!reference.domainLists.some((l) => l.id === listId)) return fieldError(c, 'domainListId', `unknown domain list ${listId}`);
    const next = replaceWrite(d, { ...d.write, domainListId: listId });
    store.commit(() => { store.nextHistoryId++; store.deals.set(d.id, next); }, () => { store.nextHistoryId--; store.deals.set(d.id, d); });
    return c.body(null, 204);
  });

  api.delete('/deals/:id/domainlists', async (c) => {
    if (c.get('user').kind === 'dsp') return forbiddenForDsp(c, 'the domain-list operations');
    const d = ownDeal(c);
    if (!d) return notFound(c, c.req.param('id'));
    // The body is optional (spec 4 leaves it open); when it names a list, it must be the attached one.
    const text = await c.req.text();
    if (text.trim() !== '') {
      let b: unknown;
      try { b = JSON.parse(text); } catch (err) {
        return c.json({ message: 'The request body is not valid JSON', errors: [{ field: '', message: (err as Error).message }] }, 400);
      }
      const listId = (b as Record<string, unknown> | null)?.domainListId;
      if (listId !== undefined && listId !== d.write.domainListId) {
        return fieldError(c, 'domainListId', `domain list ${JSON.stringify(listId)} is not attached to deal ${d.id}`);
      }
    }
    if (d.write.domainListId !== null) {
      const next = replaceWrite(d, { ...d.write, domainListId: null });
      store.commit(() => { store.nextHistoryId++; store.deals.set(d.id, next); }, () => { store.nextHistoryId--; store.deals.set(d.id, d); });
    }
    return c.body(null, 204);
  });
}
