/**
 * The lookup routes: GET /:resource for every lookup resource, filtered by ids and extendedSearch and
 * paged by limit and offset; a DSP user is refused the lookups it may not read.
 * See docs/deal-rules.md#lookups.
 */
import type { Hono } from 'hono';
import { DSP_FORBIDDEN_LOOKUPS, LOOKUP_RESOURCES, type LookupResource } from '../../deals/rules/index.js';
import { canonicalResource } from '../reference.js';
import type { ApiEnv, AppContext } from './context.js';
import { fieldError, forbiddenForDsp, parseIdList, parseIntParam } from './http.js';
import { ID_LIST, query, type OperationDef, type ResponseDef } from './operation.js';

/** `buyers` → `Buyers`: the suffix of a lookup's operationId and item schema name. */
export function pascal(resource: LookupResource): string {
  return `${resource[0].toUpperCase()}${resource.slice(1)}`;
}

function dspRefusal(r: LookupResource): Record<number, ResponseDef> {
  if (!DSP_FORBIDDEN_LOOKUPS.includes(r)) return {};
  return { 403: { description: 'refused to DSP callers (code FORBIDDEN_FOR_DSP)', body: { ref: 'Error' } } };
}

/**
 * One operation per lookup resource, all served by the one GET /:resource route below, which also answers the
 * names in any letter case (e.g. /AudienceSegments).
 */
export const LOOKUP_OPERATIONS: OperationDef[] = LOOKUP_RESOURCES.map((r): OperationDef => ({
  operationId: `list${pascal(r)}`,
  method: 'get',
  path: `/${r}`,
  tag: 'lookups',
  summary: `Lookup: ${r}`,
  description:
    `The ${r} reference items, filtered and paged. The path is also answered in any letter case.` +
    (DSP_FORBIDDEN_LOOKUPS.includes(r) ? ' Refused to DSP callers.' : ''),
  auth: 'user',
  parameters: [
    query('ids', ID_LIST, 'only these ids (comma-separated)'),
    query('extendedSearch', { type: 'string' }, 'part of the name or extended name, or the code, in any letter case'),
    query('limit', { type: 'integer', minimum: 0 }, 'page size (default: all)'),
    query('offset', { type: 'integer', minimum: 0 }, 'items to skip'),
  ],
  responses: {
    200: {
      description: 'the matching items',
      body: { arrayOf: `${pascal(r)}Item` },
      headers: ['X-Pagination-Total-Count'],
    },
    400: { description: 'a query parameter is invalid', body: { ref: 'ValidationError' } },
    ...dspRefusal(r),
  },
}));

/** Registers GET /:resource on `api`; register it last, since it matches any one-segment path. */
export function registerLookupRoutes(api: Hono<ApiEnv>, ctx: AppContext): void {
  const { reference } = ctx;

  // --- Lookups -------------------------------------------------------------------------------------------------
  api.get('/:resource', (c) => {
    const resource = canonicalResource(c.req.param('resource'), LOOKUP_RESOURCES);
    if (!resource) return c.json({ message: `No such resource: ${c.req.param('resource')}`, code: 'NOT_FOUND' }, 404);
    if (c.get('user').kind === 'dsp' && DSP_FORBIDDEN_LOOKUPS.includes(resource))
      return forbiddenForDsp(c, `the ${resource} lookup`);
    const q = c.req.query();
    const checks = [
      parseIdList(q.ids, 'ids'),
      parseIntParam(q.limit, 'limit', 0),
      parseIntParam(q.offset, 'offset', 0),
    ];
    const bad = checks.find((r): r is { ok: false; field: string; message: string } => !r.ok);
    if (bad) return fieldError(c, bad.field, bad.message);
    const [ids, limit, offset] = checks.map((r) => (r as { value: unknown }).value) as [
      number[] | undefined,
      number | undefined,
      number | undefined,
    ];
    const search = (q.extendedSearch ?? '').trim().toLowerCase();
    let items = (reference[resource] as { id: number; name: string; extendedName?: string; code?: string }[]).filter(
      (item) =>
        (!ids || ids.includes(item.id)) &&
        (!search ||
          item.name.toLowerCase().includes(search) ||
          (item.extendedName ?? '').toLowerCase().includes(search) ||
          (item.code ?? '').toLowerCase() === search),
    );
    c.header('X-Pagination-Total-Count', String(items.length));
    items = items.slice(offset ?? 0, limit === undefined ? undefined : (offset ?? 0) + limit);
    return c.json(items);
  });
}
