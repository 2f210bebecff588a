/**
 * The deal collection reads: GET /deals/countBreakdown and GET /deals, its filters, sort keys and
 * paging (X-Pagination-Total-Count and an RFC 5988 Link header).
 * See docs/deal-rules.md#listing-deals. Each route is a row of {@link DEAL_LIST_ROUTES}: its operation and a named
 * handler.
 */
import type { Context, Hono } from 'hono';
import { parseDealDate } from '../../deals/rules/index.js';
import { SOON_MS, dealFacts, dealTypeId, toRead } from '../deal-view.js';
import type { StoredDeal } from '../store.js';
import type { ApiEnv, AppContext } from './context.js';
import { parseBool, parseDateParam, parseIdList, parseIntParam, type Parsed } from './http.js';
import {
  anyCase,
  BOOLEAN_QUERY,
  ID_LIST,
  query,
  registerRoutes,
  type JsonSchema,
  type OperationDef,
  type RouteDef,
} from './operation.js';

/** Largest page of GET /deals. */
export const MAX_PAGE_SIZE = 100;

/** Sort keys GET /deals accepts (the API leaves them open). */
export const SORT_KEYS = [
  'id',
  'dealId',
  'name',
  'createdAt',
  'updatedAt',
  'beginDate',
  'endDate',
  'expirationDate',
  'price',
  'isActive',
  'pricingModel',
  'typeId',
] as const;

/** A date-time parameter: the `date-time` input schema of the deal rules (a date alone is midnight UTC). */
const DATE_PARAM: JsonSchema = { $ref: '#/components/schemas/DateTime' };

/** GET /deals/countBreakdown. */
export const COUNT_DEALS: OperationDef = {
  operationId: 'countDeals',
  method: 'get',
  path: '/deals/countBreakdown',
  tag: 'deals',
  summary: 'Count the caller company’s deals by status and type',
  description:
    'Counts of the caller company’s deals: active, paused, archived, expiring within 7 days, and by deal type.',
  auth: 'user',
  responses: { 200: { description: 'the counts', body: { ref: 'CountBreakdown' } } },
};

/** GET /deals. */
export const LIST_DEALS: OperationDef = {
  operationId: 'listDeals',
  method: 'get',
  path: '/deals',
  tag: 'deals',
  summary: 'List the caller company’s deals, filtered, sorted and paged',
  description:
    `One page of the caller company’s deals (at most ${MAX_PAGE_SIZE}), with the total count and RFC 5988 links. ` +
    'Booleans and sortBy are read in any letter case; id lists may have blanks around the numbers.',
  auth: 'user',
  parameters: [
    query('createdOrModifiedSince', DATE_PARAM, 'deals created or modified after this instant (a date: midnight UTC)'),
    query('isArchived', BOOLEAN_QUERY, 'archived (ended more than 30 days ago) or not'),
    query('isSoonExpired', BOOLEAN_QUERY, 'expiring within 7 days or not'),
    query('isParentDeal', BOOLEAN_QUERY, 'having children deals or not'),
    query('sortBy', { anyOf: [{ type: 'string', enum: [...SORT_KEYS] }, anyCase(SORT_KEYS)] }, 'any case; default id'),
    query('sortAsc', BOOLEAN_QUERY, 'ascending (default) or descending'),
    query('metricsBeginDate', DATE_PARAM, 'start of the metrics window'),
    query('metricsEndDate', DATE_PARAM, 'end of the metrics window'),
    query('buyerIds', ID_LIST, 'deals targeting any of these buyers'),
    query('dspIds', ID_LIST, 'deals targeting any of these DSPs'),
    query('partnerIds', ID_LIST, 'legacy name of dspIds: deals targeting any of these DSPs'),
    query('formatIds', ID_LIST, 'deals targeting any of these impression types'),
    query('platformIds', ID_LIST, 'deals targeting any of these platforms'),
    query('limit', { type: 'integer', minimum: 1 }, `page size; above ${MAX_PAGE_SIZE} is read as ${MAX_PAGE_SIZE}`),
    query('offset', { type: 'integer', minimum: 0 }, 'items to skip'),
  ],
  responses: {
    200: {
      description: 'one page of deals',
      body: { arrayOf: 'DealRead' },
      headers: ['X-Pagination-Total-Count', 'Link'],
    },
    400: { description: 'a query parameter is invalid (each one named in errors)', body: { ref: 'ValidationError' } },
  },
};

/** The collection routes, in the order they are registered (countBreakdown before the single-deal /deals/:id). */
const DEAL_LIST_ROUTES: readonly RouteDef<AppContext>[] = [
  { operation: COUNT_DEALS, handler: countDeals },
  { operation: LIST_DEALS, handler: listDeals },
];

