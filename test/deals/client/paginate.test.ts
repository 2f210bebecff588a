import { describe, expect, test } from 'vitest';
import { DealApiClient, PagedList, PaginationError } from '../../../src/deals/index.js';
import { parseLinkHeader } from '../../../src/deals/client/link-header.js';
import { PASS, clientOptions, fakeApi, json } from './fake.js';

/** A fake GET /deals over `n` deals, clamping limit to 100 and sending total + Link like the API does. */
function dealsApi(n: number, opts: { total?: boolean; link?: boolean; delayMs?: number } = {}) {
  const deals = Array.from({ length: n }, (_, i) => ({ id: i + 1, name: `deal ${i + 1}` }));
  let inflight = 0;
  let maxInflight = 0;
  const api = fakeApi(async (req) => {
    if (!req.url.pathname.startsWith('/v1/deals')) return PASS();
    inflight++;
    maxInflight = Math.max(maxInflight, inflight);
    await new Promise((r) => setTimeout(r, opts.delayMs ?? 1));
    inflight--;
    const limit = Math.min(100, Number(req.url.searchParams.get('limit') ?? 100));
    const offset = Number(req.url.searchParams.get('offset') ?? 0);
    const headers: Record<string, string> = {};
    if (opts.total !== false) headers['x-pagination-total-count'] = String(n);
    if (opts.link !== false && offset + limit < n) {
      const next = new URL(req.url);
      next.searchParams.set('offset', String(offset + limit));
      next.searchParams.set('limit', String(limit));
      headers.link = `<${next.href}>; rel="next", <${req.url.origin}/v1/deals?offset=0&limit=${limit}>; rel="first"`;
    }
    return json(deals.slice(offset, offset + limit), 200, headers);
  });
  return {
    api,
    get maxInflight() {
      return maxInflight;
    },
  };
}

describe('deals.list', () => {
  test('iterates every deal across pages exactly once, in order, with the limit clamped to 100', async () => {
    const { api } = dealsApi(1234);
    const client = new DealApiClient(clientOptions(api.fetch));
    const ids: number[] = [];
    for await (const d of client.deals.list({ pageSize: 500 })) ids.push(d.id);
    expect(ids).toEqual(Array.from({ length: 1234 }, (_, i) => i + 1));
    expect(api.api()).toHaveLength(13);
  });

  test('fetches the remaining pages concurrently by offset, bounded', async () => {
    const fake = dealsApi(2000, { delayMs: 5 });
    const client = new DealApiClient({ ...clientOptions(fake.api.fetch), concurrency: 4 });
    const all = await client.deals.list().toArray({ limit: 10_000 });
    expect(all).toHaveLength(2000);
    expect(fake.maxInflight).toBe(4);
  });

  test('with concurrency 1 follows Link next one page at a time', async () => {
    const fake = dealsApi(350);
    const client = new DealApiClient({ ...clientOptions(fake.api.fetch), concurrency: 1 });
    const all = await client.deals.list({ isArchived: false }).toArray({ limit: 1000 });
    expect(all).toHaveLength(350);
    expect(fake.maxInflight).toBe(1);
    expect(fake.api.api().map((r) => r.url.searchParams.get('offset'))).toEqual(['0', '100', '200', '300']);
    expect(fake.api.api().every((r) => r.url.searchParams.get('isArchived') === 'false')).toBe(true);
  });

  test('without a total or Link it pages by offset until a short page', async () => {
    const fake = dealsApi(250, { total: false, link: false });
    const all = await new DealApiClient(clientOptions(fake.api.fetch)).deals.list().toArray({ limit: 1000 });
    expect(all.map((d) => d.id)).toEqual(Array.from({ length: 250 }, (_, i) => i + 1));
  });

  test('page access gives the total count; toArray needs a limit and stops there', async () => {
    const fake = dealsApi(420);
    const client = new DealApiClient(clientOptions(fake.api.fetch));
    const page = await client.deals.list().firstPage();
    expect(page.total).toBe(420);
    expect(page.items).toHaveLength(100);
    expect(await client.deals.list().total()).toBe(420);
    expect(await client.deals.list().toArray({ limit: 150 })).toHaveLength(150);
    await expect(client.deals.list().toArray({} as any)).rejects.toThrow(/limit/);
    const pages = [];
    for await (const p of client.deals.list().pages()) pages.push(p.items.length);
    expect(pages).toEqual([100, 100, 100, 100, 20]);
  });

  test('sends filters as the API reads them: arrays comma-separated, dates in ISO 8601', async () => {
    const fake = dealsApi(1);
    await new DealApiClient(clientOptions(fake.api.fetch)).deals
      .list({
        buyerIds: [1, 2],
        createdOrModifiedSince: new Date('2025-01-02T03:04:05Z'),
        sortBy: 'name',
        sortAsc: true,
      })
      .toArray({ limit: 5 });
    const q = fake.api.api()[0].url.searchParams;
    expect(q.get('buyerIds')).toBe('1,2');
    expect(q.get('createdOrModifiedSince')).toBe('2025-01-02T03:04:05.000Z');
    expect(q.get('sortAsc')).toBe('true');
  });

  test('refuses to follow a Link to another origin (the token would leak)', async () => {
    const api = fakeApi((req) =>
      req.url.pathname.startsWith('/v1/deals')
        ? json([{ id: 1 }], 200, { link: '<https://evil.test/v1/deals?offset=1>; rel="next"' })
        : PASS(),
    );
    const client = new DealApiClient({ ...clientOptions(api.fetch), concurrency: 1 });
    await expect(client.deals.list({ pageSize: 1 }).toArray({ limit: 5 })).rejects.toThrow(/another origin/);
  });
});

