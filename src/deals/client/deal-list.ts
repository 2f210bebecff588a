/**
 * GET /deals across pages: the filters as the query string, each page read (the total count, the Link header's next
 * page, kept on the client's origin), as one {@link PagedList}. `client.deals.list` (./deals.ts) returns it.
 */
import type { DealRead } from '../rules/index.js';
import { DealApiError } from './errors.js';
import { PagedList, type Page } from './paginate.js';
import { assertSameOrigin, parseLinkHeader } from './link-header.js';
import type { ClientCore } from './core.js';
import type { DealListFilters, DealListOptions } from './options.js';

function isoDate(v: Date | string): string {
  return v instanceof Date ? v.toISOString() : v;
}

/** Options of a listing that are not filters of GET /deals. */
const NOT_FILTERS = new Set([
  'offset',
  'pageSize',
  'concurrency',
  'onProgress',
  'signal',
  'limit',
  'maxPages',
  'maxItems',
]);

/** Builds the query string of GET /deals from the filters. */
function dealQuery(filters: DealListFilters): URLSearchParams {
  const q = new URLSearchParams();
  for (const [key, value] of Object.entries(filters)) {
    if (value === undefined || value === null || NOT_FILTERS.has(key)) continue;
    if (Array.isArray(value)) q.set(key, value.join(','));
    else if (value instanceof Date) q.set(key, isoDate(value));
    else q.set(key, String(value));
  }
  return q;
}

/** Every deal of the caller's company matching the filters, across pages. */
export function listDeals(c: ClientCore, options: DealListOptions = {}): PagedList<DealRead> {
  const pageSize = options.pageSize ?? 100;
  if (!Number.isInteger(pageSize) || pageSize < 1)
    throw new TypeError(`pageSize must be a positive integer, got ${pageSize}`);
  const base = new URL('deals', c.baseUrl);
  base.search = dealQuery(options).toString();
  const fetchPage = async (url: URL): Promise<Page<DealRead>> => {
    const res = await c.request({ method: 'GET', url, retry: 'idempotent', signal: options.signal });
    if (!Array.isArray(res.body))
      throw new DealApiError(`GET ${url.pathname}: expected a JSON array of deals`, {
        status: res.status,
        redact: c.redact,
      });
    const totalHeader = res.headers.get('x-pagination-total-count');
    const total = totalHeader !== null && /^\d+$/.test(totalHeader.trim()) ? Number(totalHeader) : undefined;
    const next = parseLinkHeader(res.headers.get('link'), url).next;
    if (next) assertSameOrigin(next, c.baseUrl);
    const offset = Number(url.searchParams.get('offset') ?? 0);
    return { items: res.body as DealRead[], offset, total, nextUrl: next, url };
  };
  return new PagedList<DealRead>(
    {
      pageSize,
      startOffset: options.offset ?? 0,
      fetchOffset: (offset, limit) => {
        const url = new URL(base);
        url.searchParams.set('limit', String(limit));
        url.searchParams.set('offset', String(offset));
        return fetchPage(url);
      },
      fetchUrl: fetchPage,
      keyOf: (deal) => deal.id,
    },
    {
      concurrency: options.concurrency ?? c.concurrency,
      onProgress: options.onProgress,
      limit: options.limit,
      maxPages: options.maxPages,
      maxItems: options.maxItems,
    },
  );
}
