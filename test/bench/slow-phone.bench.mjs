#!/usr/bin/env node
// What the tag costs a slow phone: Debian's Chromium with 4x CPU throttling (DevTools protocol,
// Emulation.setCPUThrottlingRate), pages loaded side by side in one run, interleaved, ROUNDS times each:
//   floor     the tag's page with an empty script in place of the tag: the same stand-ins, the same inline
//             commands queued on `sas.cmd`, one external async script (empty). A page identical except for the
//             tag, so that what is added is the tag's own work (a page without the external script and the
//             commands would charge the tag with loading a script at all; measured here, that is 1-3 ms).
//   core      dist/sas.js: eids set by the page, one ad call
//   full      the script operators serve a network with every module on (identityLink, idLinking, criteo, uid2,
//             prebid): composeTag of demo/networks.json's 4321
//   floor-pb  Prebid's page with an empty script in place of Prebid.js (the floor of the `prebid` row)
//   prebid    Prebid.js (npm prebid.js: core + userId + the id submodules doing the same jobs: identityLink, ID5,
//             Criteo, UID2), the ad call sent once Prebid has its ids (requestBids), with those eids
// Every id endpoint is a local stub (the bench server, or Playwright routes for the fixed https hosts).
// Measured per page (medians): main-thread scripting time added over its floor and the longest task in which the
// page's script runs (both from a trace, CPU time x the throttling rate: see mainThread), navigation -> first ad
// call leaving on a first visit and with the ids cached (a second visit in the same profile), the script's start
// -> ad call with cached ids (wall clock, performance marks and resource timing), and the script bytes.
// Where the tag's time goes (a trace with the v8 and disabled-by-default-v8.compile categories): about half
// of its main-thread time is V8 compiling its functions lazily on their first call (~60 V8.CompileCode /
// V8.ParseFunction events nested in its EvaluateScript); the rest is running its queue, the consent reader and the
// ad call's fetch. V8's compile hint (a `//# allFunctionsCalledOnLoad` line before any code) moves that compiling
// off the main thread while the script streams in: docs/tag.md#browsers says what it would cost and save.
// Budgets (exit 1 when one is over): full tag scripting <= 1/20 of Prebid's; no task of the tag's script over 50 ms
// in any round; with cached ids the full tag's ad call leaves within 50 ms of its script running (median: a wall
// clock on a shared machine).
import { chromium } from '@playwright/test';
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { handleModuleRoute } from '../../demo/modules/routes.mjs';
import { prebidBundle } from '../../demo/modules/prebid-bundle.mjs';
import { composeTag, loadNetworksConfig } from '../../dist/node/operator/index.js';
import { fileURLToPath } from 'node:url';

const ROUNDS = Number(process.env.ROUNDS ?? 5);
const THROTTLE = 4;
const dist = (f) => readFileSync(new URL(`../../dist/${f}`, import.meta.url), 'utf8');
const PREBID_MODULES = ['userId', 'identityLinkIdSystem', 'id5IdSystem', 'criteoIdSystem', 'uid2IdSystem'];
// The full build: the script an operator serves a network with every module (demo/networks.json: 4321).
const networks = loadNetworksConfig(fileURLToPath(new URL('../../demo/networks.json', import.meta.url)));
const SCRIPTS = {
  '/sas.js': dist('sas.js'),
  '/sas.full.js': composeTag('4321', networks),
  '/prebid.js': prebidBundle(PREBID_MODULES, 'pbjs'),
  '/empty.js': '',
};
const EMAIL = 'bench.user@example.com';
const FAR = Date.now() + 30 * 86_400_000;

// The providers' scripts being on the page, as demo/modules/page.html stands them in (read by both the tag's
// modules and Prebid's submodules through their own means).
const STANDINS = `<script>window.criteo_pubtag = {}; document.cookie = 'cto_bidid=CRITEO-bench-bidid;path=/';
window.__uid2 = { getAdvertisingToken: function () { return 'UID2-bench-advertising-token'; } };</script>`;
// Marks when the tag (or Prebid) first runs a queued command: its script is running.
const MARK = `window.benchRan = performance.now();`;

const page = (head) =>
  `<!doctype html><html><head><meta charset="utf-8"><title>bench</title>${head}</head><body><p>article</p></body></html>`;
