// End-to-end tests of the provider modules and consent (issue 5) in real Chromium, on demo/modules/page.html,
// against the built dist/ files served by a local server that records every request the tag makes.
import { test, expect, type Page, type Request } from '@playwright/test';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { composeTag, loadNetworksConfig } from '../../dist/node/operator/index.js';
// @ts-expect-error: plain JS demo helpers
import { handleModuleRoute } from '../../demo/modules/routes.mjs';
import { createHash } from 'node:crypto';

let server: Server;
let origin = '';
const networks = loadNetworksConfig(new URL('../../demo/networks.json', import.meta.url).pathname);
test.beforeAll(async () => {
  server = createServer(async (req, res) => {
    try {
      const url = new URL(req.url!, 'http://x');
      const tag = /^\/tag\/(\d+)\/sas\.js$/.exec(url.pathname);
      if (tag) return res.writeHead(200, { 'Content-Type': 'text/javascript' }).end(composeTag(tag[1], networks));
      if (await handleModuleRoute(req, res)) return;
      if (['/ac', '/genericpost', '/call'].includes(url.pathname)) {
        for await (const _ of req);
        res.writeHead(200, { 'Content-Type': 'application/json', 'Access-Control-Allow-Origin': req.headers.origin || '*', 'Access-Control-Allow-Credentials': 'true' });
        return res.end('{}');
      }
      res.writeHead(404).end();
    } catch (e) {
      res.writeHead(500).end(String(e));
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
test.afterAll(() => server.close());

/** Every request the page makes (any host), with its body. */
function record(page: Page) {
  const all: Request[] = [];
  page.on('request', (r) => all.push(r));
  return all;
}

const decodeEids = (b64: string) => JSON.parse(Buffer.from(b64.replace(/-/g, '+').replace(/_/g, '/'), 'base64').toString('utf8'));

/** Clicks the GET display call button and returns that call's query parameters and decoded eids. */
async function displayCall(page: Page) {
  const req = page.waitForRequest((r) => new URL(r.url()).pathname === '/ac');
  await page.click('#call-std');
  const url = new URL((await req).url());
  const eids = url.searchParams.get('eids');
  return { params: url.searchParams, eids: eids ? (decodeEids(eids) as Array<{ source: string; uids: Array<{ id: string; ext?: unknown }> }>) : [] };
}

async function storage(page: Page) {
  const cookies = await page.context().cookies();
  const local = await page.evaluate(() => Object.fromEntries(Object.entries(localStorage)));
  return { cookies: cookies.map((c) => c.name), local };
}

async function ready(page: Page, path: string) {
  const errors: Error[] = [];
  page.on('pageerror', (e) => errors.push(e));
  await page.goto(origin + path);
  await page.waitForFunction(() => typeof (window as any).sas?.call === 'function' && typeof (window as any).sas?.getEids === 'function');
  return errors;
}

test('with TCF consent from a real CMP the module eids arrive on the ad call with the consent signals', async ({ page }) => {
  const errors = await ready(page, '/modules/page.html?cmp=consent&criteo=1&uid2=1&email=' + encodeURIComponent('e2e.user@example.com'));
  const { params, eids } = await displayCall(page);
  expect(params.get('gdpr')).toBe('1');
  expect(params.get('gdpr_consent')).toMatch(/^C/);
  const sources = eids.map((e) => e.source).sort();
  expect(sources).toEqual(expect.arrayContaining(['hemsha256', 'id5-sync.com', 'criteo.com']));
  // UID 2.0 is for US users: with GDPR applying only the European id would be sent.
  expect(sources).not.toContain('uidapi.com');
  const hem = eids.find((e) => e.source === 'hemsha256')!;
  expect(hem.uids[0].id).toBe(createHash('sha256').update('e2e.user@example.com').digest('hex'));
  const id5 = eids.find((e) => e.source === 'id5-sync.com')!;
  expect(id5.uids[0].ext).toEqual({ linkType: 1, abTestingControlGroup: false });
  expect(errors).toEqual([]);
});

test('with consent refused nothing is stored and no module eid is sent', async ({ page }) => {
  const all = record(page);
  const errors = await ready(page, '/modules/page.html?cmp=refuse&criteo=1&uid2=1&email=' + encodeURIComponent('e2e.user@example.com'));
  await page.click('#add-form');
  await page.fill('#email', 'typed.user@example.com');
  await page.locator('#email').blur();
  const { params, eids } = await displayCall(page);
  expect(params.get('gdpr')).toBe('1');
  expect(params.get('gdpr_consent')).toMatch(/^C/);
  expect(eids).toEqual([]);
  expect(params.get('eids')).toBeNull();
  const s = await storage(page);
  // The only cookie is the one the page itself set as a stand-in for the provider's script.
  expect(s.cookies.filter((c) => c !== 'cto_bidid')).toEqual([]);
  expect(s.local).toEqual({});
  expect(all.some((r) => r.url().includes('/idlink/'))).toBe(false);
  expect(errors).toEqual([]);
});

test("a real Prebid.js (userId + SharedID) hands its eids to the ad call unchanged", async ({ page }) => {
  const errors = await ready(page, '/modules/page.html?prebid=1');
  await page.waitForFunction(() => (window as any).pbjs?.libLoaded === true);
  const { eids } = await displayCall(page);
  const fromPrebid = await page.evaluate(() => (window as any).pbjs.getUserIdsAsEids());
  expect(fromPrebid.length).toBeGreaterThan(0);
  expect(fromPrebid[0].source).toBe('pubcid.org');
  for (const e of fromPrebid) expect(eids).toContainEqual(e);
  expect(errors).toEqual([]);
});

test('the manual form sas.setEids(pbjs.getUserIdsAsEids()) sends the same eids', async ({ page }) => {
  await ready(page, '/modules/page.html?prebid=1&nw=1234');
  await page.waitForFunction(() => (window as any).pbjs?.libLoaded === true);
  await page.waitForFunction(() => (window as any).pbjs.getUserIdsAsEids().length > 0);
  await page.evaluate(() => { const w = window as any; w.sas.cmd.push(() => w.sas.setEids(w.pbjs.getUserIdsAsEids())); });
  const { eids } = await displayCall(page);
  expect(eids).toEqual(await page.evaluate(() => (window as any).pbjs.getUserIdsAsEids()));
});

test('an email typed into a form added after load is hashed and sent, and never leaves the browser raw', async ({ page }) => {
  const email = 'Jane.Doe+promo@Example.com';
  const all = record(page);
  await ready(page, '/modules/page.html');
  await page.click('#add-form');
  await page.fill('#email', email);
  await page.locator('#email').blur();
  await page.waitForFunction(() => !!localStorage.getItem('_sas_hem'));
  const { eids } = await displayCall(page);
  const hash = createHash('sha256').update('jane.doe+promo@example.com').digest('hex');
  // Module eids carry provenance: the page (an IP host is its own registrable domain) inserted them, authenticated (mm 3).
  expect(eids).toContainEqual({ source: 'hemsha256', uids: [{ id: hash, atype: 3 }], inserter: '127.0.0.1', mm: 3 });
  // A POST call too, so bodies are checked as well as URLs.
  const post = page.waitForRequest((r) => new URL(r.url()).pathname === '/genericpost');
  await page.click('#call-generic');
  expect(JSON.parse((await post).postData()!).eids).toContainEqual({ source: 'hemsha256', uids: [{ id: hash, atype: 3 }], inserter: '127.0.0.1', mm: 3 });
  const forms = [email, email.toLowerCase(), encodeURIComponent(email), encodeURIComponent(email.toLowerCase()), 'jane.doe%2Bpromo', 'jane.doe+promo@'];
  for (const r of all) {
    const text = r.url() + '\n' + (r.postData() ?? '') + '\n' + JSON.stringify(await r.allHeaders());
    for (const f of forms) expect(text.toLowerCase(), r.url()).not.toContain(f.toLowerCase());
  }
  expect(JSON.stringify(await storage(page)).toLowerCase()).not.toContain('jane');
});

for (const [how, path] of [
  ['by the operator', '/modules/page.html?nw=1234&criteo=1&uid2=1&email=a.b%40example.com'],
  ['by its window flag', '/modules/page.html?flag=identityLink&email=a.b%40example.com'],
] as const) {
  test(`a module disabled ${how} sends nothing and touches no storage`, async ({ page }) => {
    const all = record(page);
    await ready(page, path);
    await page.click('#add-form');
    await page.fill('#email', 'c.d@example.com');
    await page.locator('#email').blur();
    const { eids } = await displayCall(page);
    expect(eids.map((e) => e.source)).not.toContain('hemsha256');
    const s = await storage(page);
    expect(Object.keys(s.local)).not.toContain('_sas_hem');
    expect(s.cookies).not.toContain('_sas_hem');
    if (how === 'by the operator') {
      // No module at all on this network: no eids, no storage, no provider request, no add-on code.
      expect(eids).toEqual([]);
      expect(s.local).toEqual({});
      expect(all.some((r) => r.url().includes('/idlink/'))).toBe(false);
      // The network is served the built core byte for byte: not even an operator-switch line.
      expect(await page.evaluate(() => (window as any).__sasop)).toBeUndefined();
    } else {
      // The other enabled modules still work.
      expect(eids.map((e) => e.source)).toContain('id5-sync.com');
    }
  });
}

test('a silent CMP never holds the ad call past the bound, and no eids go without a legal basis', async ({ page }) => {
  await page.addInitScript(() => { (window as any).__tcfapi = () => undefined; });
  await ready(page, '/modules/page.html?email=a.b%40example.com');
  const t0 = Date.now();
  const { params, eids } = await displayCall(page);
  expect(Date.now() - t0).toBeLessThan(1500);
  expect(eids).toEqual([]);
  expect(params.get('gdpr')).toBeNull();
  expect(await page.evaluate(() => localStorage.length)).toBe(0);
});

test.describe('the page shows what the tag read and sent', () => {
  const stateOf = (page: Page, name: string) => page.locator(`#module-${name} td`).nth(1);

  test('consent given: the consent read, each module\'s state and the eids of the last call are on the page', async ({ page }, testInfo) => {
    await ready(page, '/modules/page.html?cmp=consent&criteo=1&email=' + encodeURIComponent('e2e.user@example.com'));
    await page.evaluate(() => { (window as any).sas_disable_uid2 = true; });
    await displayCall(page);
    await expect(page.locator('#consent')).toContainText('gdpr1');
    await expect(page.locator('#consent')).toContainText(/gdpr_consentC\S+/);
    await expect(stateOf(page, 'identityLink')).toHaveText('sent');
    await expect(stateOf(page, 'idLinking')).toHaveText('sent');
    await expect(stateOf(page, 'criteo')).toHaveText('sent');
    await expect(stateOf(page, 'uid2')).toHaveText('off by flag');
    await expect(stateOf(page, 'prebid')).toHaveText('no id');
    await expect(page.locator('#eids')).toContainText('"source": "hemsha256"');
    await expect(page.locator('#eids')).toContainText('"source": "id5-sync.com"');
    await page.screenshot({ path: testInfo.outputPath('modules-consent.png'), fullPage: true });
  });

  test('consent refused: every enabled module shows no consent and the call carried no eids', async ({ page }, testInfo) => {
    await ready(page, '/modules/page.html?cmp=refuse&email=' + encodeURIComponent('e2e.user@example.com'));
    await displayCall(page);
    await expect(page.locator('#consent')).toContainText('gdpr1');
    for (const name of ['identityLink', 'idLinking', 'criteo', 'uid2', 'prebid']) await expect(stateOf(page, name)).toHaveText('no consent');
    await expect(page.locator('#eids')).toHaveText('none');
    await page.screenshot({ path: testInfo.outputPath('modules-refused.png'), fullPage: true });
  });

  test('a module allowed by consent whose ids may not go on the call shows found, and one not enabled shows off by operator', async ({ page }) => {
    await ready(page, '/modules/page.html?cmp=ui&email=' + encodeURIComponent('e2e.user@example.com'));
    // The user allows storage (purpose 1) and the identity-link vendor, but not the ad service (vendor 45).
    await page.evaluate(() => (window as any).demoCmp.consent([1, 2], [131, 97]));
    await displayCall(page);
    await expect(stateOf(page, 'identityLink')).toHaveText('found');
    await expect(page.locator('#module-identityLink')).toContainText('hemsha256 (not on the call)');
    await expect(page.locator('#eids')).toHaveText('none');

    await ready(page, '/modules/page.html?nw=2345');
    await displayCall(page);
    await expect(stateOf(page, 'identityLink')).toHaveText('off by operator');
    await expect(page.locator('#consent')).toContainText('no consent signal');
  });
});