describe('lookups.list', () => {
  test('pages a lookup by offset, passes ids and search, and caps at limit', async () => {
    const items = Array.from({ length: 230 }, (_, i) => ({ id: i + 1, name: `dsp ${i + 1}`, isArchived: false }));
    const api = fakeApi((req) => {
      if (!req.url.pathname.startsWith('/v1/dsps')) return PASS();
      const limit = Number(req.url.searchParams.get('limit'));
      const offset = Number(req.url.searchParams.get('offset'));
      return json(items.slice(offset, offset + limit));
    });
    const client = new DealApiClient(clientOptions(api.fetch));
    expect(await client.lookups.list('DSPS').toArray({ limit: 1000 })).toHaveLength(230);
    expect(await client.lookups.list('dsps', { limit: 120, offset: 10 }).toArray({ limit: 1000 })).toEqual(
      items.slice(10, 130),
    );
    await client.lookups.list('dsps', { ids: [1, 2], search: 'trade' }).toArray({ limit: 10 });
    const last = api.api().at(-1)!.url.searchParams;
    expect(last.get('ids')).toBe('1,2');
    expect(last.get('extendedSearch')).toBe('trade');
    expect(() => client.lookups.list('deals/1')).toThrow(/unknown lookup resource/);
  });
});

describe('PagedList', () => {
  test('stops fetching when the consumer breaks early', async () => {
    let fetched = 0;
    const list = new PagedList<number>(
      {
        pageSize: 10,
        startOffset: 0,
        fetchOffset: async (offset) => {
          fetched++;
          return { items: Array.from({ length: 10 }, (_, i) => offset + i), offset, total: 1000 };
        },
      },
      { concurrency: 3 },
    );
    for await (const n of list) if (n === 15) break;
    expect(fetched).toBeLessThanOrEqual(5); // the first page, the window of 3, and the one launched as page 2 was taken
  });

  test('parseLinkHeader reads every relation', () => {
    const links = parseLinkHeader(
      '<https://a.test/deals?offset=100>; rel="next", </deals?offset=0>; rel="first", <https://a.test/deals?offset=900>; rel=last',
      new URL('https://a.test/x'),
    );
    expect(links.next.href).toBe('https://a.test/deals?offset=100');
    expect(links.first.href).toBe('https://a.test/deals?offset=0');
    expect(links.last.searchParams.get('offset')).toBe('900');
  });

  test('parseLinkHeader reads quoted and multi-valued relations and skips links it cannot use', () => {
    const base = new URL('https://a.test/x');
    const header = '<a,b>; title="x, y"; rel="next last", <http://[>; rel=prev, <c>;rel = first ;x=1, <d>';
    const links = parseLinkHeader(header, base);
    expect(links.next.href).toBe('https://a.test/a,b');
    expect(links.last.href).toBe('https://a.test/a,b');
    expect(links.first.href).toBe('https://a.test/c');
    expect(Object.keys(links).sort()).toEqual(['first', 'last', 'next']);
    expect(parseLinkHeader(null, base)).toEqual({});
  });

  test('parseLinkHeader takes time linear in the header, whatever a hostile server sends', () => {
    const base = new URL('https://a.test/x');
    const hostile = ['<'.repeat(65_536), '<a>;' + ' ;'.repeat(32_768), '<a>; rel="' + ','.repeat(65_536)];
    hostile.push(', <'.repeat(21_845));
    for (const header of hostile) {
      const started = performance.now();
      parseLinkHeader(header, base);
      // A quadratic reader needs seconds for 64 K characters; a linear one a few milliseconds.
      expect(performance.now() - started, header.slice(0, 12)).toBeLessThan(250);
    }
  });
});

