// Where the engines differ, and what the tag does about it (docs/tag.md "Browsers"): the ad server's pid cookie on a
// cross-site ad call, storage partitioning of the modules' cached ids, the pure-JS hash where crypto.subtle is
// missing, and the secure contexts the e2e pages rely on. Page on localhost, ad server on 127.0.0.1: two sites.
import { createHash } from 'node:crypto';
import { expect, skipIn, test, type EngineName, type EnginePage } from './support/engines/fixture';
import { publisherPage, useTestServer } from './support/server';
import { composeTag, loadNetworksConfig } from '../../dist/node/operator/index.js';
import { pidSetCookie } from '../../dist/node/adserver/index.js';

const networks = loadNetworksConfig(new URL('../../demo/networks.json', import.meta.url).pathname);
let pids = 0;
/** A same-origin GET carries no Origin header; the pages here are on 127.0.0.1 (same site) or localhost. */
const crossSite = (origin: string | undefined) => origin !== undefined && new URL(origin).hostname !== '127.0.0.1';
const server = useTestServer({
  // Network 4321 gets every module (demo/networks.json); the others the core.
  tagScript: (nw) => composeTag(nw, networks),
  // The ad server's real cookie (eidkit/adserver pidSetCookie): SameSite=None; Secure for a cross-site caller, as in
  // production; SameSite=Lax for a same-site one, as the demo does over plain http (WebKit refuses a Secure cookie
  // from an http origin, loopback included).
  adResponse: (req) => ({
    body: { ok: true, pid: req.cookies.pid ?? null },
    headers: req.cookies.pid
      ? {}
      : { 'Set-Cookie': pidSetCookie(`pid-${++pids}`, { sameSite: crossSite(req.headers.origin) ? 'None' : 'Lax' }) },
  }),
});
// Chromium as Chrome ships (third-party cookies allowed); Firefox and WebKit always with their defaults.
test.use({ thirdPartyStorage: true });

const EMAIL = 'engines.user@example.com';
const HASH = createHash('sha256').update(EMAIL).digest('hex');

/** Two ad calls one after the other from a page on `pageOrigin` to the ad server on 127.0.0.1. */
async function twoCalls(page: EnginePage, pageOrigin: string) {
  const path = `/two-calls-${Math.random().toString(36).slice(2)}`;
  const adServer = JSON.stringify(server().url);
  server().page(
    path,
    publisherPage({
      commands: `sas.setup({ domain: ${adServer} });
    sas.call('std', {})
      .then(function () { return sas.call('generic', {}) })
      .then(function (r) { window.done = r });`,
    }),
  );
  await page.goto(pageOrigin + path);
  await page.waitForFunction(() => (window as unknown as { done?: unknown }).done);
  return server().adCalls().slice(-2);
}

/** Whether each engine, as it ships, sends a cookie set on a cross-site fetch back on the next one. */
const THIRD_PARTY_COOKIES: Record<EngineName, boolean> = {
  chromium: true, // allowed by default (Chrome keeps third-party cookies unless the user blocks them)
  firefox: true, // Total Cookie Protection: kept, but in a jar partitioned by the top-level site
  webkit: false, // blocked (Safari's default)
};

test('the pid cookie goes back on a same-site ad call in every engine', async ({ web: page }) => {
  const [first, second] = await twoCalls(page, server().url);
  expect(first.cookies.pid).toBeUndefined();
  expect(second.cookies.pid).toBe(`pid-${pids}`);
});

test('on a cross-site ad call the pid cookie comes back only where the engine keeps third-party cookies', async ({
  web: page,
}) => {
  const [first, second] = await twoCalls(page, server().altUrl);
  expect(first.headers.origin).toBe(server().altUrl);
  expect(first.cookies.pid).toBeUndefined();
  if (THIRD_PARTY_COOKIES[page.engine]) expect(second.cookies.pid).toBe(`pid-${pids}`);
  else expect(second.cookies.pid).toBeUndefined();
  // The call itself is answered and readable either way (CORS with credentials).
  expect(await page.evaluate(() => (window as unknown as { done: { ok: boolean } }).done.ok)).toBe(true);
});

