/**
 * The single-deal routes (docs/deal-rules.md#endpoints): read, create (or copy), update and delete one of the caller's
 * deals, and attach or detach its domain list; writes are checked by the shared deal rules and the daily quotas.
 */
import type { Context, Hono } from 'hono';
import { validateDeal, type CompleteDealWrite, type DealIssue, type DealReference } from '../../deals/rules/index.js';
import { makeDealId, toRead } from '../deal-view.js';
import type { ReferenceData } from '../reference.js';
import type { StoredDeal } from '../store.js';
import type { ApiEnv, AppContext } from './context.js';
import { fieldError, forbiddenForDsp, parseJsonBody, readJson, validationError } from './http.js';
import { dailyQuotas } from './quota.js';
import { route, type OperationDef, type ParameterDef, type ResponseDef } from './operation.js';

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const ID: ParameterDef = {
  name: 'id',
  in: 'path',
  required: true,
  description: 'the service-side deal id (field id), not dealId',
  schema: { type: 'integer', minimum: 1 },
};
const NOT_FOUND: ResponseDef = {
  description: 'no such deal of the caller’s company (other companies’ deals included)',
  body: { ref: 'Error' },
};
const DSP_REFUSED: ResponseDef = {
  description: 'DSP callers cannot use domain lists (code FORBIDDEN_FOR_DSP)',
  body: { ref: 'Error' },
};
const REFUSED: ResponseDef = {
  description: 'broken JSON, or a field or rule broken: each problem in errors, with its rule (x-rules) if any',
  body: { ref: 'ValidationError' },
};
const JSON_BODY = 'The body is read as JSON whatever its Content-Type (text/plain included).';
const quotaSpent = (what: string): ResponseDef => ({
  description: `the daily quota of ${what} is spent (Retry-After: seconds to the next UTC midnight), or an injected RATE_LIMITED`,
  body: { ref: 'Error' },
  headers: ['Retry-After'],
});

/** GET /deals/{id}. */
export const GET_DEAL: OperationDef = {
  operationId: 'getDeal',
  method: 'get',
  path: '/deals/{id}',
  tag: 'deals',
  auth: 'user',
  summary: 'Read one deal',
  description: 'One deal of the caller’s company, in the read shape.',
  parameters: [ID],
  responses: { 200: { description: 'the deal', body: { ref: 'DealRead' } }, 404: NOT_FOUND },
};

/** POST /deals. */
export const CREATE_DEAL: OperationDef = {
  operationId: 'createDeal',
  method: 'post',
  path: '/deals',
  tag: 'deals',
  auth: 'user',
  summary: 'Create a deal, or a copy of one',
  description:
    'Creates a deal (15 per company per UTC day). With X-CopyOfDealId, the body’s fields override the copied ' +
    'deal’s.',
  parameters: [
    {
      name: 'X-CopyOfDealId',
      in: 'header',
      required: false,
      schema: { type: 'integer', minimum: 1 },
      description: 'create as a copy of this deal, as it is; the body may then hold any subset of fields to change',
    },
  ],
  body: {
    required: true,
    description: `A complete deal; with X-CopyOfDealId, any subset of its fields (DealCopyOverrides). ${JSON_BODY}`,
    schema: { anyOf: [ref('DealWrite'), ref('DealCopyOverrides')] },
  },
  responses: {
    201: { description: 'the new deal', body: { ref: 'DealRead' }, headers: ['Location', 'X-HistoryId', 'Warning'] },
    400: REFUSED,
    403: { description: 'DSP callers cannot set domainListId (code FORBIDDEN_FOR_DSP)', body: { ref: 'Error' } },
    404: { description: 'X-CopyOfDealId names no deal of the caller’s company', body: { ref: 'ValidationError' } },
    429: quotaSpent('creations'),
  },
};