describe('limits', () => {
  test('a limit stops requesting pages: toArray({ limit: 120 }) fetches two pages, not every page', async () => {
    const fake = dealsApi(5000);
    const client = new DealApiClient(clientOptions(fake.api.fetch));
    expect(await client.deals.list().toArray({ limit: 120 })).toHaveLength(120);
    expect(fake.api.api()).toHaveLength(2);
    const ids: number[] = [];
    for await (const d of client.deals.list({ limit: 250, offset: 10 })) ids.push(d.id);
    expect(ids).toEqual(Array.from({ length: 250 }, (_, i) => i + 11));
    expect(fake.api.api()).toHaveLength(5);
  });
});

describe('a listing is bounded whatever the service says', () => {
  /** A source of pages of `size` new items each, at any offset, with the given total and next links. */
  function lying(opts: { total?: number; next?: (url: URL) => URL | undefined; same?: boolean } = {}) {
    const urls: string[] = [];
    const pageAt = (url: URL) => {
      urls.push(url.href);
      const offset = Number(url.searchParams.get('offset') ?? 0);
      const items = Array.from({ length: 10 }, (_, i) => (opts.same ? i : offset + i));
      return { items, offset, total: opts.total, nextUrl: opts.next?.(url), url };
    };
    const source = {
      pageSize: 10,
      startOffset: 0,
      fetchOffset: async (offset: number) => pageAt(new URL(`https://api.test/deals?offset=${offset}&limit=10`)),
      fetchUrl: async (url: URL) => pageAt(url),
      keyOf: (n: number) => n,
    };
    return { source, urls };
  }
  const failure = async (list: PagedList<number>) => {
    const got: number[] = [];
    try {
      for await (const n of list) got.push(n);
    } catch (e) {
      return { got, error: e as PaginationError };
    }
    throw new Error(`the listing ended without an error, after ${got.length} items`);
  };

  test('a total over maxItems is refused after the first page, whatever the total (10^12: no page more asked)', async () => {
    for (const total of [1e12, 1e8, 100_001]) {
      const { source, urls } = lying({ total });
      const { got, error } = await failure(new PagedList(source));
      expect(error).toBeInstanceOf(PaginationError);
      expect(error).toMatchObject({ problem: 'too-many-items', listed: 10, name: 'PaginationError' });
      expect(error.message).toContain(`the service reports ${total.toLocaleString('en-US')} items`);
      expect(got).toHaveLength(10);
      expect(urls).toHaveLength(1);
    }
    // Within a limit, a huge total is no problem: pages are made as they are asked for.
    const { source, urls } = lying({ total: 1e12 });
    expect(await new PagedList(source, { limit: 25, concurrency: 4 }).toArray({ limit: 100 })).toHaveLength(25);
    expect(urls).toHaveLength(3);
  });

  test('a next link to a page already fetched, or back to an earlier offset, is refused', async () => {
    const self = lying({ next: (url) => new URL(url) });
    expect(await failure(new PagedList(self.source, { concurrency: 1 }))).toMatchObject({
      got: { length: 10 },
      error: { problem: 'repeated-next' },
    });
    // The same page with its parameters reordered is the same page.
    const reordered = lying({ next: (url) => new URL(`${url.origin}${url.pathname}?limit=10&offset=0`) });
    expect((await failure(new PagedList(reordered.source))).error.problem).toBe('repeated-next');
    const back = lying({
      next: (url) => new URL(`${url.origin}/deals?offset=${url.searchParams.get('offset') === '0' ? 10 : 5}`),
    });
    const { error } = await failure(new PagedList(back.source));
    expect(error).toMatchObject({ problem: 'not-advancing', listed: 20 });
    expect(error.message).toContain('next link does not advance (offset 10, then 5)');
  });

  test('a page holding only items already listed is refused, by Link or by offset', async () => {
    let n = 0;
    const cursor = lying({ same: true, next: () => new URL(`https://api.test/deals?cursor=${++n}`) });
    expect(await failure(new PagedList(cursor.source))).toMatchObject({
      got: { length: 10 },
      error: { problem: 'not-advancing' },
    });
    expect(cursor.urls).toHaveLength(2);
    const offsets = lying({ same: true, total: 1_000 });
    const { error } = await failure(new PagedList(offsets.source, { concurrency: 3 }));
    expect(error.problem).toBe('not-advancing');
    // The first page, the window of 3, and the one launched as the second page was taken.
    expect(offsets.urls.length).toBeLessThanOrEqual(5);
  });

  test('pages without end stop at maxPages or maxItems, after every item fetched', async () => {
    const pages = lying({
      next: (url) => new URL(`https://api.test/deals?offset=${Number(url.searchParams.get('offset')) + 10}`),
    });
    expect(await failure(new PagedList(pages.source, { maxPages: 7 }))).toMatchObject({
      got: { length: 70 },
      error: { problem: 'too-many-pages', listed: 70 },
    });
    expect(pages.urls).toHaveLength(7);
    const items = lying({
      next: (url) => new URL(`https://api.test/deals?offset=${Number(url.searchParams.get('offset')) + 10}`),
    });
    expect(await failure(new PagedList(items.source, { maxItems: 45 }))).toMatchObject({
      got: { length: 45 },
      error: { problem: 'too-many-items', listed: 45 },
    });
    const windowed = lying({ total: 1_000 });
    const { got, error } = await failure(new PagedList(windowed.source, { maxPages: 12, concurrency: 5 }));
    expect(error.problem).toBe('too-many-pages');
    expect(got).toHaveLength(120);
    expect(windowed.urls).toHaveLength(12);
  });

  test('a short page ends an offset listing whatever the total said, and maxPages, maxItems are checked', async () => {
    const items = Array.from({ length: 35 }, (_, i) => i);
    let requests = 0;
    const list = new PagedList<number>(
      {
        pageSize: 10,
        startOffset: 0,
        fetchOffset: async (offset) => {
          requests++;
          return { items: items.slice(offset, offset + 10), offset, total: 10_000 };
        },
      },
      { concurrency: 2 },
    );
    expect(await list.toArray({ limit: Infinity })).toEqual(items);
    expect(requests).toBeLessThanOrEqual(6);
    const source = { pageSize: 1, startOffset: 0, fetchOffset: async () => ({ items: [], offset: 0 }) };
    for (const option of ['maxPages', 'maxItems'])
      expect(() => new PagedList(source, { [option]: 0 })).toThrow(`${option} must be a positive integer, got 0`);
  });

  test('the deal API client passes maxPages and maxItems through and never sends them as filters', async () => {
    const fake = dealsApi(500);
    const client = new DealApiClient({ ...clientOptions(fake.api.fetch), concurrency: 1 });
    const error = await client.deals
      .list({ maxPages: 2, maxItems: 1_000 })
      .toArray({ limit: 1_000 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PaginationError);
    expect(fake.api.api()).toHaveLength(2);
    expect(
      fake.api.api().every((r) => !r.url.searchParams.has('maxPages') && !r.url.searchParams.has('maxItems')),
    ).toBe(true);
  });
});
