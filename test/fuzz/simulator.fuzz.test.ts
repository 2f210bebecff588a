// Fuzz: the deal API simulator's HTTP endpoints (in process): hostile paths, query strings, headers, tokens and
// bodies (JSON bombs, broken forms, hostile deals) on every route. None answers 500 (an unhandled error), every
// JSON answer parses, and each request's CPU is bounded.
import { afterAll, describe, test } from 'vitest';
import fc from 'fast-check';
import { badEscape, encode, headerSafe, hostileText, jsonBombText } from './arbitraries.js';
import type { SimulatorInput } from './entry-points.js';
import { fuzz, worstSummary } from './harness.js';

afterAll(() => console.log(worstSummary()));

const segment = fc.oneof(
  fc.constantFrom('1', '2', '0', '-1', '99999999999999999999', '1e3', 'NaN', '%00', '..', 'countBreakdown'),
  hostileText.map(encode),
);
const route = fc.oneof(
  fc.constantFrom('/oauth/token', '/authorize', '/deals', '/deals/countBreakdown', '/openapi.json'),
  fc.constantFrom('/current/deals', '/dsps', '/countries', '/sizes', '/nope'),
  segment.map((s) => `/deals/${s}`),
  segment.map((s) => `/deals/${s}/domainlists`),
  segment.map((s) => `/current/${s}`),
);
const queryValue = fc.oneof(
  hostileText.map(encode),
  badEscape,
  fc.constantFrom('1', '-1', '1e999', 'true', 'x', '2030-01-01T00:00:00Z', '1,2,3', ',,,'),
);
const queryName = fc.constantFrom(...['limit', 'offset', 'ids', 'extendedSearch', 'isActive', 'buyerIds', 'sort'], 'x');
const query = fc
  .array(fc.tuple(queryName, queryValue), { maxLength: 6 })
  .map((pairs) => (pairs.length ? `?${pairs.map(([k, v]) => `${k}=${v}`).join('&')}` : ''));

const deal = fc.record(
  {
    name: fc.oneof(hostileText, fc.constant('Premium')),
    isActive: fc.oneof(fc.boolean(), hostileText),
    beginDate: fc.oneof(fc.constant(null), hostileText, fc.constant('2031-01-01T00:00:00Z')),
    currency: fc.oneof(fc.constantFrom('EUR', 'USD'), hostileText),
    pricingModel: fc.oneof(fc.constantFrom(1, 2, 1e308, -1), hostileText),
    price: fc.oneof(fc.constantFrom(2.5, 1e308, -0, 0.000001), hostileText),
    buyerIds: fc.oneof(fc.array(fc.integer(), { maxLength: 300 }), hostileText),
    countryCodes: fc.oneof(fc.array(fc.constantFrom('FR', 'DE', 'XX', ''), { maxLength: 300 }), hostileText),
    domains: fc.array(hostileText, { maxLength: 50 }),
    __proto__: fc.constant({ polluted: true }),
  },
  { requiredKeys: [] },
);
const formName = fc.constantFrom(
  ...['grant_type', 'client_id', 'client_secret', 'username', 'password', 'realm', 'audience', 'x'],
);
const grant = fc.constantFrom('http://auth0.com/oauth/grant-type/password-realm', 'client_credentials', 'password');
const form = fc
  .array(fc.tuple(formName, fc.oneof(queryValue, grant)), { maxLength: 10 })
  .map((pairs) => pairs.map(([k, v]) => `${k}=${v}`).join('&'));
const body = fc.oneof(
  deal.map((d) => JSON.stringify(d)),
  fc.array(deal, { maxLength: 3 }).map((d) => JSON.stringify(d)),
  jsonBombText,
  form,
  fc.integer({ min: 1, max: 30_000 }).map((n) => 'a=%&'.repeat(n)),
  hostileText,
);

const headerName = fc.constantFrom('accept', 'x-request-id', 'if-match', 'accept-encoding', 'content-language');
const request: fc.Arbitrary<SimulatorInput> = fc
  .record({
    method: fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS'),
    route,
    query,
    contentType: fc.constantFrom(...['application/json', 'application/x-www-form-urlencoded', 'text/plain', '']),
    extra: fc.dictionary(headerName, hostileText.map(headerSafe), { maxKeys: 3 }),
    body: fc.option(body, { nil: undefined }),
    auth: fc.constantFrom<SimulatorInput['auth']>('user', 'user', 'access', 'none', 'garbage'),
  })
  .map(({ method, route, query, contentType, extra, body, auth }) => ({
    method,
    path: route + query,
    headers: { ...extra, ...(contentType ? { 'content-type': contentType } : {}) },
    ...(body !== undefined && method !== 'GET' && method !== 'HEAD' ? { body } : {}),
    auth,
  }));

describe('the simulator on hostile requests', () => {
  test(
    'never answers 500, answers JSON that parses, bounded CPU per request',
    () => fuzz('simulator', 'any', request, 150),
    60_000,
  );
});
