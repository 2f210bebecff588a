// Operator delivery in Chromium, Firefox and WebKit: the files `eidkit tags build` writes run from a CDN-like origin
// under Subresource Integrity, and `eidkit tags serve`'s handler delivers a brotli script the browser runs.
import { test, expect } from './support/engines/fixture';
import { serve, type ServerType } from '@hono/node-server';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import {
  buildTags,
  createTagApp,
  MODULES,
  parseNetworksConfig,
  type Manifest,
} from '../../dist/node/operator/index.js';
import { startTestServer, type TestServer } from './support/server';

const config = parseNetworksConfig({
  networks: { '4321': { modules: [...MODULES] }, '2345': { modules: ['prebid'] } },
});
let out = '';
let manifest: Manifest;
let cdn: TestServer;
let site: TestServer;
let tags: ServerType;
/** `tags serve`'s handler, behind a recording proxy (what the browser asked for and what it was answered). */
let tagsProxy: TestServer;

test.beforeAll(async () => {
  out = mkdtempSync(join(tmpdir(), 'eidkit-cdn-'));
  ({ manifest } = await buildTags({ config, outDir: out }));
  // The CDN: the built files as they are, with CORS so pages can check their integrity.
  const routes = Object.fromEntries(
    manifest.files
      .flatMap((f) => [f.file, f.versioned.file])
      .map((file) => [
        `/${file}`,
        {
          type: 'text/javascript; charset=utf-8',
          headers: { 'Access-Control-Allow-Origin': '*' },
          body: readFileSync(join(out, file), 'utf8'),
        },
      ]),
  );
  cdn = await startTestServer({ routes });
  site = await startTestServer();
  tags = await new Promise<ServerType>((resolve) => {
    const s = serve({ fetch: createTagApp({ config }).fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s));
  });
  tagsProxy = await startTestServer({ upstream: `http://127.0.0.1:${(tags.address() as AddressInfo).port}` });
});
test.afterAll(async () => {
  await cdn?.close();
  await site?.close();
  await tagsProxy?.close();
  tags?.close();
  rmSync(out, { recursive: true, force: true });
});

const entry = (file: string) => manifest.files.find((f) => f.file === file)!;
const pageWith = (src: string, integrity?: string, onerror = '') =>
  `<!doctype html><html><head><meta charset="utf-8"><script>window.sas = { cmd: [] };</script>
<script src="${src}"${integrity ? ` integrity="${integrity}" crossorigin="anonymous"` : ''}${onerror ? ` onerror="${onerror}"` : ''}></script>
</head><body></body></html>`;

test("a built tag's versioned copy loaded from another origin with its manifest integrity runs", async ({
  web: page,
}) => {
  const f = entry('tag/4321/sas.js').versioned;
  site.page('/sri-ok.html', pageWith(`${cdn.altUrl}/${f.file}`, f.integrity));
  await page.goto(`${site.url}/sri-ok.html`);
  await page.waitForFunction(() => typeof (window as any).sas?.version === 'string');
  expect(await page.evaluate(() => (window as any).__sasop)).toEqual({ modules: [...MODULES] });
});

test("the same script with another file's integrity is refused by the browser", async ({ web: page }) => {
  site.page(
    '/sri-bad.html',
    pageWith(`${cdn.altUrl}/tag/4321/sas.js`, entry('tag/2345/sas.js').versioned.integrity, 'window.refused = true'),
  );
  await page.goto(`${site.url}/sri-bad.html`);
  // The browser fetched the script, found it does not match, fired the element's error event and did not run it.
  await page.waitForFunction(() => (window as any).refused === true);
  expect(cdn.requests.some((r) => r.path === '/tag/4321/sas.js')).toBe(true);
  expect(await page.evaluate(() => (window as any).sas.version)).toBeUndefined();
});

test('tags serve delivers brotli to a browser that asks for it (else gzip), and the script runs', async ({
  web: page,
}) => {
  site.page('/served.html', pageWith(`${tagsProxy.altUrl}/tag/2345/sas.js`));
  await page.goto(`${site.url}/served.html`);
  await page.waitForFunction(() => typeof (window as any).sas?.version === 'string');
  const r = tagsProxy.requests.find((q) => q.path === '/tag/2345/sas.js')!;
  // Chromium and Firefox ask for brotli from a loopback origin over plain http; WebKitGTK only over https.
  const encoding = /\bbr\b/.test(r.headers['accept-encoding']) ? 'br' : 'gzip';
  expect(r.response).toMatchObject({
    status: 200,
    headers: { 'content-encoding': encoding, 'access-control-allow-origin': '*' },
  });
  expect(await page.evaluate(() => (window as any).__sasop)).toEqual({ modules: ['prebid'] });
});

test("a page pinned to the manifest's versioned file and integrity keeps loading the tag after the operator enables a module", async ({
  web: page,
}) => {
  const dir = mkdtempSync(join(tmpdir(), 'eidkit-sri-'));
  const pinned = (await buildTags({ config, outDir: dir })).manifest.files.find((f) => f.file === 'tag/2345/sas.js')!;
  // The operator enables another module for the network and rebuilds into the same folder.
  const changed = parseNetworksConfig({ networks: { ...config.networks, '2345': { modules: ['prebid', 'uid2'] } } });
  await buildTags({ config: changed, outDir: dir });
  const files = [pinned.file, pinned.versioned.file];
  const routes = Object.fromEntries(
    files.map((f) => [
      `/${f}`,
      {
        type: 'text/javascript; charset=utf-8',
        headers: { 'Access-Control-Allow-Origin': '*' },
        body: readFileSync(join(dir, f), 'utf8'),
      },
    ]),
  );
  const cdnAfter = await startTestServer({ routes });
  try {
    site.page(
      '/sri-pinned.html',
      pageWith(`${cdnAfter.altUrl}/${pinned.versioned.file}`, pinned.versioned.integrity, 'window.refused = true'),
    );
    await page.goto(`${site.url}/sri-pinned.html`);
    await page.waitForFunction(() => typeof (window as any).sas?.version === 'string');
    expect(await page.evaluate(() => (window as any).__sasop)).toEqual({ modules: ['prebid'] });
    // The unversioned URL moved on: the same integrity on it is refused, which is why the guide never offers that.
    site.page(
      '/sri-unversioned.html',
      pageWith(`${cdnAfter.altUrl}/${pinned.file}`, pinned.versioned.integrity, 'window.refused = true'),
    );
    await page.goto(`${site.url}/sri-unversioned.html`);
    await page.waitForFunction(() => (window as any).refused === true);
  } finally {
    await cdnAfter.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
