// Consent where the tag really runs, in Chromium, Firefox and WebKit: the consent platform lives in the top page on
// one loopback origin (127.0.0.1), the tag runs in an iframe from a second one (localhost, another port) and
// reaches the platform through its locator frame and the IAB postMessage protocol. Real CMPs from npm:
// @iabtcf/cmpapi behind the official @iabtcf/stub, and @iabgpp/cmpapi (EU TCF section only) behind a GPP stub.
import { expect, test, type EngineFrame, type EnginePage } from './support/engines/fixture';
import { startTestServer, publisherPage, type TestServer } from './support/server';
import { gppCmp, gppStub, tcfCmp, tcfStub } from './support/cmps';
import { composeTag, loadNetworksConfig } from '../../dist/node/operator/index.js';
// @ts-expect-error: plain JS demo helper
import { idLinkingAnswer } from '../../demo/modules/routes.mjs';
import { createHash } from 'node:crypto';

// Chromium: a regular profile that allows third-party storage, as Chrome does by default (Playwright's incognito-like
// contexts deny a cross-site frame any storage, so "nothing stored in the frame's origin" could not fail there).
// Firefox and WebKit run with their defaults, which partition a cross-site frame's storage by top-level site: the
// consent-given test shows the frame can store in every engine.
test.use({ thirdPartyStorage: true });

const EMAIL = 'e2e.user@example.com';
let top: TestServer;
let ads: TestServer;

test.beforeAll(async () => {
  const networks = loadNetworksConfig(new URL('../../demo/networks.json', import.meta.url).pathname);
  const js = (body: string) => ({ type: 'text/javascript; charset=utf-8', body });
  // The tag's side: the per-network script (every module on for 4321), the ad server, the id-linking stand-in.
  ads = await startTestServer({
    tagScript: (nw, file) => composeTag(nw, networks, { debug: file === 'sas.debug.js' }),
    routes: { 'POST /idlink/g/v2/102.json': (req) => ({ type: 'application/json', body: idLinkingAnswer(req.json) }) },
    pages: {
      '/frame.html': publisherPage({
        networkId: 4321,
        // `?wait=<ms>`: the call's bound (eidsTimeout), for the tests that expect the modules' ids on the first call.
        commands: `sas.setup({ networkid: 4321, domain: location.origin, eidsTimeout: Number(new URLSearchParams(location.search).get('wait')) || undefined, modules: { identityLink: { placementId: 1 }, idLinking: { url: location.origin + '/idlink/g/v2' } } });`,
      }),
    },
  });
  // The publisher's side: stubs and real CMPs.
  top = await startTestServer({
    routes: {
      '/tcf-stub.js': js(tcfStub()),
      '/gpp-stub.js': js(gppStub()),
      '/tcf-cmp.js': js(await tcfCmp()),
      '/gpp-cmp.js': js(await gppCmp()),
    },
  });
});
test.afterAll(async () => {
  await top?.close();
  await ads?.close();
});

/**
 * A top page with a stub and a CMP (`cmpDelayMs`: the CMP script arrives that much later), framing the tag's page.
 * `wait`: the tag's call bound in ms (default the tag's 300). A test that expects the modules' ids on the first call
 * waits the longest bound the tag allows: that call starts the identifier-linking request, which a loaded machine
 * may not answer within 300 ms (the call still leaves as soon as every module has answered).
 */
function topPage(
  name: string,
  {
    platform,
    choice,
    cmpDelayMs = 0,
    wait,
  }: { platform: 'tcf' | 'gpp'; choice: 'consent' | 'refuse'; cmpDelayMs?: number; wait?: number },
) {
  top.page(
    `/${name}.html`,
    `<!doctype html><html><head><meta charset="utf-8"><title>publisher</title>
<script src="/${platform}-stub.js"></script>
<script>
  setTimeout(function () {
    var s = document.createElement('script');
    s.src = '/${platform}-cmp.js';
    s.dataset.choice = '${choice}';
    document.head.appendChild(s);
  }, ${cmpDelayMs});
</script>
</head><body><h1>publisher page</h1>
<iframe id="player" width="400" height="200" src="${ads.altUrl}/frame.html?email=${encodeURIComponent(EMAIL)}${wait ? `&wait=${wait}` : ''}"></iframe>
</body></html>`,
  );
  return `${top.url}/${name}.html`;
}

/** Opens the top page and returns the tag's frame once the tag is ready. */
async function open(page: EnginePage, url: string): Promise<EngineFrame> {
  await page.goto(url);
  const frame = await page.frame((u) => u.startsWith(ads.altUrl));
  await frame.waitForFunction(() => typeof (window as any).sas?.call === 'function');
  return frame;
}

/** One GET ad call from the frame: its parameters, decoded eids and how long the tag took to send it. */
async function displayCall(frame: EngineFrame) {
  const t0 = Date.now();
  const r: { url: string } = await frame.evaluate(() =>
    (window as any).sas.call('std', { siteId: 1, pageId: 2, formatId: 3 }),
  );
  const ms = Date.now() - t0;
  const url = new URL(r.url);
  const eids = url.searchParams.get('eids');
  const decoded: { source: string; uids: { id: string }[] }[] = eids
    ? JSON.parse(Buffer.from(eids, 'base64url').toString('utf8'))
    : [];
  return { params: url.searchParams, eids: decoded, ms };
}

