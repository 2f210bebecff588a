// The demo: a publisher page (demo/index.html) and a local ad server on loopback (hono + @hono/node-server).
// Serves the tag at /tag/<network_id>/sas.js through eidkit/operator (the operator's own handler, configured by
// demo/networks.json), answers the ad-call endpoints through eidkit/adserver (demo/report.mjs:
// pid cookie, provider log, report, bid requests), prints each call's decoded eids with provider ids and names, and
// serves the live report at /report (same data at /report.json and /report.csv). Start it with `npm run demo`
// (builds first); PORT picks the port (default 8080); REDIS_URL shares the cap and the report through Redis.
import { getRequestListener } from '@hono/node-server';
import { Hono } from 'hono';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { createClient } from 'redis';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { handleModuleRoute } from './modules/routes.mjs';
import { mountPrebidDemo } from './prebid/routes.mjs';
import { createAdServerDemo } from './report.mjs';
import { createTagApp, loadNetworksConfig } from '../dist/node/operator/index.js';
import { createCorsPolicy, corsMiddleware } from '../dist/node/adserver/index.js';

const HOST = '127.0.0.1';
/** Where call summaries are printed; `startDemo(port, { quiet: true })` silences them (tests). */
let print = console.log;
const here = new URL('./', import.meta.url);

/** The demo's icon: "e" on a blue square. */
const FAVICON =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#36c"/><text x="8" y="12" font-size="11" text-anchor="middle" fill="#fff" font-family="sans-serif">e</text></svg>';

/** The ad-call endpoints and the kind of call each receives (docs/wire-format.md#how-eids-reach-an-ad-call). */
export const AD_CALL_PATHS = { '/ac': 'get', '/genericpost': 'generic', '/call': 'onecall' };

/**
 * The page origins allowed to read the demo's answers: its own, as 127.0.0.1 and as localhost. Never every
 * `Origin`: the tag sends the visitor's cookies, so an answer any site could read would hand it the visitor's
 * ad-server id (docs/ad-server.md, "CORS: which pages may read the answers").
 */
export function demoOrigins(port) {
  return [`http://${HOST}:${port}`, `http://localhost:${port}`];
}

/**
 * Answers one ad call (`kind`: 'get' for std/video, 'generic', 'onecall') through eidkit/adserver: parses and
 * records it in `adserver` (demo/report.mjs), sets the `pid` cookie on a first visit, prints the decoded eids
 * with their provider ids and names, and answers with a JSON summary and the bid requests built for it.
 */
export async function handleAdCall(kind, request, adserver, { ip } = {}) {
  const { call, entry, setCookie } = await adserver.recordAdCall(request, { ip });
  const path = new URL(request.url).pathname;
  print(
    `${request.method} ${path} (${kind}) network ${call.networkId ?? '?'}, pid ${call.pid ?? 'none'}, uid ${call.uid ?? 'none'}`,
  );
  for (const e of entry.eids)
    print(
      `  eid ${e.source} → provider ${e.providerId} ${e.providerName} (${e.uids.length} uid${e.uids.length === 1 ? '' : 's'})`,
    );
  if (!entry.eids.length) print('  no eids');
  for (const i of entry.issues) print(`  issue ${i.path}: ${i.message}`);
  // CORS headers come from the policy (corsMiddleware in createDemoApp).
  const headers = { 'Cache-Control': 'no-store' };
  // The service keeps its own user id in an HttpOnly `pid` cookie; the answer never repeats it, so no script
  // (the page's or a third party's) reads it.
  if (setCookie) headers['Set-Cookie'] = setCookie;
  const providers = entry.eids.map((e) => ({
    source: e.source,
    provider: { id: e.providerId, name: e.providerName },
    uids: e.uids.length,
  }));
  return Response.json(
    {
      kind,
      path,
      hasPid: Boolean(call.pid),
      uid: call.uid ?? null,
      eids: call.eids,
      providers,
      issues: entry.issues,
      bidRequests: entry.bidRequests.map(withoutPid),
    },
    { headers },
  );
}

/** A bid request as the answer shows it: without `user.id`, which holds the pid (the report keeps it whole). */
function withoutPid({ partner, request }) {
  if (request?.user?.id === undefined) return { partner, request };
  const { id: _pid, ...user } = request.user;
  return { partner, request: { ...request, user } };
}

/**
 * The demo app: page, tag, ad calls, report. `adserver` keeps the report state (one per app); `origins` are the
 * page origins allowed to read the ad-call answers (default none: only same-origin pages, which need no CORS).
 */
