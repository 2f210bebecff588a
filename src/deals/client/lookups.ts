/**
 * LookupsResource (`client.lookups`): the reference lookups (DSPs, buyers, identity providers, …),
 * listed across pages.
 */
import { LOOKUP_RESOURCES, type LookupItem } from '../rules/index.js';
import { ValidationError, DealApiError } from './errors.js';
import { PagedList } from './paginate.js';
import type { ClientCore } from './core.js';
import type { LookupListOptions } from './options.js';

const LOOKUP_NAMES = new Map<string, string>(LOOKUP_RESOURCES.map((r) => [r.toLowerCase(), r]));

/** Reference lookups: `client.lookups` (docs/deal-rules.md#lookups). */
export class LookupsResource {
  readonly #c: ClientCore;
  constructor(client: ClientCore) {
    this.#c = client;
  }

  /**
   * Items of a lookup resource (names are case-insensitive), across pages.
   * @example
   * for await (const dsp of client.lookups.list('dsps', { search: 'trade' })) console.log(dsp.id, dsp.name);
   */
  list<T = LookupItem>(resource: string, options: LookupListOptions = {}): PagedList<T> {
    const c = this.#c;
    const name = LOOKUP_NAMES.get(String(resource).toLowerCase());
    if (!name) {
      throw new ValidationError(
        `unknown lookup resource ${JSON.stringify(resource)}; known: ${LOOKUP_RESOURCES.join(', ')}`,
        [{ path: 'resource', message: 'is not a lookup resource of the deal API' }],
        { attempts: 0 },
      );
    }
    const limit = options.limit;
    const pageSize = Math.min(options.pageSize ?? 100, limit ?? Infinity);
    const start = options.offset ?? 0;
    const base = new URL(name, c.baseUrl);
    if (options.ids?.length) base.searchParams.set('ids', options.ids.join(','));
    if (options.search) base.searchParams.set('extendedSearch', options.search);
    const list = new PagedList<T>(
      {
        pageSize: Math.max(1, pageSize),
        startOffset: start,
        fetchOffset: async (offset, size) => {
          const url = new URL(base);
          const remaining = limit === undefined ? size : Math.min(size, start + limit - offset);
          url.searchParams.set('limit', String(Math.max(0, remaining)));
          url.searchParams.set('offset', String(offset));
          if (remaining <= 0) return { items: [], offset };
          const res = await c.request({ method: 'GET', url, retry: 'idempotent', signal: options.signal });
          if (!Array.isArray(res.body))
            throw new DealApiError(`GET ${url.pathname}: expected a JSON array`, {
              status: res.status,
              redact: c.redact,
            });
          const items = res.body as T[];
          const totalHeader = res.headers.get('x-pagination-total-count');
          const total =
            totalHeader !== null && /^\d+$/.test(totalHeader.trim())
              ? Math.min(Number(totalHeader), limit === undefined ? Infinity : start + limit)
              : undefined;
          return { items, offset, total: total === Infinity ? undefined : total, url };
        },
      },
      {
        concurrency: options.concurrency ?? 1,
        onProgress: options.onProgress,
        maxPages: options.maxPages,
        maxItems: options.maxItems,
      },
    );
    return list;
  }
}