/** Registers GET /deals/countBreakdown and GET /deals on `api`: the caller's company's deals only. */
export function registerDealListRoutes(api: Hono<ApiEnv>, ctx: AppContext): void {
  registerRoutes(api, DEAL_LIST_ROUTES, ctx);
}

type ListContext = Context<ApiEnv>;

/** Deal type names of the count breakdown, by type id. */
const TYPE_NAMES = { 1: 'PrivateAuction', 2: 'DirectDeal', 3: 'GuaranteedDeal' } as const;

/** GET /deals/countBreakdown. */
function countDeals(c: ListContext, { store, reference, now }: AppContext): Response {
  const company = c.get('user').companyId;
  const t = now();
  const out = {
    total: 0,
    active: 0,
    paused: 0,
    archived: 0,
    expiringSoon: 0,
    byType: { PrivateAuction: 0, DirectDeal: 0, GuaranteedDeal: 0 },
  };
  for (const d of store.deals.values()) {
    if (d.companyId !== company) continue;
    const r = toRead(d, reference, t);
    out.total++;
    if (r.isArchived) out.archived++;
    else if (r.isActive) out.active++;
    else out.paused++;
    const exp = r.expirationDateUtc ? Date.parse(r.expirationDateUtc) : null;
    if (exp !== null && exp >= t && exp <= t + SOON_MS) out.expiringSoon++;
    out.byType[TYPE_NAMES[r.typeId as 1 | 2 | 3]]++;
  }
  return c.json(out);
}

/** The query of GET /deals, read: each value, or undefined when absent. */
interface ListQuery {
  limit?: number;
  offset?: number;
  since?: number;
  isArchived?: boolean;
  isSoonExpired?: boolean;
  isParentDeal?: boolean;
  sortBy: (typeof SORT_KEYS)[number];
  sortAsc?: boolean;
  buyerIds?: number[];
  dspIds?: number[];
  partnerIds?: number[];
  formatIds?: number[];
  platformIds?: number[];
}

/** A query parameter that does not read. */
interface QueryError {
  field: string;
  message: string;
}

/** GET /deals: one page of the caller's company's deals, filtered and sorted, with the total and the Link header. */
function listDeals(c: ListContext, ctx: AppContext): Response {
  const read = readListQuery(c.req.query());
  if ('errors' in read) {
    const { errors } = read;
    return c.json({ message: `Invalid query: ${errors[0].field}: ${errors[0].message}`, errors }, 400);
  }
  const { query } = read;
  const limit = Math.min(query.limit ?? MAX_PAGE_SIZE, MAX_PAGE_SIZE);
  const offset = query.offset ?? 0;
  const t = ctx.now();
  const rows = matchingDeals(ctx.store.deals.values(), c.get('user').companyId, query, t);
  const page = rows.slice(offset, offset + limit).map((d) => toRead(d, ctx.reference, t));
  c.header('X-Pagination-Total-Count', String(rows.length));
  c.header('Link', pageLinks(c.req.url, offset, limit, rows.length));
  return c.json(page);
}

/** Every parameter of GET /deals read, or each one that does not read (in the order of the operation's list). */
function readListQuery(q: Record<string, string>): { query: ListQuery } | { errors: QueryError[] } {
  const checks = {
    limit: parseIntParam(q.limit, 'limit', 1),
    offset: parseIntParam(q.offset, 'offset', 0),
    since: parseDateParam(q.createdOrModifiedSince, 'createdOrModifiedSince'),
    // Read only to refuse a bad one: the simulator keeps no metrics.
    metricsBegin: parseDateParam(q.metricsBeginDate, 'metricsBeginDate'),
    metricsEnd: parseDateParam(q.metricsEndDate, 'metricsEndDate'),
    isArchived: parseBool(q.isArchived, 'isArchived'),
    isSoonExpired: parseBool(q.isSoonExpired, 'isSoonExpired'),
    isParentDeal: parseBool(q.isParentDeal, 'isParentDeal'),
    sortAsc: parseBool(q.sortAsc, 'sortAsc'),
    buyerIds: parseIdList(q.buyerIds, 'buyerIds'),
    dspIds: parseIdList(q.dspIds, 'dspIds'),
    partnerIds: parseIdList(q.partnerIds, 'partnerIds'),
    formatIds: parseIdList(q.formatIds, 'formatIds'),
    platformIds: parseIdList(q.platformIds, 'platformIds'),
  };
  const errors: QueryError[] = Object.values(checks)
    .filter((r): r is { ok: false; field: string; message: string } => !r.ok)
    .map(({ field, message }) => ({ field, message }));
  const sortBy = q.sortBy ? SORT_KEYS.find((k) => k.toLowerCase() === q.sortBy.toLowerCase()) : 'id';
  if (!sortBy) errors.push({ field: 'sortBy', message: `must be one of ${SORT_KEYS.join(', ')}` });
  if (errors.length > 0 || !sortBy) return { errors };
  const v = <T>(p: Parsed<T>) => (p as { value: T }).value;
  return {
    query: {
      limit: v(checks.limit),
      offset: v(checks.offset),
      since: v(checks.since),
      isArchived: v(checks.isArchived),
      isSoonExpired: v(checks.isSoonExpired),
      isParentDeal: v(checks.isParentDeal),
      sortBy,
      sortAsc: v(checks.sortAsc),
      buyerIds: v(checks.buyerIds),
      dspIds: v(checks.dspIds),
      partnerIds: v(checks.partnerIds),
      formatIds: v(checks.formatIds),
      platformIds: v(checks.platformIds),
    },
  };
}

