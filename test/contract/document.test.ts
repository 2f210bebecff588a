/**
 * The OpenAPI document tells the truth about the simulator: each way it used to disagree with the simulator is an
 * exchange here, checked by the independent validator (validator.ts) against the document the simulator serves.
 */
import { describe, expect, test } from 'vitest';
import { validDeal } from '../deals/fixtures.js';
import { COMPANY, DSP, contractRig, explain } from './helpers.js';

const AUTH = (token: string) => ({ authorization: `Bearer ${token}` });
const MIB = 1_048_576;
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

async function rig() {
  const r = await contractRig({ quotas: { creationsPerDay: 1000 } });
  const token = await r.login(COMPANY);
  const dspToken = await r.login(DSP);
  const created = await r.exchange('/deals', { method: 'POST', headers: AUTH(token), body: validDeal() });
  const deal = JSON.parse(created.response.body) as { id: number; dealId: string };
  /** The violations of the exchanges, with a readable failure message. */
  const expectConforming = (...exchanges: Awaited<ReturnType<typeof r.exchange>>[]) => {
    const violations = exchanges.flatMap((e) => r.validator.check(e));
    expect(violations, explain(violations)).toEqual([]);
  };
  /** Calls as one user: `call('PUT', path, body, headers)`. */
  const as =
    (t: string) =>
    (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
      r.exchange(path, { method, headers: { ...AUTH(t), ...headers }, body });
  return { ...r, token, dspToken, deal, expectConforming, call: as(token), dsp: as(dspToken) };
}

describe('statuses the simulator answers are in the document', () => {
  test('400 for a bad limit or ids on a lookup', async () => {
    const r = await rig();
    const bad = [await r.call('GET', '/countries?limit=x'), await r.call('GET', '/countries?ids=a,b')];
    expect(bad.map((e) => e.response.status)).toEqual([400, 400]);
    r.expectConforming(...bad);
  });

  test('404 for X-CopyOfDealId naming no deal', async () => {
    const r = await rig();
    const e = await r.call('POST', '/deals', {}, { 'X-CopyOfDealId': '999999' });
    expect(e.response.status).toBe(404);
    r.expectConforming(e);
  });

  test('403 FORBIDDEN_FOR_DSP on PUT /deals/{id} with a domain list', async () => {
    const r = await rig();
    const own = await r.dsp('POST', '/deals', validDeal({ buyerIds: [], dspIds: [2] }));
    expect(own.response.status).toBe(201);
    const id = (JSON.parse(own.response.body) as { id: number }).id;
    const e = await r.dsp('PUT', `/deals/${id}`, validDeal({ buyerIds: [], dspIds: [2], domainListId: 1 }));
    expect(e.response.status).toBe(403);
    r.expectConforming(own, e);
  });

  test('413 over 1 MiB on every route, not only POST /deals', async () => {
    const r = await rig();
    const big = JSON.stringify({ name: 'x'.repeat(MIB + 10) });
    const json = { 'content-type': 'application/json' };
    const calls = [
      await r.call('PUT', `/deals/${r.deal.id}`, big, json),
      await r.call('POST', `/deals/${r.deal.id}/domainlists`, big, json),
      await r.exchange('/oauth/token', { method: 'POST', headers: json, body: big }),
    ];
    expect(calls.map((e) => e.response.status)).toEqual([413, 413, 413]);
    r.expectConforming(...calls);
  });

  test('400 on DELETE /deals/{id}/domainlists naming a list that is not attached', async () => {
    const r = await rig();
    const e = await r.call('DELETE', `/deals/${r.deal.id}/domainlists`, { domainListId: 2 });
    expect(e.response.status).toBe(400);
    r.expectConforming(e);
  });
});

test('a deal created with a domain in capitals is read back in the shape the document gives', async () => {
  const r = await rig();
  const created = await r.call('POST', '/deals', validDeal({ domains: ['Example.COM'] }));
  expect(created.response.status).toBe(201);
  const read = await r.call('GET', `/deals/${JSON.parse(created.response.body).id}`);
  expect(JSON.parse(read.response.body).domains).toEqual(['Example.COM']);
  r.expectConforming(created, read);
});

describe('requests the simulator accepts, per the guide, are valid in the document', () => {
  test('PUT with the read-only id and dealId', async () => {
    const r = await rig();
    const e = await r.call('PUT', `/deals/${r.deal.id}`, validDeal({ id: r.deal.id, dealId: r.deal.dealId }));
    expect(e.response.status).toBe(200);
    r.expectConforming(e);
  });

  test('POST /deals with X-CopyOfDealId and a partial or empty body', async () => {
    const r = await rig();
    const copy = { 'X-CopyOfDealId': String(r.deal.id) };
    const calls = [await r.call('POST', '/deals', { price: 3 }, copy), await r.call('POST', '/deals', {}, copy)];
    expect(calls.map((e) => e.response.status)).toEqual([201, 201]);
    r.expectConforming(...calls);
  });

  test('date-only beginDate and createdOrModifiedSince', async () => {
    const r = await rig();
    const calls = [
      await r.call('POST', '/deals', validDeal({ beginDate: '2030-07-01', endDate: '2030-08-01' })),
      await r.call('GET', '/deals?createdOrModifiedSince=2030-01-01'),
    ];
    expect(calls.map((e) => e.response.status)).toEqual([201, 200]);
    r.expectConforming(...calls);
  });

  test('a body on DELETE /deals/{id}/domainlists', async () => {
    const r = await rig();
    await r.call('POST', `/deals/${r.deal.id}/domainlists`, { domainListId: 1 });
    const e = await r.call('DELETE', `/deals/${r.deal.id}/domainlists`, { domainListId: 1 });
    expect(e.response.status).toBe(204);
    r.expectConforming(e);
  });
});

describe('requests the simulator refuses are invalid in the document', () => {
  const refused: [string, Record<string, unknown>][] = [
    ['a rate above 1', validDeal({ pricingModel: 0, price: 0, companyVendorCostRate: 1.5 })],
    ['an unknown country code', validDeal({ countryCodes: ['XX'] })],
    ['a blank name', validDeal({ name: '   ' })],
  ];
  test.each(refused)('a deal with %s', async (_, body) => {
    const r = await rig();
    const e = await r.call('POST', '/deals', body);
    expect(e.response.status).toBe(400);
    const found = r.validator.find('POST', '/deals')!;
    expect(r.validator.requestErrors(found.operation, e.request, found.params)).not.toEqual([]);
    r.expectConforming(e);
  });

  test('the password grant without a username', async () => {
    const r = await rig();
    const form = new URLSearchParams({
      grant_type: 'http://auth0.com/oauth/grant-type/password-realm',
      realm: 'Username-Password-Authentication',
      audience: r.sim.audience,
      password: COMPANY.password,
      client_id: COMPANY.clientId,
      client_secret: COMPANY.clientSecret,
    }).toString();
    const e = await r.exchange('/oauth/token', { method: 'POST', headers: FORM, body: form });
    expect(e.response.status).toBe(400);
    const found = r.validator.find('POST', '/oauth/token')!;
    expect(r.validator.requestErrors(found.operation, e.request, found.params)).not.toEqual([]);
    r.expectConforming(e);
  });
});

describe('requests the document accepts as validators read it, refused for a rule it lists', () => {
  // Without X-CopyOfDealId a partial body still fits the copy branch (a schema cannot see headers), and a JSON Schema
  // validator divides 2.505 by 0.01 in floating point: both are said as rules, which the 400 names.
  const refused: [string, Record<string, unknown>, string][] = [
    ['no beginDate', validDeal({ beginDate: undefined }), 'complete-deal'],
    ['no endDate', validDeal({ endDate: undefined }), 'complete-deal'],
    ['only beginDate and endDate', { beginDate: '2030-03-01', endDate: '2030-05-31T23:59:59Z' }, 'complete-deal'],
    ['a price with three decimals', validDeal({ price: 2.505 }), 'two-decimals'],
  ];
  test.each(refused)('a deal with %s', async (_, body, rule) => {
    const r = await rig();
    const e = await r.call('POST', '/deals', body);
    expect(e.response.status).toBe(400);
    const found = r.validator.find('POST', '/deals')!;
    expect(r.validator.requestErrors(found.operation, e.request, found.params)).toEqual([]);
    expect(r.validator.rules(found.operation).has(rule)).toBe(true);
    const errors = (JSON.parse(e.response.body) as { errors: { rule?: string }[] }).errors;
    expect(errors.map((x) => x.rule)).toContain(rule);
    r.expectConforming(e);
  });

  test('a text/plain body that is not JSON, on POST /deals and DELETE /deals/{id}/domainlists', async () => {
    const r = await rig();
    const text = { 'content-type': 'text/plain' };
    const calls = [
      await r.call('POST', '/deals', 'not json', text),
      await r.call('DELETE', `/deals/${r.deal.id}/domainlists`, 'not json', text),
    ];
    expect(calls.map((e) => e.response.status)).toEqual([400, 400]);
    for (const e of calls) {
      expect((JSON.parse(e.response.body) as { errors: { rule?: string }[] }).errors[0].rule).toBe('json-text');
    }
    r.expectConforming(...calls);
  });

  test('a price of two decimals that floating point cannot divide by 0.01 is valid in the document', async () => {
    const r = await rig();
    const created = await r.call('POST', '/deals', validDeal({ price: 1.15 }));
    expect(created.response.status).toBe(201);
    expect(r.doc).not.toHaveProperty(['components', 'schemas', 'DealWrite', 'properties', 'price', 'multipleOf']);
    r.expectConforming(created, await r.call('GET', '/deals'));
  });
});

describe('DELETE /deals/{id}/domainlists reads its optional body as the document says (DomainListRef)', () => {
  test('the attached list detaches; a body off the schema is refused, as the document refuses it', async () => {
    const r = await rig();
    expect((await r.call('POST', `/deals/${r.deal.id}/domainlists`, { domainListId: 1 })).response.status).toBe(204);
    const off = [
      await r.call('DELETE', `/deals/${r.deal.id}/domainlists`, {}),
      await r.call('DELETE', `/deals/${r.deal.id}/domainlists`, { domainListId: 1, extra: true }),
    ];
    expect(off.map((e) => e.response.status)).toEqual([400, 400]);
    const detached = await r.call('DELETE', `/deals/${r.deal.id}/domainlists`, { domainListId: 1 });
    expect(detached.response.status).toBe(204);
    r.expectConforming(...off, detached);
  });
});

describe('headers the simulator sends are declared', () => {
  test('X-Pagination-Total-Count on lookups and X-HistoryId on PUT', async () => {
    const r = await rig();
    const lookup = await r.call('GET', '/countries');
    const put = await r.call('PUT', `/deals/${r.deal.id}`, validDeal());
    expect(lookup.response.headers['x-pagination-total-count']).toBeDefined();
    expect(put.response.headers['x-historyid']).toBeDefined();
    r.expectConforming(lookup, put);
  });

  test('Retry-After on 429s (quota, login attempts, injected) and WWW-Authenticate on 401s', async () => {
    const r = await rig();
    const quota = await contractRig({ quotas: { creationsPerDay: 0 } });
    const quotaToken = await quota.login();
    const spent = await quota.exchange('/deals', { method: 'POST', headers: AUTH(quotaToken), body: validDeal() });
    const wrong = new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: 'nobody',
      client_secret: 'nothing',
      audience: r.sim.audience,
    }).toString();
    const attempts = [];
    for (let i = 0; i < 11; i++) {
      attempts.push(await r.exchange('/oauth/token', { method: 'POST', headers: FORM, body: wrong }));
    }
    const faults = await contractRig({ faults: { rate: 1, kinds: ['429', '503'], seed: 7 } });
    const injected = [];
    for (let i = 0; i < 3; i++) injected.push(await faults.exchange('/countries'));
    const unauthorized = await r.exchange('/deals', { headers: { authorization: 'Bearer nonsense' } });
    expect(spent.response.status).toBe(429);
    expect(attempts.at(-1)!.response.status).toBe(429);
    expect(injected.map((e) => e.response.status)).toContain(429);
    expect(unauthorized.response.headers['www-authenticate']).toMatch(/^Bearer/);
    r.expectConforming(spent, ...injected, ...attempts, unauthorized);
  });
});

describe('leniencies are written down in the document', () => {
  test('JSON token requests, text/plain deals, TRUE, blanks in id lists, any-case lookups, /current', async () => {
    const r = await rig();
    const calls = [
      await r.exchange('/oauth/token', {
        method: 'POST',
        body: {
          grant_type: 'client_credentials',
          client_id: COMPANY.clientId,
          client_secret: COMPANY.clientSecret,
          audience: r.sim.audience,
        },
      }),
      await r.call('POST', '/deals', JSON.stringify(validDeal()), { 'content-type': 'text/plain' }),
      await r.call('GET', '/deals?isArchived=TRUE&sortBy=NAME'),
      await r.call('GET', '/deals?buyerIds=101,%20102'),
      await r.call('GET', '/countries?ids=1,%202'),
      await r.call('GET', '/Countries'),
      await r.call('GET', '/current/deals'),
    ];
    expect(calls.map((e) => e.response.status)).toEqual([200, 201, 200, 200, 200, 200, 200]);
    r.expectConforming(...calls);
  });
});
