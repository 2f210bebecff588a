import { afterAll, describe, expect, test } from 'vitest';
import { DSP, OTHER_COMPANY, api, clock, dealBody, inProcess, login, overHttp, sim, type Fetcher } from './helpers.js';
import type { DealApiSimulator, DealApiSimulatorOptions } from '../../src/simulator/index.js';

const closers: (() => Promise<void>)[] = [];
afterAll(async () => {
  await Promise.all(closers.map((c) => c()));
});

type Call = ReturnType<typeof api>;

async function setup(kind: 'in-process' | 'http', options: DealApiSimulatorOptions = {}) {
  const s = sim(options);
  let f: Fetcher = inProcess(s);
  if (kind === 'http') {
    const { url, close } = await s.listen();
    closers.push(close);
    f = overHttp(url);
  }
  return {
    s,
    f,
    call: api(f, await login(f)),
    dsp: api(f, await login(f, DSP)),
    other: api(f, await login(f, OTHER_COMPANY)),
  };
}

async function create(call: Call, overrides: Record<string, unknown> = {}) {
  const res = await call('/deals', { method: 'POST', body: dealBody(overrides) });
  expect(res.status).toBe(201);
  return (await res.json()) as Record<string, any>;
}

function links(res: Response): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (res.headers.get('link') ?? '').split(/,\s*(?=<)/)) {
    const m = /^<([^>]+)>;\s*rel="(\w+)"$/.exec(part.trim());
    if (m) out[m[2]] = m[1];
  }
  return out;
}