/**
 * The company's deals that pass the query's filters, sorted. Filter and sort on cheap facts of the stored deal; the
 * full read view is built only for the page, so one page of a 10,000-deal company costs a sort, not 10,000 read views.
 */
function matchingDeals(deals: Iterable<StoredDeal>, company: number, query: ListQuery, t: number): StoredDeal[] {
  const { since, isArchived: archived, isParentDeal: parent, isSoonExpired: soon } = query;
  const intersects = (have: readonly number[], want: number[] | undefined) =>
    !want || have.some((x) => want.includes(x));
  const needFacts = archived !== undefined || parent !== undefined || soon !== undefined;
  const rows: { d: StoredDeal; k: unknown }[] = [];
  for (const d of deals) {
    if (d.companyId !== company) continue;
    if (since !== undefined && !(Date.parse(d.updatedAt) > since || Date.parse(d.createdAt) > since)) continue;
    if (needFacts) {
      const f = dealFacts(d, t);
      if (archived !== undefined && f.isArchived !== archived) continue;
      if (parent !== undefined && f.isParentDeal !== parent) continue;
      if (soon !== undefined) {
        const exp = f.expiration;
        if ((exp !== null && exp >= t && exp <= t + SOON_MS) !== soon) continue;
      }
    }
    const w = d.write;
    // Legacy partner ids are today's DSP ids; formats are impression types.
    if (!intersects(w.buyerIds ?? [], query.buyerIds)) continue;
    if (!intersects(w.dspIds ?? [], query.dspIds)) continue;
    if (!intersects(w.dspIds ?? [], query.partnerIds)) continue;
    if (!intersects(w.impressionTypeIds ?? [], query.formatIds)) continue;
    if (!intersects(w.platformIds ?? [], query.platformIds)) continue;
    rows.push({ d, k: sortKey(d, query.sortBy) });
  }
  const asc = query.sortAsc ?? true;
  rows.sort((a, b) => {
    const x = a.k;
    const y = b.k;
    let cmp: number;
    if (x === null || x === undefined) cmp = y === null || y === undefined ? 0 : 1;
    else if (y === null || y === undefined) cmp = -1;
    else {
      cmp = (x as number) < (y as number) ? -1 : (x as number) > (y as number) ? 1 : 0;
      if (!asc) cmp = -cmp;
    }
    return cmp !== 0 ? cmp : a.d.id - b.d.id;
  });
  return rows.map((r) => r.d);
}

/** The value a deal sorts by: dates as instants, the type id derived, anything else as stored. */
function sortKey(d: StoredDeal, key: (typeof SORT_KEYS)[number]): unknown {
  if (key === 'id' || key === 'dealId') return d[key];
  if (key === 'createdAt' || key === 'updatedAt') return parseDealDate(d[key]);
  if (key === 'typeId') return dealTypeId(d.write);
  const x = (d.write as Record<string, unknown>)[key];
  // A date field holds a string; anything else fails parseDealDate.
  // eslint-disable-next-line @typescript-eslint/no-base-to-string
  return x !== null && x !== undefined && key.endsWith('Date') ? parseDealDate(String(x)) : x;
}

/** The RFC 5988 Link header: first / prev / next / last pages, keeping every other query parameter. */
function pageLinks(url: string, offset: number, limit: number, total: number): string {
  const link = (rel: string, off: number) => {
    const u = new URL(url);
    u.searchParams.set('offset', String(off));
    u.searchParams.set('limit', String(limit));
    return `<${u.toString()}>; rel="${rel}"`;
  };
  const lastOffset = total === 0 ? 0 : Math.floor((total - 1) / limit) * limit;
  const links = [link('first', 0)];
  if (offset > 0) links.push(link('prev', Math.max(0, offset - limit)));
  if (offset + limit < total) links.push(link('next', offset + limit));
  links.push(link('last', lastOffset));
  return links.join(', ');
}