const tagPage = (src, setup) =>
  page(`${STANDINS}<script>window.sas = { cmd: [] }; sas.cmd.push(function () { ${MARK}
  sas.setup(${setup});
  sas.setEids([{ source: 'pubcid.org', uids: [{ id: 'bench-pubcid', atype: 1 }] }]);
  sas.call('std', { siteId: 1, pageId: 2, formatId: 3 }).then(function () { window.benchDone = true; });
});</script><script async src="${src}"></script>`);

/** The script each page adds (its tasks are the ones budgeted), and the floor it is measured over. */
const SCRIPT_OF = {
  floor: '/empty.js',
  core: '/sas.js',
  full: '/sas.full.js',
  'floor-pb': '/empty.js',
  prebid: '/prebid.js',
};
const FLOOR_OF = { floor: 'floor', core: 'floor', full: 'floor', 'floor-pb': 'floor-pb', prebid: 'floor-pb' };

const prebidPage = (src) =>
  page(`${STANDINS}<script>window.pbjs = { que: [] }; pbjs.que.push(function () { ${MARK}
  pbjs.setConfig({ userSync: { syncDelay: 0, auctionDelay: 1000, userIds: [
    { name: 'identityLink', params: { pid: '999' }, storage: { type: 'html5', name: 'idl_env', expires: 15 } },
    { name: 'id5Id', params: { partner: 102, configUrl: location.origin + '/id5/config' }, storage: { type: 'html5', name: 'id5id', expires: 90 } },
    { name: 'criteo' },
    { name: 'uid2', params: { uid2Token: { advertising_token: 'UID2-bench-advertising-token', refresh_token: 'r', identity_expires: ${FAR}, refresh_from: ${FAR}, refresh_expires: ${FAR} } } }
  ] } });
  // As a page's auction does: requestBids waits for the ids (up to auctionDelay), then the ad call goes with them.
  pbjs.requestBids({ adUnits: [{ code: 'top', mediaTypes: { banner: { sizes: [[300, 250]] } }, bids: [] }], bidsBackHandler: function () {
    var eids = pbjs.getUserIdsAsEids();
    var b64 = btoa(unescape(encodeURIComponent(JSON.stringify(eids)))).replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '');
    fetch('/ac?nwid=1234&siteid=1&pgid=2&fmtid=3&eids=' + b64, { credentials: 'include' }).then(function () { window.benchDone = true; });
  } });
});</script><script async src="${src}"></script>`);

const CORE_SETUP = `{ networkid: 1234, domain: location.origin }`;
const PAGES = {
  floor: tagPage('/empty.js', CORE_SETUP),
  core: tagPage('/sas.js', CORE_SETUP),
  full: tagPage(
    '/sas.full.js',
    `{ networkid: 4321, domain: location.origin, modules: { identityLink: { placementId: 1 }, idLinking: { url: location.origin + '/idlink/g/v2' }, criteo: {}, uid2: {}, prebid: {} } }`,
  ),
  'floor-pb': prebidPage('/empty.js'),
  prebid: prebidPage('/prebid.js'),
};
/** Pages whose script sends no ad call. */
const FLOORS = new Set(['floor', 'floor-pb']);

let adCalls = 0;
const server = createServer(async (req, res) => {
  const url = new URL(req.url, 'http://localhost');
  const cors = { 'Access-Control-Allow-Origin': req.headers.origin || '*', 'Access-Control-Allow-Credentials': 'true' };
  if (url.pathname.startsWith('/idlink/')) return void (await handleModuleRoute(req, res));
  if (url.pathname === '/id5/config') {
    for await (const _ of req);
    res.writeHead(200, { 'Content-Type': 'application/json', ...cors });
    return res.end(JSON.stringify({ fetchCall: { url: `http://localhost:${port}/idlink/g/v2/102.json` } }));
  }
  if (url.pathname === '/ac') adCalls++;
  if (url.pathname === '/ac') return res.writeHead(200, { 'Content-Type': 'application/json', ...cors }).end('{}');
  if (SCRIPTS[url.pathname])
    return res.writeHead(200, { 'Content-Type': 'text/javascript' }).end(SCRIPTS[url.pathname]);
  const name = url.pathname.slice(1);
  if (PAGES[name]) return res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(PAGES[name]);
  res.writeHead(404).end();
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const port = server.address().port;
// localhost: a secure context (crypto.subtle) in every engine.
const origin = `http://localhost:${port}`;

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
  args: [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--no-first-run',
  ],
});