const topTcString = (page: EnginePage) =>
  page.evaluate(
    () => new Promise<string>((resolve) => (window as any).__tcfapi('getTCData', 2, (d: any) => resolve(d.tcString))),
  );
const topGppEuSection = (page: EnginePage) =>
  page.evaluate(
    () =>
      new Promise<string>((resolve) =>
        (window as any).__gpp('ping', (d: any) => resolve(d.gppString.split('~')[d.sectionList.indexOf(2) + 1])),
      ),
  );
const frameStorage = (frame: EngineFrame) =>
  frame.evaluate(() => ({ local: Object.keys(localStorage), cookie: document.cookie }));
const hem = createHash('sha256').update(EMAIL).digest('hex');

test("TCF consent in the top page: the framed tag sends module eids and the top page's TC string", async ({
  web: page,
}) => {
  const frame = await open(page, topPage('tcf-consent', { platform: 'tcf', choice: 'consent', wait: 3000 }));
  expect(new URL(await frame.url()).origin).not.toBe(new URL(await page.url()).origin);
  const { params, eids } = await displayCall(frame);
  expect(params.get('gdpr')).toBe('1');
  expect(params.get('gdpr_consent')).toBe(await topTcString(page));
  expect(eids.map((e) => e.source)).toEqual(expect.arrayContaining(['hemsha256', 'id5-sync.com']));
  expect(eids.find((e) => e.source === 'hemsha256')!.uids[0].id).toBe(hem);
  // The frame's origin can store here: the modules kept their ids (the refusal tests' "nothing stored" can fail).
  expect((await frameStorage(frame)).local).toEqual(expect.arrayContaining(['_sas_hem', '_sas_idl']));
  expect(await page.errors()).toEqual([]);
});

test("TCF consent refused in the top page: nothing stored in the frame's origin, no module eid", async ({
  web: page,
}) => {
  const before = ads.requests.length;
  const frame = await open(page, topPage('tcf-refuse', { platform: 'tcf', choice: 'refuse' }));
  const { params, eids } = await displayCall(frame);
  expect(params.get('gdpr')).toBe('1');
  expect(params.get('gdpr_consent')).toBe(await topTcString(page));
  expect(eids).toEqual([]);
  expect(await frameStorage(frame)).toEqual({ local: [], cookie: '' });
  expect(ads.requests.slice(before).some((r) => r.path.startsWith('/idlink/'))).toBe(false);
  expect(await page.errors()).toEqual([]);
});

test('a GPP-only CMP with the EU TCF section: consent gives module eids and the section as gdpr_consent', async ({
  web: page,
}) => {
  const frame = await open(page, topPage('gpp-consent', { platform: 'gpp', choice: 'consent', wait: 3000 }));
  expect(await page.evaluate(() => typeof (window as any).__tcfapi)).toBe('undefined');
  const { params, eids } = await displayCall(frame);
  expect(params.get('gdpr')).toBe('1');
  expect(params.get('gpp_sid')).toBe('2');
  expect(params.get('gdpr_consent')).toBe(await topGppEuSection(page));
  expect(params.get('gpp')).toContain(params.get('gdpr_consent'));
  expect(eids.map((e) => e.source)).toEqual(expect.arrayContaining(['hemsha256', 'id5-sync.com']));
  expect(await page.errors()).toEqual([]);
});

test('a GPP-only CMP with the EU TCF section: refusal stores nothing and sends no eid', async ({ web: page }) => {
  const frame = await open(page, topPage('gpp-refuse', { platform: 'gpp', choice: 'refuse' }));
  const { params, eids } = await displayCall(frame);
  expect(params.get('gdpr')).toBe('1');
  expect(params.get('gdpr_consent')).toBe(await topGppEuSection(page));
  expect(eids).toEqual([]);
  expect(await frameStorage(frame)).toEqual({ local: [], cookie: '' });
});

test('a CMP loaded 2 s after the tag: the first call goes at the bound without module ids, a later one carries them', async ({
  web: page,
}) => {
  const frame = await open(page, topPage('tcf-late', { platform: 'tcf', choice: 'consent', cmpDelayMs: 2000 }));
  expect(await page.evaluate(() => typeof (window as any).demoCmp)).toBe('undefined');
  const first = await displayCall(frame);
  // The default bound is 300 ms; generous for a loaded machine, far below the CMP's 2 s.
  expect(first.ms).toBeLessThan(1500);
  expect(first.eids).toEqual([]);
  expect(first.params.get('gdpr_consent')).toBeNull();
  expect(await frameStorage(frame)).toEqual({ local: [], cookie: '' });
  await page.waitForFunction(() => typeof (window as any).demoCmp === 'object', undefined, { timeout: 10_000 });
  // The first call after the CMP answered starts the modules (their ids are on it if they answer within the bound);
  // once they have kept their ids, every later call carries them.
  let later = await displayCall(frame);
  if (!later.eids.length) {
    await expect
      .poll(async () => (await frameStorage(frame)).local, { timeout: 10_000 })
      .toEqual(expect.arrayContaining(['_sas_hem', '_sas_idl']));
    later = await displayCall(frame);
  }
  expect(later.params.get('gdpr_consent')).toBe(await topTcString(page));
  expect(later.eids.map((e) => e.source)).toEqual(expect.arrayContaining(['hemsha256', 'id5-sync.com']));
});
