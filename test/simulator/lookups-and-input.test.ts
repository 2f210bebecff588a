import { afterAll, describe, expect, test } from 'vitest';
import { LOOKUP_RESOURCES } from '../../src/deals/rules/index.js';
import { api, dealBody, inProcess, login, overHttp, sim, type Fetcher } from './helpers.js';

const closers: (() => Promise<void>)[] = [];
afterAll(async () => {
  await Promise.all(closers.map((c) => c()));
});

async function setup(kind: 'in-process' | 'http') {
  const s = sim();
  let f: Fetcher = inProcess(s);
  if (kind === 'http') {
    const { url, close } = await s.listen();
    closers.push(close);
    f = overHttp(url);
  }
  return { s, f, call: api(f, await login(f)) };
}

describe.each(['in-process', 'http'] as const)('lookups (%s)', (kind) => {
  test('every lookup resource answers with a non-empty array of items with id and name', async () => {
    const { call } = await setup(kind);
    for (const r of LOOKUP_RESOURCES) {
      const res = await call(`/${r}`);
      expect(res.status, r).toBe(200);
      const items = (await res.json()) as { id: number; name: string }[];
      expect(items.length, r).toBeGreaterThan(0);
      expect(typeof items[0].name).toBe('string');
    }
  });

  test('resource names are case-insensitive', async () => {
    const { call } = await setup(kind);
    const a = await (await call('/audienceSegments')).json();
    expect(await (await call('/AudienceSegments')).json()).toEqual(a);
    expect(await (await call('/AUDIENCESEGMENTS')).json()).toEqual(a);
    expect((await call('/nothingHere')).status).toBe(404);
  });

  test('countries are the 249 ISO 3166 codes', async () => {
    const { call } = await setup(kind);
    const countries = (await (await call('/countries')).json()) as { code: string; name: string }[];
    expect(countries).toHaveLength(249);
    expect(countries.find((c) => c.code === 'FR')?.name).toBe('France');
    expect(countries.some((c) => c.code === 'UK')).toBe(false);
  });

  test('ids, extendedSearch, limit and offset select items', async () => {
    const { call } = await setup(kind);
    const byIds = (await (await call('/dsps?ids=1,4')).json()) as { id: number; isMultiBuyerDealForbidden: boolean }[];
    expect(byIds.map((d) => d.id)).toEqual([1, 4]);
    expect(byIds[1].isMultiBuyerDealForbidden).toBe(true);
    const paris = (await (await call('/cities?extendedSearch=PARIS')).json()) as Record<string, unknown>[];
    expect(paris).toHaveLength(1);
    expect(Object.keys(paris[0]).sort()).toEqual([
      'countryId',
      'extendedName',
      'id',
      'isArchived',
      'name',
      'regionId',
      'stateId',
    ]);
    const all = (await (await call('/countries')).json()) as { id: number }[];
    const page = (await (await call('/countries?limit=5&offset=10')).json()) as { id: number }[];
    expect(page).toEqual(all.slice(10, 15));
    const bad = await call('/countries?ids=a,b');
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { errors: { field: string }[] }).errors[0].field).toBe('ids');
  });
});