/** The fixed https id endpoints of Prebid's submodules, answered locally. */
async function stubHosts(context) {
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

// Main-thread work is read from a trace as CPU time (`tdur`) times the throttling rate: Chrome throttles by pausing
// the renderer's main thread, which stretches wall time by the rate, and on a shared machine wall time is also
// stretched by every other process (here, 8 sessions on 2 cores) while CPU time is not.
const SCRIPT_EVENTS = new Set([
  'EvaluateScript',
  'v8.compile',
  'v8.evaluateModule',
  'FunctionCall',
  'TimerFire',
  'RunMicrotasks',
  'FireIdleCallback',
  'FireAnimationFrame',
]);

/**
 * From a trace, in throttled ms: the main thread's scripting (top-level script events, nested ones not counted
 * twice), its longest task (RunTask), and the longest task in which `script` runs (a task holding an event
 * attributed to that script's URL: its evaluation, a function call, a timer).
 */
function mainThread(trace, script) {
  const events = JSON.parse(trace.toString('utf8')).traceEvents;
  // The page's own main thread: the one that parsed its HTML (the trace holds every renderer of the browser).
  const parse = events.find((e) => e.name === 'ParseHTML' && String(e.args?.beginData?.url).startsWith(origin));
  const onMain = events
    .filter((e) => e.ph === 'X' && e.pid === parse?.pid && e.tid === parse?.tid)
    .sort((x, y) => x.ts - y.ts);
  const cpu = (e) => ((e.tdur ?? e.dur) / 1000) * THROTTLE;
  let scripting = 0;
  let end = -1;
  for (const e of onMain) {
    if (!SCRIPT_EVENTS.has(e.name) || e.ts < end) continue;
    scripting += cpu(e);
    end = e.ts + e.dur;
  }
  const tasks = onMain.filter((e) => e.name === 'RunTask');
  const urlOf = (e) => e.args?.data?.url || e.args?.data?.scriptName || e.args?.data?.stackTrace?.[0]?.url || '';
  const marks = script ? onMain.filter((e) => e.name !== 'RunTask' && urlOf(e).includes(script)) : [];
  let all = 0;
  let own = 0;
  for (const t of tasks) {
    all = Math.max(all, cpu(t));
    if (marks.some((m) => m.tid === t.tid && m.ts >= t.ts && m.ts <= t.ts + t.dur)) own = Math.max(own, cpu(t));
  }
  return { scripting, all, own };
}

/** One visit of `name` in `context`: scripting ms, longest task ms, navigation -> ad call ms, script -> ad call ms. */
async function visit(context, name) {
  const p = await context.newPage();
  const cdp = await context.newCDPSession(p);
  await cdp.send('Emulation.setCPUThrottlingRate', { rate: THROTTLE });
  const before = adCalls;
  await browser.startTracing(p, { categories: ['disabled-by-default-devtools.timeline', 'devtools.timeline'] });
  // The email the identityLink module finds in the URL (Prebid's submodules take none from there).
  await p.goto(`${origin}/${name}?email=${encodeURIComponent(EMAIL)}`);
  // Waiting on the server, not in the page: nothing of Playwright's may run in the page while it is traced.
  const end = Date.now() + 30_000;
  while (!FLOORS.has(name) && adCalls === before) {
    if (Date.now() > end) throw new Error(`${name}: no ad call within 30 s`);
    await new Promise((r) => setTimeout(r, 20));
  }
  await p.waitForTimeout(300); // trailing timers and callbacks
  const trace = await browser.stopTracing();
  const marks = await p.evaluate(() => {
    const ac = performance.getEntriesByType('resource').find((e) => /\/ac\?/.test(e.name));
    const b64 = ac && new URL(ac.name).searchParams.get('eids');
    const eids = b64 ? JSON.parse(decodeURIComponent(escape(atob(b64.replace(/-/g, '+').replace(/_/g, '/'))))) : [];
    return { ran: window.benchRan, leaves: ac?.startTime, sources: eids.map((e) => e.source) };
  });
  await p.close();
  const tasks = mainThread(trace, SCRIPT_OF[name]);
  return {
    scripting: tasks.scripting,
    longest: tasks.own,
    longestAny: tasks.all,
    navToCall: marks.leaves,
    runToCall: marks.leaves === undefined ? undefined : marks.leaves - marks.ran,
    sources: marks.sources,
  };
}

const results = Object.fromEntries(Object.keys(PAGES).map((k) => [k, { first: [], cached: [] }]));
for (let round = 0; round < ROUNDS; round++) {
  // Interleaved, the order rotating each round: the machine's load falls on every page alike.
  const names = Object.keys(PAGES);
  const order = names.slice(round % names.length).concat(names.slice(0, round % names.length));
  for (const name of order) {
    const context = await browser.newContext();
    await stubHosts(context);
    results[name].first.push(await visit(context, name));
    results[name].cached.push(await visit(context, name));
    await context.close();
  }
}
await browser.close();
server.close();

const median = (xs) => {
  const v = xs.filter((x) => typeof x === 'number').sort((a, b) => a - b);
  return v.length ? v[Math.floor((v.length - 1) / 2)] : NaN;
};
const range = (xs) => {
  const v = xs.filter((x) => typeof x === 'number');
  return `${Math.min(...v).toFixed(0)}-${Math.max(...v).toFixed(0)}`;
};
const floorOf = (name) => median(results[FLOOR_OF[name]].first.map((r) => r.scripting));
const summary = {};
console.log(`Chromium, CPU throttled ${THROTTLE}x, ${ROUNDS} rounds, medians (range) in ms:`);
console.log(
  'page     | scripting added | longest task of its script (any task) | nav->ad call first / cached | script->ad call cached | bytes raw / gzip | eids',
);
for (const [name, r] of Object.entries(results)) {
  const floor = floorOf(name);
  const added = median(r.first.map((x) => x.scripting)) - floor;
  const longest = median([...r.first, ...r.cached].map((x) => x.longest));
  const longestAny = median([...r.first, ...r.cached].map((x) => x.longestAny));
  const s = {
    added,
    longest,
    longestMax: Math.max(...[...r.first, ...r.cached].map((x) => x.longest)),
    navFirst: median(r.first.map((x) => x.navToCall)),
    navCached: median(r.cached.map((x) => x.navToCall)),
    runCached: median(r.cached.map((x) => x.runToCall)),
    runCachedMax: Math.max(...r.cached.map((x) => x.runToCall ?? 0)),
  };
  summary[name] = s;
  const script = SCRIPTS[SCRIPT_OF[name]];
  const b = `${Buffer.byteLength(script)} / ${script ? gzipSync(script, { level: 9 }).length : 0}`;
  // A floor's script is empty and sends no ad call: nothing of its own to show.
  const fmt = (v) => (Number.isNaN(v) || (FLOORS.has(name) && !v) ? '-' : v.toFixed(1));
  console.log(
    `${name.padEnd(8)} | ${fmt(added).padStart(6)} (${range(r.first.map((x) => x.scripting - floor))}) | ${fmt(longest).padStart(5)} (max ${fmt(s.longestMax)}) (${fmt(longestAny)}) | ${fmt(s.navFirst)} / ${fmt(s.navCached)} | ${fmt(s.runCached)} (max ${fmt(s.runCachedMax)}) | ${b} | ${[...new Set(r.first.flatMap((x) => x.sources))].join(', ')}`,
  );
}
const ratio = summary.prebid.added / summary.full.added;
console.log(`\nPrebid.js adds ${ratio.toFixed(1)}x the full tag's scripting time (budget: at least 20x)`);

const over = [];
if (!(summary.full.added * 20 <= summary.prebid.added))
  over.push(
    `full tag scripting ${summary.full.added.toFixed(1)} ms > 1/20 of Prebid's ${summary.prebid.added.toFixed(1)} ms`,
  );
for (const name of ['core', 'full'])
  if (summary[name].longestMax > 50)
    over.push(`${name}: a task of ${summary[name].longestMax.toFixed(1)} ms (budget 50 ms)`);
if (!(summary.full.runCached <= 50))
  over.push(
    `full tag with cached ids: ad call ${summary.full.runCached.toFixed(1)} ms after the script ran (budget 50 ms)`,
  );
if (over.length) {
  console.log(`OVER BUDGET:\n  ${over.join('\n  ')}`);
  process.exitCode = 1;
} else console.log('every budget holds');
