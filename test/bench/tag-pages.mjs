// The pages and the local server of the browser benchmarks (slow-phone.bench.mjs, cold-visit.bench.mjs): the tag's
// page in its builds, Prebid's page doing the same jobs, and the floors they are measured over. Every id endpoint
// is local (the server below; Prebid's fixed https hosts are answered by the caller: see stubbedHosts).
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { handleModuleRoute } from '../../demo/modules/routes.mjs';
import { prebidBundle } from '../../demo/modules/prebid-bundle.mjs';
import { composeTag, loadNetworksConfig } from '../../dist/node/operator/index.js';

const dist = (f) => readFileSync(new URL(`../../dist/${f}`, import.meta.url), 'utf8');
/** V8's compile hint, as the build writes it in the core and the full build (rollup.config.mjs). */
export const COMPILE_HINT = '//# allFunctionsCalledOnLoad';
/** `script` without its compile hint line: the same build as it was before the hint. */
export const withoutHint = (script) => script.replace(`${COMPILE_HINT}\n`, '');
const PREBID_MODULES = ['userId', 'identityLinkIdSystem', 'id5IdSystem', 'criteoIdSystem', 'uid2IdSystem'];
// The full build: the script an operator serves a network with every module (demo/networks.json: 4321).
const networks = loadNetworksConfig(fileURLToPath(new URL('../../demo/networks.json', import.meta.url)));
const core = dist('sas.js');
const full = composeTag('4321', networks);
export const SCRIPTS = {
  '/sas.js': core,
  '/sas.nohint.js': withoutHint(core),
  '/sas.full.js': full,
  '/sas.full.nohint.js': withoutHint(full),
  '/prebid.js': prebidBundle(PREBID_MODULES, 'pbjs'),
  '/empty.js': '',
  // The floor of the cold-visit bench: an async script making the ad call itself, at once.
  '/direct.js': `window.benchCall = performance.now(); fetch('/ac?direct=1', { credentials: 'include' });`,
};
const FAR = Date.now() + 30 * 86_400_000;

// The providers' scripts being on the page, as demo/modules/page.html stands them in (read by both the tag's
// modules and Prebid's submodules through their own means).
const STANDINS = `<script>window.criteo_pubtag = {}; document.cookie = 'cto_bidid=CRITEO-bench-bidid;path=/';
window.__uid2 = { getAdvertisingToken: function () { return 'UID2-bench-advertising-token'; } };</script>`;
// The page's own first use of what the tag uses too: a page (its analytics, its consent banner) reads its cookies
// and storage and fetches something before an ad script runs; the browser's first-use cost (setting up the storage
// area, the cookie jar's view, the fetch machinery: 3-5 ms at 4x) is the page's, not the tag's.
const FIRST_USES = `<script>document.cookie; try { localStorage.getItem('page'); } catch (e) {}
fetch('/empty.js?page').catch(function () {});</script>`;
// Marks when the tag (or Prebid) runs the queued commands (its script is running) and when the page's ad call is
// made (the tag's `sas.call`, or Prebid's bids back).
const MARK = `window.benchRan = performance.now();`;

const page = (head) =>
  `<!doctype html><html><head><meta charset="utf-8"><title>bench</title>${STANDINS}${FIRST_USES}${head}</head><body><p>article</p></body></html>`;
const tagPage = (src, setup) =>
  page(`<script>window.sas = { cmd: [] }; sas.cmd.push(function () { ${MARK}
  sas.setup(${setup});
  sas.setEids([{ source: 'pubcid.org', uids: [{ id: 'bench-pubcid', atype: 1 }] }]);
  window.benchCall = performance.now();
  sas.call('std', { siteId: 1, pageId: 2, formatId: 3 }).then(function () { window.benchDone = true; });
});</script><script async src="${src}"></script>`);

const prebidPage = (src) =>
  page(`<script>window.pbjs = { que: [] }; pbjs.que.push(function () { ${MARK}
  pbjs.setConfig({ userSync: { syncDelay: 0, auctionDelay: 1000, userIds: [
    { name: 'identityLink', params: { pid: '999' }, storage: { type: 'html5', name: 'idl_env', expires: 15 } },
    { name: 'id5Id', params: { partner: 102, configUrl: location.origin + '/id5/config' }, storage: { type: 'html5', name: 'id5id', expires: 90 } },
    { name: 'criteo' },
    { name: 'uid2', params: { uid2Token: { advertising_token: 'UID2-bench-advertising-token', refresh_token: 'r', identity_expires: ${FAR}, refresh_from: ${FAR}, refresh_expires: ${FAR} } } }
  ] } });
  // As a page's auction does: requestBids waits for the ids (up to auctionDelay), then the ad call goes with them.
  window.benchCall = performance.now();
  pbjs.requestBids({ adUnits: [{ code: 'top', mediaTypes: { banner: { sizes: [[300, 250]] } }, bids: [] }], bidsBackHandler: function () {
    var eids = pbjs.getUserIdsAsEids();
    var b64 = btoa(unescape(encodeURIComponent(JSON.stringify(eids)))).replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '');
    fetch('/ac?nwid=1234&siteid=1&pgid=2&fmtid=3&eids=' + b64, { credentials: 'include' }).then(function () { window.benchDone = true; });
  } });
});</script><script async src="${src}"></script>`);