describe.each(['in-process', 'http'] as const)('bad input (%s)', (kind) => {
  async function refused(
    kind2: typeof kind,
    send: (call: ReturnType<typeof api>, id: number) => Promise<Response>,
    status: number,
    field?: string,
  ) {
    const { s, call } = await setup(kind2);
    const created = (await (await call('/deals', { method: 'POST', body: dealBody() })).json()) as { id: number };
    const before = s.deals();
    const res = await send(call, created.id);
    expect(res.status).toBe(status);
    const body = (await res.json()) as { message: string; errors?: { field: string; message: string }[] };
    expect(body.message.length).toBeGreaterThan(0);
    if (field !== undefined) expect(body.errors?.map((e) => e.field)).toContain(field);
    expect(s.deals()).toEqual(before);
  }

  test('wrong types are refused with the field named and nothing stored changes', async () => {
    await refused(kind, (call) => call('/deals', { method: 'POST', body: dealBody({ price: 'cheap' }) }), 400, 'price');
    await refused(
      kind,
      (call, id) => call(`/deals/${id}`, { method: 'PUT', body: dealBody({ buyerIds: '101' }) }),
      400,
      'buyerIds',
    );
  });

  test('unknown fields are refused by name', async () => {
    await refused(kind, (call) => call('/deals', { method: 'POST', body: dealBody({ colour: 'red' }) }), 400, 'colour');
    await refused(
      kind,
      (call, id) => call(`/deals/${id}`, { method: 'PUT', body: dealBody({ colour: 'red' }) }),
      400,
      'colour',
    );
  });

  test('partnerIds is refused on POST and PUT', async () => {
    await refused(
      kind,
      (call) => call('/deals', { method: 'POST', body: dealBody({ partnerIds: [1] }) }),
      400,
      'partnerIds',
    );
    await refused(
      kind,
      (call, id) => call(`/deals/${id}`, { method: 'PUT', body: dealBody({ partnerIds: [1] }) }),
      400,
      'partnerIds',
    );
  });

  test('broken JSON gets 400', async () => {
    await refused(kind, (call) => call('/deals', { method: 'POST', raw: '{"name": "x",' }), 400, '');
    await refused(kind, (call, id) => call(`/deals/${id}`, { method: 'PUT', raw: 'not json' }), 400, '');
    await refused(kind, (call) => call('/deals', { method: 'POST', raw: '' }), 400, '');
  });

  test('a body above 1 MiB gets 413', async () => {
    const huge = JSON.stringify(dealBody({ name: 'x'.repeat(2 * 1024 * 1024) }));
    await refused(kind, (call) => call('/deals', { method: 'POST', raw: huge }), 413);
    await refused(kind, (call, id) => call(`/deals/${id}`, { method: 'PUT', raw: huge }), 413);
  });

  test('after a 413 the next requests are answered (the unread body never breaks a kept-alive connection)', async () => {
    const { call } = await setup(kind);
    const huge = JSON.stringify(dealBody({ name: 'x'.repeat(2 * 1024 * 1024) }));
    for (let round = 0; round < 3; round++) {
      expect((await call('/deals', { method: 'POST', raw: huge })).status).toBe(413);
      for (let i = 0; i < 4; i++) expect((await call('/deals', { method: 'POST', raw: '{}' })).status).toBe(400);
    }
  });

  test('a JSON value that is not an object, and rule violations, get 400 with every field', async () => {
    await refused(kind, (call) => call('/deals', { method: 'POST', raw: '[1,2]' }), 400, '');
    await refused(
      kind,
      (call) =>
        call('/deals', {
          method: 'POST',
          body: dealBody({ dspIds: [1], cityIds: [1001], viewabilityTargetingPercentage: 120 }),
        }),
      400,
      'viewabilityTargetingPercentage',
    );
  });

  test('bad query parameters get 400 naming the parameter', async () => {
    const { call } = await setup(kind);
    for (const [q, field] of [
      ['limit=abc', 'limit'],
      ['offset=-1', 'offset'],
      ['isArchived=maybe', 'isArchived'],
      ['buyerIds=1,x', 'buyerIds'],
      ['createdOrModifiedSince=yesterday', 'createdOrModifiedSince'],
    ]) {
      const res = await call(`/deals?${q}`);
      expect(res.status, q).toBe(400);
      expect(((await res.json()) as { errors: { field: string }[] }).errors[0].field).toBe(field);
    }
    expect((await call('/deals/abc')).status).toBe(404);
  });
});

describe('OpenAPI', () => {
  test('/openapi.json is an OpenAPI 3.1 document whose deal schema comes from the shared zod schema', async () => {
    const { f } = await setup('in-process');
    const res = await f('/openapi.json');
    expect(res.status).toBe(200);
    const doc = await res.json();
    expect(doc.openapi).toBe('3.1.0');
    const write = doc.components.schemas.DealWrite;
    expect(write.additionalProperties).toBe(false);
    expect(write.required).toEqual(expect.arrayContaining(['name', 'currency', 'pricingModel', 'price']));
    expect(write.properties.partnerIds).toBeUndefined();
    expect(
      write.properties.viewabilityTargetingPercentage.anyOf?.[0]?.maximum ??
        write.properties.viewabilityTargetingPercentage.maximum,
    ).toBe(100);
    expect(doc.components.schemas.DealRead.properties.dealId).toBeDefined();
    for (const p of [
      '/oauth/token',
      '/authorize',
      '/deals',
      '/deals/{id}',
      '/deals/{id}/domainlists',
      '/deals/countBreakdown',
      '/countries',
    ]) {
      expect(doc.paths[p], p).toBeDefined();
    }
  });
});
