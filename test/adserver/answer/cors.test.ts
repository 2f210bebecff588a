// The CORS answer of ad-call endpoints (src/adserver/answer/cors.ts): which page origins may read an answer sent with
// the visitor's cookies, preflights, and the node:http and hono adapters.
import { describe, expect, test } from 'vitest';
import fc from 'fast-check';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Hono } from 'hono';
import { createCorsPolicy, corsForNode, corsMiddleware, CorsPolicyError } from '../../../src/adserver/index.js';
import type { CorsPolicyOptions } from '../../../src/adserver/index.js';

const ORIGINS = ['https://www.example.com', 'https://*.example.org', 'http://localhost:8080'];
const cors = createCorsPolicy({ origins: ORIGINS });

describe('createCorsPolicy: which origins may read the answers', () => {
  test.each([
    ['https://www.example.com', true],
    ['https://www.example.com:443', true],
    ['http://localhost:8080', true],
    ['https://a.example.org', true],
    ['https://a.b.example.org', true],
    ['https://example.com', false],
    ['http://www.example.com', false], // another scheme
    ['https://www.example.com:8443', false], // another port
    ['https://www.example.com.evil.net', false],
    ['https://wwwexample.com', false],
    ['https://example.org', false], // a pattern allows subdomains, not the domain itself
    ['https://evil-example.org', false],
    ['https://evilexample.org', false],
    ['https://example.org.evil.net', false],
    ['https://a.example.org.evil.net', false],
    ['http://a.example.org', false],
    ['https://a.example.org:444', false],
    ['https://a.example.org.', false],
    ['https://.example.org', false],
    ['https://WWW.EXAMPLE.COM', false], // browsers send origins in lower case: this one is forged
    ['https://www.example.com/', false],
    ['https://www.example.com/path', false],
    ['https://user@www.example.com', false],
    ['https://www.example.com, https://evil.test', false],
    [' https://www.example.com', false],
    ['null', false],
    ['', false],
    ['*', false],
    ['http://localhost', false],
    ['http://localhost:80808', false],
  ])('%s → %s', (origin, allowed) => {
    expect(cors.isAllowed(origin)).toBe(allowed);
  });

  test('a missing or null Origin is never allowed', () => {
    expect(cors.isAllowed(null)).toBe(false);
    expect(cors.isAllowed(undefined)).toBe(false);
    expect(createCorsPolicy({ origins: [] }).isAllowed('https://www.example.com')).toBe(false);
  });

  test('entries are normalised as browsers serialise origins: case, default port, IDN', () => {
    const origins = ['HTTPS://Shop.Example.COM:443', 'https://bücher.example', 'https://*.Bücher.example'];
    const p = createCorsPolicy({ origins });
    expect(p.isAllowed('https://shop.example.com')).toBe(true);
    expect(p.isAllowed('https://xn--bcher-kva.example')).toBe(true);
    expect(p.isAllowed('https://www.xn--bcher-kva.example')).toBe(true);
  });

  test('hostile Origin values cost bounded work and are refused', () => {
    const hostile = [
      'https://' + 'a.'.repeat(200_000) + 'example.org',
      'https://' + 'a'.repeat(1_000_000),
      '\u0000'.repeat(100_000),
      'https://[' + ':'.repeat(100_000),
    ];
    const started = performance.now();
    for (const origin of hostile) expect(cors.isAllowed(origin)).toBe(false);
    expect(performance.now() - started).toBeLessThan(50);
  });
});