test('a publisher uid identifies the user on a cross-site ad call in every engine, with or without the pid', async ({
  web: page,
}) => {
  const path = '/uid-cross-site';
  const setup = `sas.setup({ domain: ${JSON.stringify(server().url)}, uid: 'publisher-user-9' });`;
  server().page(
    path,
    publisherPage({
      commands: `${setup}
    sas.call('std', {}).then(function () { window.done = true });`,
    }),
  );
  await page.goto(server().altUrl + path);
  await page.waitForFunction(() => (window as unknown as { done?: boolean }).done);
  expect(server().adCalls().at(-1)!.query.uid).toBe('publisher-user-9');
});

test('both e2e origins, localhost and 127.0.0.1, are secure contexts with crypto.subtle in every engine', async ({
  web: page,
}) => {
  server().page('/secure', '<!doctype html><title>secure</title>');
  for (const origin of [server().url, server().altUrl]) {
    await page.goto(`${origin}/secure`);
    expect(await page.evaluate(() => [isSecureContext, typeof crypto.subtle?.digest])).toEqual([true, 'function']);
  }
});

/** A page of network 4321 (every module) whose URL carries the email; `head` runs before the tag. */
async function hashedEmail(page: EnginePage, head = '') {
  const path = `/email-${Math.random().toString(36).slice(2)}`;
  server().page(
    path,
    publisherPage({
      networkId: 4321,
      head,
      commands: `sas.setup({ networkid: 4321, domain: location.origin, modules: { identityLink: { placementId: 1 } } });`,
    }),
  );
  await page.goto(`${server().url}${path}?email=${encodeURIComponent(EMAIL)}`);
  await page.waitForFunction(() => !!localStorage.getItem('_sas_hem'), undefined, { timeout: 10_000 });
  const r: { url: string } = await page.evaluate(() => (window as any).sas.call('std', {}));
  const eids = new URL(r.url).searchParams.get('eids');
  const decoded: { source: string; uids: { id: string }[] }[] = JSON.parse(
    Buffer.from(eids!, 'base64url').toString('utf8'),
  );
  return decoded.find((e) => e.source === 'hemsha256')?.uids[0].id;
}

test('the email hash is the same with crypto.subtle and with the pure-JS fallback', async ({ web: page }) => {
  expect(await hashedEmail(page)).toBe(HASH);
  // A page without crypto.subtle (as a plain-http page has none): the module hashes in JS, to the same value.
  const noSubtle =
    '<script>Object.defineProperty(Crypto.prototype, "subtle", { get: function () { return undefined; } });</script>';
  await page.evaluate(() => localStorage.clear());
  expect(await hashedEmail(page, noSubtle)).toBe(HASH);
  expect(await page.evaluate(() => typeof crypto.subtle)).toBe('undefined');
  expect(await page.errors()).toEqual([]);
});

test('ids a module cached in a cross-site frame are partitioned: the same origin at top level does not see them', async ({
  web: page,
}) => {
  const why =
    "Playwright turns off Chromium's third-party storage partitioning (ThirdPartyStoragePartitioning), which Chrome ships on";
  skipIn(page.engine, ['chromium'], why);
  // The tag of network 4321 in a frame from localhost, under a top page on 127.0.0.1.
  server().page(
    '/framed',
    publisherPage({
      networkId: 4321,
      commands: `sas.setup({ networkid: 4321, domain: location.origin, modules: { identityLink: { placementId: 1 } } });`,
    }),
  );
  const framed = `${server().altUrl}/framed?email=${encodeURIComponent(EMAIL)}`;
  server().page('/top', `<!doctype html><title>top</title><iframe src="${framed}"></iframe>`);
  await page.goto(`${server().url}/top`);
  const frame = await page.frame((u) => u.startsWith(server().altUrl));
  await frame.waitForFunction(() => !!localStorage.getItem('_sas_hem'), undefined, { timeout: 10_000 });
  // The frame's origin, opened as a top-level page: its own storage, without the frame's cached hash.
  server().page('/alone', '<!doctype html><title>alone</title>');
  await page.goto(`${server().altUrl}/alone`);
  expect(await page.evaluate(() => localStorage.getItem('_sas_hem'))).toBeNull();
});
