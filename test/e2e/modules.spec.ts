// End-to-end tests of the provider modules and consent in Chromium, Firefox and WebKit, on demo/modules/page.html,
// against the built dist/ files served by a local server, behind a proxy that records every request the page makes.
import { expect, test, type EnginePage } from './support/engines/fixture';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { composeTag, loadNetworksConfig } from '../../dist/node/operator/index.js';
// @ts-expect-error: plain JS demo helpers
import { handleModuleRoute } from '../../demo/modules/routes.mjs';
import { createHash } from 'node:crypto';
import { startTestServer, type RecordedRequest, type TestServer } from './support/server';
import { gppCmp } from './support/cmps';

let server: Server;
/** The recording proxy in front of `server`; pages load from its origin. */
let proxy: TestServer;
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
        res.writeHead(200, {
          'Content-Type': 'application/json',
          'Access-Control-Allow-Origin': req.headers.origin || '*',
          'Access-Control-Allow-Credentials': 'true',
        });
        return res.end('{}');
      }
      res.writeHead(404).end();
    } catch (e) {
      res.writeHead(500).end(String(e));
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const upstream = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxy = await startTestServer({ upstream });
  origin = proxy.url;
  // The modules page with a consent platform that never answers, in place before any page script.
  const silentCmp = '<script>window.__tcfapi = function () {};</script>';
  proxy.route('/modules/silent-cmp.html', async () => {
    const html = await (await fetch(`${upstream}/modules/page.html`)).text();
    // (The proxy puts its probe before it, right after <head>.)
    return { type: 'text/html; charset=utf-8', body: html.replace(/<head[^>]*>/i, (head) => head + silentCmp) };
  });
  // US privacy: a real GPP CMP with the US national section (gpp-cmp-entry.mjs), or the browser's Global Privacy
  // Control, in place before any page script.
  const gppBundle = await gppCmp();
  proxy.route('/gpp-cmp.js', () => ({ type: 'text/javascript', body: gppBundle }));
  for (const [name, script] of [
    ['usnat-spm', '<script src="/gpp-cmp.js" data-choice="usnat-spm"></script>'],
    ['usnat-optin', '<script src="/gpp-cmp.js" data-choice="usnat-optin"></script>'],
    [
      'gpc',
      "<script>Object.defineProperty(Navigator.prototype, 'globalPrivacyControl', { get: () => true });</script>",
    ],
  ]) {
    proxy.route(`/modules/${name}.html`, async () => {
      const html = await (await fetch(`${upstream}/modules/page.html`)).text();
      return { type: 'text/html; charset=utf-8', body: html.replace(/<head[^>]*>/i, (head) => head + script) };
    });
  }
});
test.afterAll(async () => {
  await proxy.close();
  server.close();
});
test.beforeEach(() => proxy.clear());

const decodeEids = (b64: string) =>
  JSON.parse(Buffer.from(b64.replace(/-/g, '+').replace(/_/g, '/'), 'base64').toString('utf8'));

/** Clicks `button` and resolves with the first request to `path` made after the click. */
async function requestAfterClick(page: EnginePage, button: string, path: string): Promise<RecordedRequest> {
  const before = proxy.requests.length;
  await page.click(button);
  return proxy.waitFor((r) => r.path === path && proxy.requests.indexOf(r) >= before, 10_000);
}

/** Clicks the GET display call button and returns that call's query parameters and decoded eids. */
async function displayCall(page: EnginePage) {
  const req = await requestAfterClick(page, '#call-std', '/ac');
  const params = new URLSearchParams(req.search);
  const eids = params.get('eids');
  return {
    params,
    eids: eids ? (decodeEids(eids) as { source: string; uids: { id: string; ext?: unknown }[] }[]) : [],
  };
}

/** The cookie names and localStorage of the page's origin (the tag's storage is readable by scripts). */
async function storage(page: EnginePage) {
  return page.evaluate(() => ({
    cookies: document.cookie ? document.cookie.split('; ').map((c) => c.slice(0, c.indexOf('='))) : [],
    local: Object.fromEntries(Object.entries(localStorage)),
  }));
}

