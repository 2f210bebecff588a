import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { serve, type ServerType } from '@hono/node-server';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import {
  composeTag,
  createTagApp,
  encodeScript,
  MODULES,
  negotiateEncoding,
  parseNetworksConfig,
  TAG_CACHE_CONTROL,
  VERSIONED_CACHE_CONTROL,
  type NetworksConfig,
} from '../../src/operator/index.js';

const config = parseNetworksConfig({
  networks: { '4321': { modules: [...MODULES] }, '2345': { modules: ['prebid'] } },
});
const app = createTagApp({ config });
const get = (path: string, headers: Record<string, string> = {}) => app.request(path, { headers });

/** A request with its path sent exactly as written (fetch would normalise `..` away). */
function rawGet(port: number, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'GET' }, (res) => {
      res.resume();
      resolve(res.statusCode!);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('createTagApp: versioned scripts for Subresource Integrity', () => {
  test("sas.<version>.js keeps answering the pinned bytes after a reload changes the network's modules", async () => {
    let current: NetworksConfig = parseNetworksConfig({ networks: { '2345': { modules: ['prebid'] } } });
    const live = createTagApp({ config: () => current });
    const pinned = encodeScript(composeTag(2345, current));
    const path = `/tag/2345/sas.${pinned.version}.js`;
    current = parseNetworksConfig({ networks: { '2345': { modules: ['prebid', 'uid2'] } } });
    const r = await live.request(path);
    expect(r.status).toBe(200);
    expect(r.headers.get('cache-control')).toBe(VERSIONED_CACHE_CONTROL);
    expect(encodeScript(await r.text()).integrity).toBe(pinned.integrity);
    // The unversioned URL follows the switch: a page pinning it with integrity would have lost its ads.
    expect(encodeScript(await (await live.request('/tag/2345/sas.js')).text()).integrity).not.toBe(pinned.integrity);
    const debug = encodeScript(composeTag(2345, current, { debug: true }), 9);
    expect((await live.request(`/tag/2345/sas.debug.${debug.version}.js`)).status).toBe(200);
    expect((await live.request(`/tag/2345/sas.debug.${pinned.version}.js`)).status).toBe(404);
    expect((await live.request('/tag/2345/sas.0123456789abcdef.js')).status).toBe(404);
  });
});

describe('createTagApp: experiments', () => {
  test("serves a network's experiments, and the versioned copy of that script while the configuration serves it", async () => {
    const xpConfig = parseNetworksConfig({
      networks: { '77': { modules: ['uid2'], experiments: [{ id: 'u', modules: ['uid2'], share: 5 }] } },
    });
    const live = createTagApp({ config: xpConfig });
    const script = await (await live.request('/tag/77/sas.js')).text();
    expect(script).toBe(composeTag(77, xpConfig));
    expect(
      script.startsWith('//# allFunctionsCalledOnLoad\nwindow.__sasop={"modules":["uid2"],"experiments":[{"id":"u"'),
    ).toBe(true);
    const pinned = encodeScript(script);
    const r = await live.request(`/tag/77/sas.${pinned.version}.js`);
    expect(r.status).toBe(200);
    expect(encodeScript(await r.text()).integrity).toBe(pinned.integrity);
  });
});

describe('createTagApp', () => {
  test('an unexpected error answers a plain 500 and goes to onError, not to the client', async () => {
    const errors: unknown[] = [];
    const broken = createTagApp({
      config: () => {
        throw new Error('config store unreachable');
      },
      onError: (err) => errors.push(err),
    });
    const res = await broken.request('/tag/4321/sas.js');
    expect(res.status).toBe(500);
    expect(await res.text()).toBe('internal error');
    expect(errors.map((e) => (e as Error).message)).toEqual(['config store unreachable']);
  });

  test("serves a network's script with type, cache, CORS and a strong ETag", async () => {
    const r = await get('/tag/2345/sas.js');
    expect(r.status).toBe(200);
    expect(await r.text()).toBe(composeTag(2345, config));
    expect(r.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(r.headers.get('cache-control')).toBe(TAG_CACHE_CONTROL);
    expect(r.headers.get('access-control-allow-origin')).toBe('*');
    expect(r.headers.get('vary')).toBe('Accept-Encoding');
    expect(r.headers.get('etag')).toMatch(/^"[\w-]{22}"$/);
  });

  test('answers If-None-Match with 304 and no body, and a changed script with 200', async () => {
    const etag = (await get('/tag/4321/sas.js')).headers.get('etag')!;
    const r = await get('/tag/4321/sas.js', { 'If-None-Match': etag });
    expect(r.status).toBe(304);
    expect(await r.text()).toBe('');
    expect(r.headers.get('etag')).toBe(etag);
    expect((await get('/tag/2345/sas.js', { 'If-None-Match': etag })).status).toBe(200);
  });

  test('sends brotli or gzip by Accept-Encoding, each decompressing to the same script', async () => {
    const script = composeTag(4321, config);
    const br = await get('/tag/4321/sas.js', { 'Accept-Encoding': 'gzip, deflate, br' });
    expect(br.headers.get('content-encoding')).toBe('br');
    const brBody = Buffer.from(await br.arrayBuffer());
    expect(brotliDecompressSync(brBody).toString()).toBe(script);
    const gz = await get('/tag/4321/sas.js', { 'Accept-Encoding': 'gzip' });
    expect(gz.headers.get('content-encoding')).toBe('gzip');
    const gzBody = Buffer.from(await gz.arrayBuffer());
    expect(gunzipSync(gzBody).toString()).toBe(script);
    expect(brBody.length).toBeLessThan(gzBody.length);
    // Each representation has its own strong ETag; any of them revalidates.
    expect(new Set([br.headers.get('etag'), gz.headers.get('etag')]).size).toBe(2);
    expect(
      (await get('/tag/4321/sas.js', { 'If-None-Match': gz.headers.get('etag')!, 'Accept-Encoding': 'br' })).status,
    ).toBe(304);
  });

  test('serves the core alone to an unknown network, and the readable build as sas.debug.js', async () => {
    expect(await (await get('/tag/987654/sas.js')).text()).toBe(composeTag(987654, config));
    expect(await (await get('/tag/987654/sas.js')).text()).not.toContain('__sasop');
    expect(await (await get('/tag/4321/sas.debug.js')).text()).toBe(composeTag(4321, config, { debug: true }));
  });

  test('serves an id written with leading zeros as that network: its modules, never the bare core', async () => {
    const canonical = await get('/tag/4321/sas.js');
    for (const path of ['/tag/04321/sas.js', '/tag/000000004321/sas.js']) {
      const r = await get(path);
      expect(r.status).toBe(200);
      expect(await r.text()).toBe(composeTag(4321, config));
      expect(r.headers.get('etag')).toBe(canonical.headers.get('etag'));
    }
    expect(await (await get('/tag/02345/sas.debug.js')).text()).toBe(composeTag(2345, config, { debug: true }));
    expect(await (await get('/tag/000/sas.js')).text()).toBe(composeTag(0, config));
  });

  test('answers HEAD with the headers and no body', async () => {
    const r = await app.request('/tag/4321/sas.js', { method: 'HEAD' });
    expect(r.status).toBe(200);
    expect(await r.text()).toBe('');
  });

  test.each([
    ['a non-numeric id', '/tag/abc/sas.js'],
    ['another file', '/tag/4321/other.js'],
    ['no file', '/tag/4321/'],
    ['a 13-digit id', '/tag/1234567890123/sas.js'],
    ['a longer path', '/tag/4321/sas.js/x'],
    ['a 5,000-digit id', '/tag/' + '1'.repeat(5000) + '/sas.js'],
  ])('answers %s with 404', async (_, path) => {
    expect((await get(path)).status).toBe(404);
  });

  describe('over HTTP', () => {
    let server: ServerType;
    let port = 0;
    beforeAll(async () => {
      await new Promise<void>((resolve) => {
        server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) => {
          port = info.port;
          resolve();
        });
      });
    });
    afterAll(() => void server.close());

    test.each([
      ['/tag/../../etc/passwd', '/tag/../../etc/passwd'],
      ['/tag/4321/../../../etc/passwd', '/tag/4321/../../../etc/passwd'],
      ['/tag/%2e%2e/%2e%2e/etc/passwd', '/tag/%2e%2e/%2e%2e/etc/passwd'],
      ['/tag/4321/..%2fsas.js', '/tag/4321/..%2fsas.js'],
      ['/tag/4321%2fsas.js', '/tag/4321%2fsas.js'],
      ['an 8,000-character path', '/tag/' + 'a'.repeat(8000) + '/sas.js'],
    ])('answers the raw path %s with 404 and keeps serving', async (_, path) => {
      expect(await rawGet(port, path)).toBe(404);
      expect(await rawGet(port, '/tag/4321/sas.js')).toBe(200);
    });
  });
});

describe('negotiateEncoding', () => {
  test('prefers brotli, honours q=0 and wildcards', () => {
    expect(negotiateEncoding('gzip, br')).toBe('br');
    expect(negotiateEncoding('br;q=0, gzip')).toBe('gzip');
    expect(negotiateEncoding('identity')).toBeUndefined();
    expect(negotiateEncoding(undefined)).toBeUndefined();
    expect(negotiateEncoding('*')).toBe('br');
    expect(negotiateEncoding('*;q=0')).toBeUndefined();
  });
});
