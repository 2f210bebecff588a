import { describe, expect, test } from 'vitest';
import { DealApiClient, PagedList, parseLinkHeader } from '../../../src/deals/index.js';
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