export function createDemoApp(adserver = createAdServerDemo(), { origins = [] } = {}) {
  const app = new Hono();
  const cors = corsMiddleware(createCorsPolicy({ origins }));
  for (const path of [...Object.keys(AD_CALL_PATHS), '/prebid/v1', '/prebid/v1/*']) app.use(path, cors);
  for (const path of ['/report', '/report.json', '/report.csv', '/report/sample-call.json']) {
    app.get(path, async (c) => (await adserver.reportResponse(c.req.raw)) ?? c.notFound());
  }
  app.get('/', async (c) => c.html(await readFile(new URL('index.html', here), 'utf8')));
  // Header bidding: /prebid/page.html, Prebid.js, the adapter, and the POST /prebid/v1 ad server.
  mountPrebidDemo(app, adserver, { print: (m) => print(m) });
  // Browsers ask every page's origin for /favicon.ico; an icon keeps a 404 out of the console.
  app.get('/favicon.ico', (c) =>
    c.body(FAVICON, 200, { 'Content-Type': 'image/svg+xml', 'Cache-Control': 'max-age=86400' }),
  );
  // The per-network tag, as an operator serves it (demo/networks.json); no-store: a browser never keeps a tag
  // from an earlier build of the demo.
  app.route(
    '/',
    createTagApp({
      config: loadNetworksConfig(fileURLToPath(new URL('networks.json', here))),
      cacheControl: 'no-store',
    }),
  );
  for (const [path, kind] of Object.entries(AD_CALL_PATHS)) {
    app.on(kind === 'get' ? 'GET' : 'POST', path, (c) =>
      handleAdCall(kind, c.req.raw, adserver, { ip: c.env?.incoming?.socket?.remoteAddress }),
    );
  }
  return app;
}

/** A node-redis client for REDIS_URL, or undefined (in-memory stores). Connection errors are logged, never thrown. */
async function demoRedis(url = process.env.REDIS_URL) {
  if (!url) return undefined;
  const client = createClient({ url, disableOfflineQueue: true });
  client.on('error', (e) => console.error(`redis: ${e.message}`));
  await client.connect();
  return client;
}

/** Starts the demo on loopback; resolves with the page URL. Port 0 picks a free one. */
export async function startDemo(port = Number(process.env.PORT ?? 8080), { quiet = false, origins = [] } = {}) {
  print = quiet ? () => {} : console.log;
  const redis = await demoRedis();
  if (redis) print(`cap and report shared through Redis at ${new URL(process.env.REDIS_URL).host}`); // never the password
  const adserver = createAdServerDemo({ redis });
  // The app is built once the port is known: its own page origins are the CORS allow-list.
  let honoListener = (_req, res) => res.writeHead(503).end();
  // The provider-module demo routes answer plain node:http requests first; hono gets the rest.
  // Node refuses request heads over 16 KiB with a bare 431 before any handler runs; the ad-call library has its
  // own, documented caps (a 16,384-character `eids` parameter among them), so let those be what applies.
  const server = createServer({ maxHeaderSize: 64 * 1024 }, async (req, res) => {
    try {
      if (await handleModuleRoute(req, res)) return;
    } catch (e) {
      console.error('module route failed:', e);
      if (!res.headersSent) res.writeHead(500).end();
      return;
    }
    honoListener(req, res);
  });
  // On close, the shared report's last counts go to Redis before its client closes.
  if (redis)
    server.once('close', () =>
      adserver.report
        .close()
        .finally(() => redis.close())
        .catch(() => {}),
    );
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, HOST, () => {
      const { port: bound } = server.address();
      honoListener = getRequestListener(
        createDemoApp(adserver, { origins: [...demoOrigins(bound), ...origins] }).fetch,
      );
      resolve({ url: `http://${HOST}:${bound}/`, server });
    });
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  startDemo()
    .catch((e) => {
      if (e?.code !== 'EADDRINUSE') throw e;
      console.log(`port ${process.env.PORT ?? 8080} is busy; using a free one`);
      return startDemo(0);
    })
    .then(({ url }) =>
      console.log(
        [
          `eidkit demo: open ${url}  (debug logs: ${url}?sas_debug=1)`,
          `  ad server report:          ${url}report`,
          `  provider modules, consent: ${url}modules/page.html  (a consent banner: ${url}modules/page.html?cmp=ui)`,
        ].join('\n'),
      ),
    );
}