/**
 * Query parameter for pages whose test expects the modules' ids on the first call: that call starts the
 * identifier-linking request, which must answer within the call's bound. The default 300 ms is what the tag does;
 * a loaded machine can take longer through the recording proxy, so these pages wait the longest bound the tag
 * allows (the call still leaves as soon as every module has answered).
 */
const WAIT = '&wait=3000';

async function ready(page: EnginePage, path: string) {
  await page.goto(origin + path);
  await page.waitForFunction(
    () => typeof (window as any).sas?.call === 'function' && typeof (window as any).sas?.getEids === 'function',
  );
}

/** Types an email into the form the page adds after load. */
async function typeEmail(page: EnginePage, email: string) {
  await page.click('#add-form');
  await page.fill('#email', email);
}

test('with TCF consent from a real CMP the module eids arrive on the ad call with the consent signals', async ({
  web: page,
}) => {
  await ready(
    page,
    '/modules/page.html?cmp=consent&criteo=1&uid2=1&email=' + encodeURIComponent('e2e.user@example.com') + WAIT,
  );
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
  expect(await page.errors()).toEqual([]);
});

test('with consent refused nothing is stored and no module eid is sent', async ({ web: page }) => {
  await ready(
    page,
    '/modules/page.html?cmp=refuse&criteo=1&uid2=1&email=' + encodeURIComponent('e2e.user@example.com'),
  );
  await typeEmail(page, 'typed.user@example.com');
  const { params, eids } = await displayCall(page);
  expect(params.get('gdpr')).toBe('1');
  expect(params.get('gdpr_consent')).toMatch(/^C/);
  expect(eids).toEqual([]);
  expect(params.get('eids')).toBeNull();
  const s = await storage(page);
  // The only cookie is the one the page itself set as a stand-in for the provider's script.
  expect(s.cookies.filter((c) => c !== 'cto_bidid')).toEqual([]);
  expect(s.local).toEqual({});
  expect(proxy.requests.some((r) => r.path.includes('/idlink/'))).toBe(false);
  expect(await page.errors()).toEqual([]);
});

test('a real Prebid.js (userId + SharedID) hands its eids to the ad call unchanged', async ({ web: page }) => {
  await ready(page, '/modules/page.html?prebid=1');
  await page.waitForFunction(() => (window as any).pbjs?.libLoaded === true);
  const { eids } = await displayCall(page);
  const fromPrebid = await page.evaluate(() => (window as any).pbjs.getUserIdsAsEids());
  expect(fromPrebid.length).toBeGreaterThan(0);
  expect(fromPrebid[0].source).toBe('pubcid.org');
  for (const e of fromPrebid) expect(eids).toContainEqual(e);
  expect(await page.errors()).toEqual([]);
});

test('the manual form sas.setEids(pbjs.getUserIdsAsEids()) sends the same eids', async ({ web: page }) => {
  await ready(page, '/modules/page.html?prebid=1&nw=1234');
  await page.waitForFunction(() => (window as any).pbjs?.libLoaded === true);
  await page.waitForFunction(() => (window as any).pbjs.getUserIdsAsEids().length > 0);
  await page.evaluate(() => {
    const w = window as any;
    w.sas.cmd.push(() => w.sas.setEids(w.pbjs.getUserIdsAsEids()));
  });
  const { eids } = await displayCall(page);
  expect(eids).toEqual(await page.evaluate(() => (window as any).pbjs.getUserIdsAsEids()));
});

