/**
 * The lookup routes (spec 4.1): GET /:resource for every lookup resource, filtered by ids and extendedSearch and
 * paged by limit and offset; a DSP user is refused the lookups it may not read.
 */
import type { Hono } from 'hono';
import { DSP_FORBIDDEN_LOOKUPS, LOOKUP_RESOURCES, type LookupResource } from '../../deals/rules/index.js';
import { canonicalResource } from '../reference.js';
import type { ApiEnv, AppContext } from './context.js';
import { fieldError, forbiddenForDsp, parseIdList, parseIntParam } from './http.js';

/** Registers GET /:resource on `api`; register it last, since it matches any one-segment path. */
export function registerLookupRoutes(api: Hono<ApiEnv>, ctx: AppContext): void {
  const { reference } = ctx;

  // --- Lookups (spec 4.1) --------------------------------------------------------------------------------------
  api.get('/:resource', (c) => {
    const resource = canonicalResource(c.req.param('resource'), LOOKUP_RESOURCES);
    if (!resource) return c.json({ message: `No such resource: ${c.req.param('resource')}`, code: 'NOT_FOUND' }, 404);
    if (c.get('user').kind === 'dsp' && DSP_FORBIDDEN_LOOKUPS.includes(resource)) return forbiddenForDsp(c, `the ${resource} lookup`);
    const q = c.req.query();
    const checks = [parseIdList(q.ids, 'ids'), parseIntParam(q.limit, 'limit', 0), parseIntParam(q.offset, 'offset', 0)];
    const bad = checks.find((r): r is { ok: false; field: string; message: string } => !r.ok);
    if (bad) return fieldError(c, bad.field, bad.message);
    const [ids, limit, offset] = checks.map((r) => (r as { value: unknown }).value) as [number[] | undefined, number | undefined, number | undefined];
    const search = (q.extendedSearch ?? '').trim().toLowerCase();
    let items = (reference[resource as LookupResource] as Array<{ id: number; name: string; extendedName?: string; code?: string }>).filter(
      (item) =>
        (!ids || ids.includes(item.id)) &&
        (!search || item.name.toLowerCase().includes(search) || (item.extendedName ?? '').toLowerCase().includes(search) || (item.code ?? '').toLowerCase() === search),
    );
    c.header('X-Pagination-Total-Count', String(items.length));
    items = items.slice(offset ?? 0, limit === undefined ? undefined : (offset ?? 0) + limit);
    return c.json(items);
  });
}