describe.each(['in-process', 'http'] as const)('deals (%s)', (kind) => {
  test('create returns 201 with Location, X-HistoryId and the created deal, whose dealId differs from id', async () => {
    const { call } = await setup(kind);
    const res = await call('/deals', { method: 'POST', body: dealBody() });
    expect(res.status).toBe(201);
    const deal = (await res.json()) as Record<string, any>;
    expect(res.headers.get('location')).toMatch(new RegExp(`/deals/${deal.id}$`));
    expect(Number(res.headers.get('x-historyid'))).toBeGreaterThan(0);
    expect(typeof deal.dealId).toBe('string');
    expect(deal.dealId).not.toBe(String(deal.id));
    expect(deal).toMatchObject({ name: 'Premium FR display', isArchived: false, isEditable: true, typeId: 2 });
    const loc = new URL(res.headers.get('location')!);
    const again = await call(loc.pathname);
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual(deal);
  });

  test('read, list and delete only see the caller company’s deals', async () => {
    const { call, other } = await setup(kind);
    const mine = await create(call);
    const theirs = await create(other, { name: 'Other company deal' });
    expect((await call(`/deals/${theirs.id}`)).status).toBe(404);
    expect((await call(`/deals/${theirs.id}`, { method: 'DELETE' })).status).toBe(404);
    const list = (await (await call('/deals')).json()) as { id: number }[];
    expect(list.map((d) => d.id)).toEqual([mine.id]);
    expect((await call(`/deals/${mine.id}`, { method: 'DELETE' })).status).toBe(204);
    expect((await call(`/deals/${mine.id}`)).status).toBe(404);
    expect((await other(`/deals/${theirs.id}`)).status).toBe(200);
  });

  test('X-CopyOfDealId creates a copy, body fields overriding the original', async () => {
    const { call } = await setup(kind);
    const original = await create(call, { platformIds: [1, 2] });
    const res = await call('/deals', {
      method: 'POST',
      body: { price: 4 },
      headers: { 'x-copyofdealid': String(original.id) },
    });
    expect(res.status).toBe(201);
    const copy = (await res.json()) as Record<string, any>;
    expect(copy.id).not.toBe(original.id);
    // Copied as it is, name included: only what the body gives changes.
    expect(copy).toMatchObject({ name: 'Premium FR display', platformIds: [1, 2], price: 4 });
    expect((await call('/deals', { method: 'POST', body: {}, headers: { 'x-copyofdealid': '999999' } })).status).toBe(
      404,
    );
  });

  test('PUT replaces the deal: omitted fields are reset to their defaults', async () => {
    const { call } = await setup(kind);
    const deal = await create(call, { platformIds: [1], viewabilityTargetingPercentage: 70, callerDealIds: ['abc'] });
    const res = await call(`/deals/${deal.id}`, {
      method: 'PUT',
      body: { ...dealBody({ isActive: false }), id: deal.id, dealId: deal.dealId },
    });
    expect(res.status).toBe(200);
    const updated = (await res.json()) as Record<string, any>;
    expect(updated).toMatchObject({
      isActive: false,
      platformIds: [],
      viewabilityTargetingPercentage: null,
      callerDealIds: [],
      id: deal.id,
      dealId: deal.dealId,
      createdAt: deal.createdAt,
    });
    expect(await (await call(`/deals/${deal.id}`)).json()).toEqual(updated);
  });

  test('PUT accepts a deal as read back (read-only fields included) and enforces immutables', async () => {
    const { call } = await setup(kind);
    const deal = await create(call);
    expect((await call(`/deals/${deal.id}`, { method: 'PUT', body: { ...deal, name: 'Renamed' } })).status).toBe(200);
    const res = await call(`/deals/${deal.id}`, { method: 'PUT', body: { ...deal, currency: 'USD', pricingModel: 2 } });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { errors: { field: string }[] };
    expect(body.errors.map((e) => e.field)).toEqual(expect.arrayContaining(['currency', 'pricingModel']));
    expect(((await (await call(`/deals/${deal.id}`)).json()) as { currency: string }).currency).toBe('EUR');
  });

  test('a DSP without multiple-buyer support is refused with the API message and the DSP id', async () => {
    const { call } = await setup(kind);
    const res = await call('/deals', { method: 'POST', body: dealBody({ buyerIds: [], dspIds: [4] }) });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { message: string }).message).toBe(
      'Deal cannot target DSPs that do not support multiple-buyer targeting: 4',
    );
  });

  test('domain lists attach and detach with 204; DSP callers get 403', async () => {
    const { call, dsp } = await setup(kind);
    const deal = await create(call);
    expect((await call(`/deals/${deal.id}/domainlists`, { method: 'POST', body: { domainListId: 2 } })).status).toBe(
      204,
    );
    expect(((await (await call(`/deals/${deal.id}`)).json()) as { domainListId: number }).domainListId).toBe(2);
    const unknown = await call(`/deals/${deal.id}/domainlists`, { method: 'POST', body: { domainListId: 999 } });
    expect(unknown.status).toBe(400);
    expect(((await unknown.json()) as { errors: { field: string }[] }).errors[0].field).toBe('domainListId');
    expect((await dsp(`/deals/${deal.id}/domainlists`, { method: 'POST', body: { domainListId: 1 } })).status).toBe(
      403,
    );
    expect((await dsp(`/deals/${deal.id}/domainlists`, { method: 'DELETE' })).status).toBe(403);
    expect((await call(`/deals/${deal.id}/domainlists`, { method: 'DELETE', body: { domainListId: 1 } })).status).toBe(
      400,
    );
    expect((await call(`/deals/${deal.id}/domainlists`, { method: 'DELETE' })).status).toBe(204);
    expect(
      ((await (await call(`/deals/${deal.id}`)).json()) as { domainListId: number | null }).domainListId,
    ).toBeNull();
  });

  test('countBreakdown counts the caller’s deals by status and type', async () => {
    const { call } = await setup(kind);
    await create(call);
    await create(call, { isActive: false });
    await create(call, { pricingModel: 0, price: 0, companyVendorCostRate: 0.1 });
    const res = await call('/deals/countBreakdown');
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      total: 3,
      active: 2,
      paused: 1,
      archived: 0,
      byType: { DirectDeal: 2, PrivateAuction: 1, GuaranteedDeal: 0 },
    });
  });

  test('walking Link next from first to last visits every deal exactly once', async () => {
    const { s, call } = await setup(kind);
    s.seedDeals(237);
    const first = await call('/deals?limit=50&sortBy=name&sortAsc=false');
    expect(first.headers.get('x-pagination-total-count')).toBe('237');
    const seen: number[] = [];
    let res = first;
    let offset = '0';
    let pages = 0;
    for (;;) {
      seen.push(...((await res.json()) as { id: number }[]).map((d) => d.id));
      pages++;
      const l = links(res);
      expect(l.first).toBeDefined();
      expect(l.last).toBeDefined();
      if (pages > 1) expect(l.prev).toBeDefined();
      if (!l.next) {
        // The page without a next link is the one `last` points to.
        expect(new URL(l.last).searchParams.get('offset')).toBe(offset);
        break;
      }
      const next = new URL(l.next);
      expect(next.searchParams.get('sortBy')).toBe('name');
      offset = next.searchParams.get('offset')!;
      res = await call(next.pathname + next.search);
    }
    expect(pages).toBe(5);
    expect(seen).toHaveLength(237);
    expect(new Set(seen).size).toBe(237);
  });

  test('limit above 100 is clamped to 100', async () => {
    const { s, call } = await setup(kind);
    s.seedDeals(130);
    const res = await call('/deals?limit=500');
    expect(((await res.json()) as unknown[]).length).toBe(100);
    expect(links(res).next).toMatch(/offset=100/);
  });

  test('filters by buyer, DSP, platform, format, archived, parent and recency', async () => {
    const c = clock();
    const { call } = await setup(kind, { now: c.now });
    const a = await create(call, { buyerIds: [101], platformIds: [1], impressionTypeIds: [0] });
    const b = await create(call, { buyerIds: [], dspIds: [1], platformIds: [3] });
    const old = await create(call, { beginDate: '2030-01-01T00:00:00Z', endDate: '2030-02-01T00:00:00Z' });
    c.advance(60_000);
    const since = new Date(c.now()).toISOString();
    c.advance(60_000);
    const fresh = await create(call, { endDate: new Date(c.now() + 3 * 86_400_000).toISOString() });
    const ids = async (q: string) => ((await (await call(`/deals?${q}`)).json()) as { id: number }[]).map((d) => d.id);
    expect(await ids('buyerIds=101')).toEqual([a.id, old.id, fresh.id]);
    expect(await ids('dspIds=1')).toEqual([b.id]);
    expect(await ids('partnerIds=1')).toEqual([b.id]);
    expect(await ids('platformIds=3,4')).toEqual([b.id]);
    expect(await ids('formatIds=0')).toEqual([a.id]);
    expect(await ids('isArchived=true')).toEqual([old.id]);
    expect(await ids('isArchived=false')).toEqual([a.id, b.id, fresh.id]);
    expect(await ids(`createdOrModifiedSince=${encodeURIComponent(since)}`)).toEqual([fresh.id]);
    expect(await ids('isSoonExpired=true')).toEqual([fresh.id]);
    expect(await ids('isParentDeal=true')).toEqual([]);
  });

  test('sorts by a field in either direction', async () => {
    const { call } = await setup(kind);
    await create(call, { name: 'b', price: 3 });
    await create(call, { name: 'a', price: 1 });
    await create(call, { name: 'c', price: 2 });
    const names = async (q: string) =>
      ((await (await call(`/deals?${q}`)).json()) as { name: string }[]).map((d) => d.name);
    expect(await names('sortBy=name')).toEqual(['a', 'b', 'c']);
    expect(await names('sortBy=price&sortAsc=false')).toEqual(['b', 'c', 'a']);
    const bad = await call('/deals?sortBy=colour');
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { errors: { field: string }[] }).errors[0].field).toBe('sortBy');
  });

  test('the 16th creation of a UTC day gets 429 CREATION_QUOTA_EXCEEDED; the quota resets the next day', async () => {
    const c = clock();
    const { s, f, call, other } = await setup(kind, { now: c.now });
    for (let i = 0; i < 15; i++) await create(call);
    const before = s.deals();
    const res = await call('/deals', { method: 'POST', body: dealBody() });
    expect(res.status).toBe(429);
    expect(await res.json()).toMatchObject({ code: 'CREATION_QUOTA_EXCEEDED' });
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(s.deals()).toEqual(before);
    await create(other);
    c.advance(86_400_000);
    // Tokens live 10 hours: a day later the caller logs in again.
    await create(api(f, await login(f)));
  });

  test('the 501st update of a UTC day gets 429 UPDATE_QUOTA_EXCEEDED', async () => {
    const c = clock();
    const { call } = await setup(kind, { now: c.now, quotas: { updatesPerDay: 500 } });
    const deal = await create(call);
    const put = (i: number) => call(`/deals/${deal.id}`, { method: 'PUT', body: dealBody({ name: `v${i}` }) });
    for (let i = 0; i < 500; i++) expect((await put(i)).status).toBe(200);
    const res = await put(500);
    expect(res.status).toBe(429);
    expect(await res.json()).toMatchObject({ code: 'UPDATE_QUOTA_EXCEEDED' });
    expect(res.headers.get('retry-after')).toBe(String(12 * 3600));
    expect(((await (await call(`/deals/${deal.id}`)).json()) as { name: string }).name).toBe('v499');
  }, 60_000);
});