/** PUT /deals/{id}. */
export const REPLACE_DEAL: OperationDef = {
  operationId: 'replaceDeal',
  method: 'put',
  path: '/deals/{id}',
  tag: 'deals',
  auth: 'user',
  summary: 'Replace a deal: omitted fields reset to their defaults',
  description:
    'Full replacement (500 per company per UTC day). Read-only fields may be sent back and are ignored; id and ' +
    'dealId, when sent, must be the deal’s own.',
  parameters: [ID],
  body: { required: true, description: `The whole deal. ${JSON_BODY}`, schema: ref('DealReplace') },
  responses: {
    200: { description: 'the replaced deal', body: { ref: 'DealRead' }, headers: ['X-HistoryId', 'Warning'] },
    400: REFUSED,
    403: { description: 'DSP callers cannot change domainListId (code FORBIDDEN_FOR_DSP)', body: { ref: 'Error' } },
    404: NOT_FOUND,
    429: quotaSpent('updates'),
  },
};

/** DELETE /deals/{id}. */
export const DELETE_DEAL: OperationDef = {
  operationId: 'deleteDeal',
  method: 'delete',
  path: '/deals/{id}',
  tag: 'deals',
  auth: 'user',
  summary: 'Delete a deal',
  description: 'Deletes one deal of the caller’s company.',
  parameters: [ID],
  responses: { 204: { description: 'deleted' }, 404: NOT_FOUND },
};

/** POST /deals/{id}/domainlists. */
export const ATTACH_DOMAIN_LIST: OperationDef = {
  operationId: 'attachDomainList',
  method: 'post',
  path: '/deals/{id}/domainlists',
  tag: 'domain lists',
  auth: 'user',
  summary: 'Attach a domain list to a deal',
  description: 'Sets the deal’s domainListId; refused to DSP callers.',
  parameters: [ID],
  body: { required: true, description: `The list to attach. ${JSON_BODY}`, schema: ref('DomainListRef') },
  responses: { 204: { description: 'attached' }, 400: REFUSED, 403: DSP_REFUSED, 404: NOT_FOUND },
};

/** DELETE /deals/{id}/domainlists. */
export const DETACH_DOMAIN_LIST: OperationDef = {
  operationId: 'detachDomainList',
  method: 'delete',
  path: '/deals/{id}/domainlists',
  tag: 'domain lists',
  auth: 'user',
  summary: 'Detach the deal’s domain list',
  description:
    'Clears the deal’s domainListId; refused to DSP callers. An optional body names the list expected attached.',
  parameters: [ID],
  body: { required: false, description: `Optional: the attached list. ${JSON_BODY}`, schema: ref('DomainListRef') },
  responses: {
    204: { description: 'detached (or none was attached)' },
    400: REFUSED,
    403: DSP_REFUSED,
    404: NOT_FOUND,
  },
};