test('an email typed into a form added after load is hashed and sent, and never leaves the browser raw', async ({
  web: page,
}) => {
  const email = 'Jane.Doe+promo@Example.com';
  await ready(page, '/modules/page.html');
  await typeEmail(page, email);
  await page.waitForFunction(() => !!localStorage.getItem('_sas_hem'));
  const { eids } = await displayCall(page);
  const hash = createHash('sha256').update('jane.doe+promo@example.com').digest('hex');
  // Module eids carry provenance: the page (an IP host is its own registrable domain) inserted them, authenticated (mm
  // 3).
  expect(eids).toContainEqual({ source: 'hemsha256', uids: [{ id: hash, atype: 3 }], inserter: '127.0.0.1', mm: 3 });
  // A POST call too, so bodies are checked as well as URLs.
  const post = await requestAfterClick(page, '#call-generic', '/genericpost');
  expect((post.json as { eids: unknown }).eids).toContainEqual({
    source: 'hemsha256',
    uids: [{ id: hash, atype: 3 }],
    inserter: '127.0.0.1',
    mm: 3,
  });
  const forms = [
    email,
    email.toLowerCase(),
    encodeURIComponent(email),
    encodeURIComponent(email.toLowerCase()),
    'jane.doe%2Bpromo',
    'jane.doe+promo@',
  ];
  expect(proxy.requests.length).toBeGreaterThan(0);
  for (const r of proxy.requests) {
    const text = `${r.path}?${r.search}\n${r.body}\n${JSON.stringify(r.headers)}`;
    for (const f of forms) expect(text.toLowerCase(), r.path).not.toContain(f.toLowerCase());
  }
  expect(JSON.stringify(await storage(page)).toLowerCase()).not.toContain('jane');
});

test('a page URL holding an email: no request the tag or its modules send carries it, in a URL or a header', async ({
  web: page,
}) => {
  const email = 'Url.Reader+promo@Example.com';
  // The email in the identity-link parameter, in another parameter encoded twice, and in the fragment.
  const twice = encodeURIComponent(encodeURIComponent(email));
  await ready(
    page,
    `/modules/page.html?cmp=consent&email=${encodeURIComponent(email)}&ref=${twice}#contact=${encodeURIComponent(email)}`,
  );
  const { eids } = await displayCall(page);
  // The module still read the URL parameter: its hash goes, never the email.
  const hash = createHash('sha256').update(email.toLowerCase()).digest('hex');
  expect(eids.find((e) => e.source === 'hemsha256')?.uids[0].id).toBe(hash);
  await requestAfterClick(page, '#call-generic', '/genericpost');
  await proxy.waitFor((r) => r.path.includes('/idlink/'), 10_000);
  const sent = proxy.requests.filter((r) => /^\/(ac|genericpost|call)$/.test(r.path) || r.path.includes('/idlink/'));
  expect(sent.length).toBeGreaterThanOrEqual(3);
  const forms = [email, encodeURIComponent(email), twice, 'url.reader+promo@', 'url.reader%2bpromo'];
  for (const r of sent) {
    const text = `${r.path}?${r.search}\n${r.body}\n${JSON.stringify(r.headers)}`.toLowerCase();
    for (const f of forms) expect(text, `${r.method} ${r.path}`).not.toContain(f.toLowerCase());
    // Same-origin requests, where the browser would send the whole page URL: the origin alone goes.
    expect(r.headers.referer, `${r.method} ${r.path}`).toBe(origin + '/');
  }
  expect(await page.errors()).toEqual([]);
});

test('a module the operator switched off, or its window flag turned off, leaves nothing behind', async ({
  web: page,
}) => {
  // A visit on network 4321 (every module) stores both modules' keys; the provider's own entry sits beside them.
  await ready(page, '/modules/page.html?cmp=consent&email=' + encodeURIComponent('left.behind@example.com'));
  await page.evaluate(() => localStorage.setItem('_lr_env', btoa(JSON.stringify({ envelope: 'ENV' }))));
  await displayCall(page);
  await page.waitForFunction(() => !!localStorage.getItem('_sas_idl') && !!localStorage.getItem('_sas_hem'));

  // The page's flag turns identifier linking off: its key goes, identity link's stays.
  await ready(page, '/modules/page.html?cmp=consent&flag=idLinking');
  await displayCall(page);
  let s = await storage(page);
  expect(Object.keys(s.local).sort()).toEqual(['_lr_env', '_sas_hem']);

  // The operator serves network 1234 no module at all: the script it gets deletes what the modules kept.
  await ready(page, '/modules/page.html?cmp=consent&nw=1234');
  s = await storage(page);
  expect(Object.keys(s.local)).toEqual(['_lr_env']);
  expect(s.cookies.filter((c) => c.startsWith('_sas_'))).toEqual([]);
  expect(await page.errors()).toEqual([]);
});