describe('DSP callers', () => {
  test('are refused the identity provider, third-party provider and domain list lookups with 403', async () => {
    const { dsp, call } = await setup('in-process');
    for (const r of ['identityProviders', 'thirdPartyProviders', 'domainLists', 'DOMAINLISTS']) {
      expect((await dsp(`/${r}`)).status).toBe(403);
      expect((await call(`/${r}`)).status).toBe(200);
    }
    expect((await dsp('/buyers')).status).toBe(200);
  });

  test('cannot set a domain list through POST or PUT', async () => {
    const { dsp } = await setup('in-process');
    expect((await dsp('/deals', { method: 'POST', body: dealBody({ domainListId: 1 }) })).status).toBe(403);
    const res = await dsp('/deals', { method: 'POST', body: dealBody() });
    const deal = (await res.json()) as { id: number };
    expect((await dsp(`/deals/${deal.id}`, { method: 'PUT', body: dealBody({ domainListId: 2 }) })).status).toBe(403);
  });
});

describe('guaranteed deals through the API', () => {
  test('a guaranteed deal in flight cannot move its beginDate', async () => {
    const c = clock(Date.parse('2030-01-01T00:00:00Z'));
    const { f, call: first } = await setup('in-process', { now: c.now });
    let call = first;
    const body = dealBody({
      pricingModel: 3,
      price: 12,
      buyerIds: [101],
      impressionTypeIds: [0],
      beginDate: '2030-01-10T00:00:00Z',
      endDate: '2030-02-10T00:00:00Z',
    });
    const deal = await create(call, body);
    c.set(Date.parse('2030-01-20T00:00:00Z'));
    call = api(f, await login(f));
    const res = await call(`/deals/${deal.id}`, {
      method: 'PUT',
      body: { ...body, beginDate: '2030-01-15T00:00:00Z' },
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { errors: { field: string }[] }).errors[0].field).toBe('beginDate');
    expect(
      (await call(`/deals/${deal.id}`, { method: 'PUT', body: { ...body, endDate: '2030-03-10T00:00:00Z' } })).status,
    ).toBe(200);
  });

  test('a buyer not eligible for guaranteed deals is refused', async () => {
    const { s, call } = await setup('in-process');
    const ineligible = s.reference.buyers.find((b) => !b.isGuaranteedDealEligible)!;
    const res = await call('/deals', {
      method: 'POST',
      body: dealBody({
        pricingModel: 3,
        price: 12,
        buyerIds: [ineligible.id],
        impressionTypeIds: [0],
        beginDate: '2031-01-10T00:00:00Z',
        endDate: '2031-02-10T00:00:00Z',
      }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { errors: { message: string }[] }).errors[0].message).toMatch(/not eligible/);
  });

  test('frequency capping without a capable identity provider is dropped with a Warning header', async () => {
    const { call } = await setup('in-process');
    const res = await call('/deals', {
      method: 'POST',
      body: dealBody({ identityProviderId: 5, timeFrameId: 1, impressions: 3 }),
    });
    expect(res.status).toBe(201);
    expect(res.headers.get('warning')).toMatch(/frequency capping ignored/);
    expect(await res.json()).toMatchObject({ timeFrameId: null, impressions: null, identityProviderId: 5 });
    const kept = await create(call, { identityProviderId: 1, timeFrameId: 1, impressions: 3 });
    expect(kept).toMatchObject({ timeFrameId: 1, impressions: 3 });
  });
});

export type { DealApiSimulator };