describe('createCorsPolicy: the headers', () => {
  test('an allowed origin gets itself back with credentials; any other no Access-Control header; Vary always', () => {
    expect(cors.headersFor('https://a.example.org')).toEqual({
      Vary: 'Origin',
      'Access-Control-Allow-Origin': 'https://a.example.org',
      'Access-Control-Allow-Credentials': 'true',
    });
    for (const origin of ['https://evil.test', 'null', null, undefined]) {
      expect(cors.headersFor(origin)).toEqual({ Vary: 'Origin' });
    }
    const noCookies = createCorsPolicy({ origins: ['https://a.test'], credentials: false, exposeHeaders: ['X-Ad-Id'] });
    expect(noCookies.headersFor('https://a.test')).toEqual({
      Vary: 'Origin',
      'Access-Control-Allow-Origin': 'https://a.test',
      'Access-Control-Expose-Headers': 'X-Ad-Id',
    });
  });

  test('a preflight for an allowed origin, method and headers gets 204 with them and the max age', () => {
    const answer = cors.preflight({ origin: 'https://www.example.com', method: 'POST', headers: 'content-type' });
    expect(answer).toEqual({
      status: 204,
      headers: {
        Vary: 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers',
        'Access-Control-Allow-Origin': 'https://www.example.com',
        'Access-Control-Allow-Credentials': 'true',
        'Access-Control-Allow-Methods': 'GET, POST',
        'Access-Control-Allow-Headers': 'Content-Type',
        'Access-Control-Max-Age': '600',
      },
    });
  });

  test.each([
    ['a foreign origin', { origin: 'https://evil.test', method: 'POST' }],
    ['the null origin', { origin: 'null', method: 'GET' }],
    ['a method the tag never uses', { origin: 'https://www.example.com', method: 'DELETE' }],
    ['a header the tag never sends', { origin: ORIGINS[0], method: 'POST', headers: 'content-type, x-evil' }],
    ['a huge header list', { origin: ORIGINS[0], method: 'POST', headers: 'content-type,'.repeat(100_000) }],
  ])('a preflight with %s gets 403 and no Access-Control-Allow header', (_name, request) => {
    const answer = cors.preflight(request);
    expect(answer.status).toBe(403);
    expect(Object.keys(answer.headers)).toEqual(['Vary']);
  });

  test('preflightResponse answers only OPTIONS requests that ask for a method', async () => {
    const headers = { origin: 'https://www.example.com', 'access-control-request-method': 'GET' };
    const pre = cors.preflightResponse(new Request('https://ads.test/ac', { method: 'OPTIONS', headers }));
    expect(pre?.status).toBe(204);
    expect(pre?.headers.get('access-control-allow-origin')).toBe('https://www.example.com');
    expect(cors.preflightResponse(new Request('https://ads.test/ac', { method: 'OPTIONS' }))).toBeNull();
    const get = new Request('https://ads.test/ac', { headers: { origin: 'https://www.example.com' } });
    expect(cors.preflightResponse(get)).toBeNull();
  });
});