for (const [how, path] of [
  ['by the operator', '/modules/page.html?nw=1234&criteo=1&uid2=1&email=a.b%40example.com'],
  ['by its window flag', '/modules/page.html?flag=identityLink&email=a.b%40example.com' + WAIT],
] as const) {
  test(`a module disabled ${how} sends nothing and touches no storage`, async ({ web: page }) => {
    await ready(page, path);
    await typeEmail(page, 'c.d@example.com');
    const { eids } = await displayCall(page);
    expect(eids.map((e) => e.source)).not.toContain('hemsha256');
    const s = await storage(page);
    expect(Object.keys(s.local)).not.toContain('_sas_hem');
    expect(s.cookies).not.toContain('_sas_hem');
    if (how === 'by the operator') {
      // No module at all on this network: no eids, no storage, no provider request, no add-on code.
      expect(eids).toEqual([]);
      expect(s.local).toEqual({});
      expect(proxy.requests.some((r) => r.path.includes('/idlink/'))).toBe(false);
      // The network is served the built core and the statement deleting the modules' keys: no operator-switch line.
      expect(await page.evaluate(() => (window as any).__sasop)).toBeUndefined();
    } else {
      // The other enabled modules still work.
      expect(eids.map((e) => e.source)).toContain('id5-sync.com');
    }
  });
}

for (const page of ['usnat-spm', 'gpc'] as const) {
  test(`US privacy (${page === 'gpc' ? "the browser's Global Privacy Control" : 'GPP usnat in service-provider mode'}): no module runs, stores or sends, and the call carries the signal`, async ({
    web,
  }) => {
    await ready(web, `/modules/${page}.html?criteo=1&uid2=1&email=` + encodeURIComponent('e2e.user@example.com'));
    await typeEmail(web, 'typed.user@example.com');
    const { params, eids } = await displayCall(web);
    if (page === 'gpc') expect(params.get('gpc')).toBe('1');
    else expect([params.get('gpp_sid'), params.get('gpp')?.startsWith('DBABLA~')]).toEqual(['7', true]);
    // Only the ids the page itself holds may go (the server decides per partner); no module contributed any.
    expect(eids.map((e) => e.source)).not.toEqual(expect.arrayContaining(['hemsha256']));
    expect(eids.map((e) => e.source)).not.toContain('id5-sync.com');
    const s = await storage(web);
    expect(Object.keys(s.local).filter((k) => k.startsWith('_sas'))).toEqual([]);
    expect(proxy.requests.some((r) => r.path.includes('/idlink/'))).toBe(false);
    expect(await web.errors()).toEqual([]);
  });
}

test('US privacy: GPP usnat with every notice given and opted in lets the modules run', async ({ web: page }) => {
  await ready(page, '/modules/usnat-optin.html?email=' + encodeURIComponent('e2e.user@example.com') + WAIT);
  const { params, eids } = await displayCall(page);
  expect(params.get('gpp_sid')).toBe('7');
  expect(eids.map((e) => e.source)).toEqual(expect.arrayContaining(['hemsha256', 'id5-sync.com']));
});