const CORE_SETUP = `{ networkid: 1234, domain: location.origin }`;
// Every module on, as the demo's modules page sets them up.
const FULL_SETUP = `{ networkid: 4321, domain: location.origin, modules: { identityLink: { placementId: 1 }, idLinking: { url: location.origin + '/idlink/g/v2' }, criteo: {}, uid2: {}, prebid: {} } }`;
/** Every page: its HTML, the script it adds over its floor, and that floor. */
export const PAGES = {
  floor: { html: tagPage('/empty.js', CORE_SETUP), script: '/empty.js' },
  core: { html: tagPage('/sas.js', CORE_SETUP), script: '/sas.js', floor: 'floor' },
  'core-nohint': { html: tagPage('/sas.nohint.js', CORE_SETUP), script: '/sas.nohint.js', floor: 'floor' },
  full: { html: tagPage('/sas.full.js', FULL_SETUP), script: '/sas.full.js', floor: 'floor' },
  'full-nohint': { html: tagPage('/sas.full.nohint.js', FULL_SETUP), script: '/sas.full.nohint.js', floor: 'floor' },
  'floor-pb': { html: prebidPage('/empty.js'), script: '/empty.js' },
  prebid: { html: prebidPage('/prebid.js'), script: '/prebid.js', floor: 'floor-pb' },
};

// BASELINE=<file>: a full tag saved from an earlier build (the `/sas.full.js` this server served then), measured as
// the page `full-base` beside the current one, for a before/after in one interleaved run.
if (process.env.BASELINE) {
  SCRIPTS['/sas.full.base.js'] = readFileSync(process.env.BASELINE, 'utf8');
  PAGES['full-base'] = { html: tagPage('/sas.full.base.js', FULL_SETUP), script: '/sas.full.base.js', floor: 'floor' };
}

/** Pages served beside {@link PAGES}, not part of the slow-phone comparison. */
const OTHER_PAGES = { 'floor-call': page('<script async src="/direct.js"></script>') };

// A fixed busy loop, run as a task of its own (an inline script) and then as a promise callback (after a fetch, as
// the tag's work after its first await): the check of the measurement. Each run's CPU time is known from an
// unthrottled run; a trace must see both, and 4x throttling must show as 4x its CPU time. The ad call tells the
// bench both ran.
const LOOP_N = Number(process.env.LOOP_N ?? 10_000_000);
const LOOP = `function spin(n) { var x = 0; for (var i = 0; i < n; i++) x = (x + i * 7) % 1000003; return x; }
window.benchLoop = spin(${LOOP_N});
fetch('/empty.js?loop').then(function () { window.benchLoop += spin(${LOOP_N}); return fetch('/ac?loop'); });`;
export const LOOP_PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>loop</title><script>${LOOP}</script></head><body></body></html>`;

/**
 * Starts the pages' server on a free loopback port. `onAdCall(url)` is called the moment an ad call arrives.
 * Returns its origin (localhost: a secure context in every engine) and `close`.
 */
export async function startPagesServer({ onAdCall = () => {} } = {}) {
  let port = 0;
  const server = createServer(async (req, res) => {
    const url = new URL(req.url, 'http://localhost');
    const cors = {
      'Access-Control-Allow-Origin': req.headers.origin || '*',
      'Access-Control-Allow-Credentials': 'true',
    };
    if (url.pathname.startsWith('/idlink/')) return void (await handleModuleRoute(req, res));
    if (url.pathname === '/id5/config') {
      for await (const _ of req);
      res.writeHead(200, { 'Content-Type': 'application/json', ...cors });
      return res.end(JSON.stringify({ fetchCall: { url: `http://localhost:${port}/idlink/g/v2/102.json` } }));
    }
    if (url.pathname === '/ac' || url.pathname === '/call') {
      onAdCall(url);
      return res.writeHead(200, { 'Content-Type': 'application/json', ...cors }).end('{}');
    }
    if (SCRIPTS[url.pathname] !== undefined)
      return res.writeHead(200, { 'Content-Type': 'text/javascript' }).end(SCRIPTS[url.pathname]);
    const name = url.pathname.slice(1);
    const html = name === 'loop' ? LOOP_PAGE : (PAGES[name]?.html ?? OTHER_PAGES[name]);
    if (html) return res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(html);
    res.writeHead(404).end();
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  port = server.address().port;
  return {
    origin: `http://localhost:${port}`,
    close: () => {
      server.closeAllConnections();
      return new Promise((r) => server.close(r));
    },
  };
}

/** The fixed https id endpoints of Prebid's submodules, answered locally in a Playwright context. */
export async function stubHosts(context, origin) {
  const json = (route, body) =>
    route.fulfill({
      status: 200,
      contentType: 'application/json',
      headers: { 'Access-Control-Allow-Origin': origin, 'Access-Control-Allow-Credentials': 'true' },
      body: JSON.stringify(body),
    });
  // Any other https host is refused. Registered first: Playwright tries the routes last registered first, so a
  // catch-all registered after the stubs would refuse their hosts too (Prebid's identityLink and Criteo calls).
  await context.route(/^https:\/\//, (r) => r.abort());
  await context.route('https://gum.criteo.com/**', (r) => json(r, { bidId: 'CRITEO-bench-bidid' }));
  await context.route('https://api.rlcdn.com/**', (r) => json(r, { envelope: 'Ae-bench-envelope' }));
}