describe('createCorsPolicy: options are checked at creation, naming the field', () => {
  test.each([
    [{ origins: 'https://a.test' }, 'origins'],
    [{ origins: ['https://a.test', 'https://a.test/path'] }, 'origins[1]'],
    [{ origins: ['*'] }, 'origins[0]'],
    [{ origins: ['null'] }, 'origins[0]'],
    [{ origins: ['a.test'] }, 'origins[0]'],
    [{ origins: ['ftp://a.test'] }, 'origins[0]'],
    [{ origins: ['https://*.com'] }, 'origins[0]'],
    [{ origins: ['https://*'] }, 'origins[0]'],
    [{ origins: ['https://a.*.example.com'] }, 'origins[0]'],
    [{ origins: ['https://*.192.168.0.1'] }, 'origins[0]'],
    [{ origins: ['https://a.test?x=1'] }, 'origins[0]'],
    [{ origins: [''] }, 'origins[0]'],
    [{ origins: [42] }, 'origins[0]'],
    [{ origins: [], maxAgeSeconds: -1 }, 'maxAgeSeconds'],
    [{ origins: [], maxAgeSeconds: 1e9 }, 'maxAgeSeconds'],
    [{ origins: [], methods: ['G ET'] }, 'methods[0]'],
    [{ origins: [], allowHeaders: ['Content-Type', 'bad header'] }, 'allowHeaders[1]'],
    [{ origins: [], credentials: 'yes' }, 'credentials'],
  ])('%j is refused at %s', (options, field) => {
    let error: unknown;
    try {
      createCorsPolicy(options as unknown as CorsPolicyOptions);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(CorsPolicyError);
    expect((error as CorsPolicyError).field).toBe(field);
    expect((error as Error).message.startsWith(`${field}: `)).toBe(true);
  });
});

describe('createCorsPolicy: property', () => {
  const label = fc.constantFrom('a', 'b', 'example', 'evil', 'ex-ample', 'xn--bcher-kva', 'x0');
  const host = fc.array(label, { minLength: 1, maxLength: 4 }).map((ls) => ls.join('.'));
  const scheme = fc.constantFrom('http', 'https');
  const port = fc.constantFrom('', ':443', ':80', ':8080');
  const origin = fc.tuple(scheme, host, port).map(([s, h, p]) => `${s}://${h}${p}`);
  const pattern = fc
    .tuple(scheme, fc.array(label, { minLength: 2, maxLength: 3 }), port)
    .map(([s, ls, p]) => `${s}://*.${ls.join('.')}${p}`);
  const entry = fc.oneof(origin, pattern);

  /** Origins near an entry: the entry, a subdomain of a pattern, its apex, its host glued to a label, a suffix. */
  const near = (e: string) =>
    fc.tuple(label, fc.constantFrom('sub', 'apex', 'glued', 'suffixed')).map(([l, how]) => {
      if (!e.includes('*')) return how === 'suffixed' ? e.replace(/(:\d+)?$/, `.${l}$1`) : e;
      if (how === 'sub') return e.replace('*', l);
      if (how === 'apex') return e.replace('*.', '');
      if (how === 'glued') return e.replace('*.', `${l}-`);
      return e.replace('*', l).replace(/(:\d+)?$/, `.${l}$1`);
    });
  const listAndOrigin = fc
    .array(entry, { minLength: 1, maxLength: 5 })
    .chain((entries) => fc.tuple(fc.constant(entries), fc.oneof(origin, fc.constantFrom(...entries).chain(near))));

  /** The rule as the docs state it, through the WHATWG URL parser rather than the policy's own reading. */
  function expected(entries: string[], value: string): boolean {
    const o = new URL(value);
    return entries.some((e) => {
      if (!e.includes('*')) return new URL(e).origin === o.origin;
      const u = new URL(e.replace('*.', 'placeholder.'));
      const suffix = u.hostname.slice('placeholder'.length);
      const sameServer = u.protocol === o.protocol && u.port === o.port;
      return sameServer && o.hostname.endsWith(suffix) && o.hostname.length > suffix.length;
    });
  }

  test('an origin is allowed if and only if it matches an entry of the list', () => {
    const seen = { allowed: 0, refused: 0 };
    fc.assert(
      fc.property(listAndOrigin, ([entries, value]) => {
        fc.pre(URL.canParse(value)); // a glued label can be invalid punycode: no browser sends that
        const serialised = new URL(value).origin; // what a browser sends
        const allowed = createCorsPolicy({ origins: entries }).isAllowed(serialised);
        expect(allowed).toBe(expected(entries, serialised));
        seen[allowed ? 'allowed' : 'refused']++;
      }),
      { numRuns: 3_000 },
    );
    // Both answers were exercised, so the property says something about each.
    expect(Math.min(seen.allowed, seen.refused)).toBeGreaterThan(100);
  });
});

describe('adapters', () => {
  test('corsForNode answers a preflight itself and adds the headers to other answers, keeping their Vary', async () => {
    const server = createServer((req, res) => {
      res.setHeader('Vary', 'Accept-Encoding');
      if (corsForNode(cors, req, res)) return;
      res.end('{}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    const get = (method: string, headers: Record<string, string>) =>
      new Promise<{ status: number; headers: Record<string, unknown> }>((resolve, reject) => {
        httpRequest({ host: '127.0.0.1', port, path: '/ac', method, headers }, (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers }));
        })
          .on('error', reject)
          .end();
      });
    try {
      const allowed = await get('GET', { origin: 'https://www.example.com' });
      expect(allowed.headers).toMatchObject({
        'access-control-allow-origin': 'https://www.example.com',
        'access-control-allow-credentials': 'true',
        vary: 'Accept-Encoding, Origin',
      });
      const foreign = await get('GET', { origin: 'null' });
      expect(foreign.headers['access-control-allow-origin']).toBeUndefined();
      const pre = await get('OPTIONS', { origin: 'https://evil.test', 'access-control-request-method': 'POST' });
      expect(pre.status).toBe(403);
    } finally {
      server.close();
    }
  });

  test('corsMiddleware on hono: preflight, allowed and refused origins, an answer with immutable headers', async () => {
    const app = new Hono();
    app.use('/ac', corsMiddleware(cors));
    app.use('/proxied', corsMiddleware(cors));
    app.get('/ac', (c) => c.json({ ok: true }));
    app.get('/proxied', async () => {
      const res = await fetch('data:application/json,{}'); // a fetch() answer: its headers are immutable
      return res;
    });
    const allowed = await app.request('/ac', { headers: { origin: 'https://a.example.org' } });
    expect(allowed.headers.get('access-control-allow-origin')).toBe('https://a.example.org');
    expect(allowed.headers.get('vary')).toBe('Origin');
    const refused = await app.request('/ac', { headers: { origin: 'https://evil.test' } });
    expect(refused.headers.get('access-control-allow-origin')).toBeNull();
    expect(refused.headers.get('vary')).toBe('Origin');
    const ask = { origin: 'https://a.example.org', 'access-control-request-method': 'GET' };
    const pre = await app.request('/ac', { method: 'OPTIONS', headers: ask });
    expect(pre.status).toBe(204);
    const proxied = await app.request('/proxied', { headers: { origin: 'https://a.example.org' } });
    expect(proxied.headers.get('access-control-allow-origin')).toBe('https://a.example.org');
  });
});
