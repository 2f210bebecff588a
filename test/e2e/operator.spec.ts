// Operator delivery (issue 12) in real Chromium: the files `eidkit tags build` writes run from a CDN-like origin
// under Subresource Integrity, and `eidkit tags serve`'s handler delivers a brotli script the browser runs.
import { test, expect } from '@playwright/test';
import { serve, type ServerType } from '@hono/node-server';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { buildTags, createTagApp, MODULES, parseNetworksConfig, type Manifest } from '../../dist/node/operator/index.js';
import { startTestServer, type TestServer } from './support/server';

const config = parseNetworksConfig({ networks: { '4321': { modules: [...MODULES] }, '2345': { modules: ['prebid'] } } });
let out = '';
let manifest: Manifest;
let cdn: TestServer;
let site: TestServer;
let tags: ServerType;
let tagsUrl = '';

test.beforeAll(async () => {
  out = mkdtempSync(join(tmpdir(), 'eidkit-cdn-'));
  ({ manifest } = await buildTags({ config, outDir: out }));
  // The CDN: the built files as they are, with CORS so pages can check their integrity.
  const routes = Object.fromEntries(
    manifest.files.map((f) => [`/${f.file}`, { type: 'text/javascript; charset=utf-8', headers: { 'Access-Control-Allow-Origin': '*' }, body: readFileSync(join(out, f.file), 'utf8') }]),
  );
  cdn = await startTestServer({ routes });
  site = await startTestServer();
  tags = await new Promise<ServerType>((resolve) => {
    const s = serve({ fetch: createTagApp({ config }).fetch, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) => {
      tagsUrl = `http://localhost:${info.port}`;
      resolve(s);
    });
  });
});
test.afterAll(async () => {
  await cdn?.close();
  await site?.close();
  tags?.close();
  rmSync(out, { recursive: true, force: true });
});

const entry = (file: string) => manifest.files.find((f) => f.file === file)!;
const pageWith = (src: string, integrity?: string) =>
  `<!doctype html><html><head><meta charset="utf-8"><script>window.sas = { cmd: [] };</script>
<script src="${src}"${integrity ? ` integrity="${integrity}" crossorigin="anonymous"` : ''}></script></head><body></body></html>`;

test('a built tag/<id>/sas.js loaded from another origin with its manifest integrity runs', async ({ page }) => {
  const f = entry('tag/4321/sas.js');
  site.page('/sri-ok.html', pageWith(`${cdn.altUrl}/${f.file}`, f.integrity));
  await page.goto(`${site.url}/sri-ok.html`);
  await page.waitForFunction(() => typeof (window as any).sas?.version === 'string');
  expect(await page.evaluate(() => (window as any).__sasop)).toEqual({ modules: [...MODULES] });
});

test('the same script with another file\'s integrity is refused by the browser', async ({ page }) => {
  const messages: string[] = [];
  page.on('console', (m) => messages.push(m.text()));
  site.page('/sri-bad.html', pageWith(`${cdn.altUrl}/tag/4321/sas.js`, entry('tag/2345/sas.js').integrity));
  await page.goto(`${site.url}/sri-bad.html`);
  await expect.poll(() => messages.join('\n')).toMatch(/integrity/i);
  expect(await page.evaluate(() => (window as any).sas.version)).toBeUndefined();
});

test('tags serve delivers brotli to the browser, and the script runs', async ({ page }) => {
  site.page('/served.html', pageWith(`${tagsUrl}/tag/2345/sas.js`));
  const response = page.waitForResponse((r) => r.url().endsWith('/tag/2345/sas.js'));
  await page.goto(`${site.url}/served.html`);
  const r = await response;
  expect(r.status()).toBe(200);
  expect(await r.headerValue('content-encoding')).toBe('br');
  expect(await r.headerValue('access-control-allow-origin')).toBe('*');
  await page.waitForFunction(() => typeof (window as any).sas?.version === 'string');
  expect(await page.evaluate(() => (window as any).__sasop)).toEqual({ modules: ['prebid'] });
});