test('a silent CMP never holds the ad call past the bound, and no eids go without a legal basis', async ({
  web: page,
}) => {
  await ready(page, '/modules/silent-cmp.html?email=a.b%40example.com');
  expect(await page.evaluate(() => typeof (window as any).__tcfapi)).toBe('function');
  const t0 = Date.now();
  const { params, eids } = await displayCall(page);
  expect(Date.now() - t0).toBeLessThan(1500);
  expect(eids).toEqual([]);
  expect(params.get('gdpr')).toBeNull();
  expect(await page.evaluate(() => localStorage.length)).toBe(0);
});

test.describe('the page shows what the tag read and sent', () => {
  /** Polls the state column of a module's row. */
  const stateOf = (page: EnginePage, name: string) =>
    expect.poll(async () => (await page.text(`#module-${name} td:nth-child(2)`))?.trim());
  const textOf = (page: EnginePage, selector: string) => expect.poll(() => page.text(selector));

  test('before the first call, enabled modules show waiting and only modules the operator left off show off', async ({
    web: page,
  }) => {
    await ready(page, '/modules/page.html?nw=2345');
    await stateOf(page, 'prebid').toBe('waiting');
    await textOf(page, '#module-prebid').toContain('no ad call yet');
    for (const name of ['identityLink', 'idLinking', 'criteo', 'uid2'])
      await stateOf(page, name).toBe('off by operator');
    await ready(page, '/modules/page.html');
    for (const name of ['identityLink', 'idLinking', 'criteo', 'uid2', 'prebid'])
      await stateOf(page, name).toBe('waiting');
  });

  test("consent given: the consent read, each module's state and the eids of the last call are on the page", async ({
    web: page,
  }, testInfo) => {
    await ready(
      page,
      '/modules/page.html?cmp=consent&criteo=1&email=' + encodeURIComponent('e2e.user@example.com') + WAIT,
    );
    await page.evaluate(() => {
      (window as any).sas_disable_uid2 = true;
    });
    await displayCall(page);
    await textOf(page, '#consent').toContain('gdpr1');
    await textOf(page, '#consent').toMatch(/gdpr_consentC\S+/);
    await stateOf(page, 'identityLink').toBe('sent');
    await stateOf(page, 'idLinking').toBe('sent');
    await stateOf(page, 'criteo').toBe('sent');
    await stateOf(page, 'uid2').toBe('off by flag');
    await stateOf(page, 'prebid').toBe('no id');
    await textOf(page, '#eids').toContain('"source": "hemsha256"');
    await textOf(page, '#eids').toContain('"source": "id5-sync.com"');
    await page.screenshot(testInfo.outputPath('modules-consent.png'));
  });

  test('consent refused: every enabled module shows no consent and the call carried no eids', async ({
    web: page,
  }, testInfo) => {
    await ready(page, '/modules/page.html?cmp=refuse&email=' + encodeURIComponent('e2e.user@example.com'));
    await displayCall(page);
    await textOf(page, '#consent').toContain('gdpr1');
    for (const name of ['identityLink', 'idLinking', 'criteo', 'uid2', 'prebid'])
      await stateOf(page, name).toBe('no consent');
    await textOf(page, '#eids').toBe('none');
    await page.screenshot(testInfo.outputPath('modules-refused.png'));
  });

  test('a module allowed by consent whose ids may not go on the call shows found, and one not enabled shows off by operator', async ({
    web: page,
  }) => {
    await ready(page, '/modules/page.html?cmp=ui&email=' + encodeURIComponent('e2e.user@example.com'));
    // The user allows storage (purpose 1) and the identity-link vendor, but not the ad service (vendor 45).
    await page.evaluate(() => (window as any).demoCmp.consent([1, 2], [131, 97]));
    await displayCall(page);
    await stateOf(page, 'identityLink').toBe('found');
    await textOf(page, '#module-identityLink').toContain('hemsha256 (not on the call)');
    await textOf(page, '#eids').toBe('none');

    await ready(page, '/modules/page.html?nw=2345');
    await displayCall(page);
    await stateOf(page, 'identityLink').toBe('off by operator');
    await textOf(page, '#consent').toContain('no consent signal');
  });
});