/** The list id of a `{ domainListId }` body (DomainListRef), or the 400 naming what is wrong with it. */
function domainListRef(c: Context, value: unknown): { listId: number } | { response: Response } {
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

/** Registers GET, PUT and DELETE /deals/:id, POST /deals and POST and DELETE /deals/:id/domainlists on `api`. */
export function registerDealRoutes(api: Hono<ApiEnv>, ctx: AppContext): void {
  const { store, reference, now } = ctx;
  const dealRef = dealReference(reference);
  const { quota, quotaExceeded, bumpQuota } = dailyQuotas(store, now);

  const notFound = (c: Context, id: string | undefined) =>
    c.json({ message: `Deal ${id} not found`, code: 'NOT_FOUND' }, 404);

  /** The caller's deal with this path id, or undefined (other companies' deals are invisible: 404, not 403). */
  function ownDeal(c: Context<ApiEnv>): StoredDeal | undefined {
    const raw = c.req.param('id') ?? '';
    if (!/^\d+$/.test(raw)) return undefined;
    const d = store.deals.get(Number(raw));
    return d?.companyId === c.get('user').companyId ? d : undefined;
  }

  const read = (d: StoredDeal) => toRead(d, reference, now());

  route(api, GET_DEAL, (c) => {
    const d = ownDeal(c);
    return d ? c.json(read(d)) : notFound(c, c.req.param('id'));
  });

  route(api, CREATE_DEAL, async (c) => {
    const user = c.get('user');
    const body = await readJson(c);
    if (!body.ok) return body.response;
    let input = body.value;
    const copyOf = c.req.header('x-copyofdealid');
    if (copyOf !== undefined) {
      const source = /^\d+$/.test(copyOf.trim()) ? store.deals.get(Number(copyOf.trim())) : undefined;
      if (source?.companyId !== user.companyId) return fieldError(c, 'X-CopyOfDealId', `deal ${copyOf} not found`, 404);
      if (input === null || typeof input !== 'object' || Array.isArray(input))
        return validationError(c, [{ path: '', message: 'the deal must be a JSON object' }]);
      const given = input as Record<string, unknown>;
      // As it is, name included: the body changes what the caller wants changed.
      input = { ...source.write, ...given };
    }
    if (
      user.kind === 'dsp' &&
      input &&
      typeof input === 'object' &&
      (input as Record<string, unknown>).domainListId != null
    ) {
      return forbiddenForDsp(c, 'domain lists');
    }
    const r = validateDeal(input, { mode: 'create', now: now(), reference: dealRef });
    if (!r.ok) return validationError(c, r.issues);
    const q = quota(user.companyId);
    if (q.creations >= ctx.quotas.creationsPerDay)
      return quotaExceeded(c, 'CREATION_QUOTA_EXCEEDED', ctx.quotas.creationsPerDay);
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

  route(api, REPLACE_DEAL, async (c) => {
    const user = c.get('user');
    const existing = ownDeal(c);
    if (!existing) return notFound(c, c.req.param('id'));
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
    if (!read(existing).isEditable) {
      const errors = [{ field: '', message: 'the deal is archived', rule: 'archived-not-editable' }];
      return c.json({ message: `Deal ${existing.id} is archived and can no longer be edited`, errors }, 400);
    }
    const r = validateDeal(body.value, { mode: 'update', stored, now: now(), reference: dealRef });
    if (!r.ok) return validationError(c, r.issues);
    if (quota(user.companyId).updates >= ctx.quotas.updatesPerDay)
      return quotaExceeded(c, 'UPDATE_QUOTA_EXCEEDED', ctx.quotas.updatesPerDay);
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
    if (warnings.length > 0)
      c.header(
        'Warning',
        warnings.map((w) => `299 eidkit-simulator "${w.path}: ${w.message.replace(/"/g, "'")}"`).join(', '),
      );
  }

  route(api, DELETE_DEAL, (c) => {
    const d = ownDeal(c);
    if (!d) return notFound(c, c.req.param('id'));
    store.commit(
      () => store.deals.delete(d.id),
      () => store.deals.set(d.id, d),
    );
    return c.body(null, 204);
  });

  route(api, ATTACH_DOMAIN_LIST, async (c) => {
    if (c.get('user').kind === 'dsp') return forbiddenForDsp(c, 'the domain-list operations');
    const d = ownDeal(c);
    if (!d) return notFound(c, c.req.param('id'));
    const body = await readJson(c);
    if (!body.ok) return body.response;
    const ref = domainListRef(c, body.value);
    if ('response' in ref) return ref.response;
    const listId = ref.listId;
    if (!reference.domainLists.some((l) => l.id === listId)) {
      return fieldError(c, 'domainListId', `unknown domain list ${listId}`, 400, 'known-domain-list');
    }
    const next = replaceWrite(d, { ...d.write, domainListId: listId });
    store.commit(
      () => {
        store.nextHistoryId++;
        store.deals.set(d.id, next);
      },
      () => {
        store.nextHistoryId--;
        store.deals.set(d.id, d);
      },
    );
    return c.body(null, 204);
  });

  route(api, DETACH_DOMAIN_LIST, async (c) => {
    if (c.get('user').kind === 'dsp') return forbiddenForDsp(c, 'the domain-list operations');
    const d = ownDeal(c);
    if (!d) return notFound(c, c.req.param('id'));
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
    if (d.write.domainListId !== null) {
      const next = replaceWrite(d, { ...d.write, domainListId: null });
      store.commit(
        () => {
          store.nextHistoryId++;
          store.deals.set(d.id, next);
        },
        () => {
          store.nextHistoryId--;
          store.deals.set(d.id, d);
        },
      );
    }
    return c.body(null, 204);
  });
}
