// The demo: a publisher page (demo/index.html) and a local ad server on loopback (hono + @hono/node-server).
// Serves the tag at /tag/<network_id>/sas.js, answers the ad-call endpoints, and prints each call's decoded eids
// with provider ids and names. Start it with `npm run demo` (builds first); PORT picks the port (default 8080).
import { getRequestListener } from '@hono/node-server';
import { Hono } from 'hono';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { pathToFileURL } from 'node:url';
import { decodeBase64Json, providerForSource, validateEids } from '../dist/node/core/index.js';
import { handleModuleRoute } from './modules/routes.mjs';
import { tagScriptFor } from './tag-bundle.mjs';

const HOST = '127.0.0.1';
/** Where call summaries are printed; `startDemo(port, { quiet: true })` silences them (tests). */
let print = console.log;
const here = new URL('./', import.meta.url);

/** The ad-call endpoints and the kind of call each receives (extended-ids.md §4). */
export const AD_CALL_PATHS = { '/ac': 'get', '/genericpost': 'generic', '/call': 'onecall' };

/** CORS for the calling origin with credentials: the tag sends the ad server's cookies with every call. */
function corsHeaders(request) {
  const origin = request.headers.get('origin');
  return origin ? { 'Access-Control-Allow-Origin': origin, 'Access-Control-Allow-Credentials': 'true', Vary: 'Origin' } : {};
}

/** Reads the eids an ad call carries: the Base64 `eids` parameter of a GET, or the `eids` array of a POST body. */
async function readEids(kind, request) {
  if (kind === 'get') {
    const param = new URL(request.url).searchParams.get('eids');
    if (param === null) return { value: [], issues: [], fields: Object.fromEntries(new URL(request.url).searchParams) };
    const decoded = decodeBase64Json(param);
    const checked = decoded.value === undefined ? { value: [], issues: [] } : validateEids(decoded.value);
    return { value: checked.value, issues: [...decoded.issues, ...checked.issues], fields: Object.fromEntries(new URL(request.url).searchParams) };
  }
  let body;
  try {
    body = JSON.parse(await request.text());
  } catch {
    return { value: [], issues: [{ path: 'body', message: 'not JSON' }], fields: {} };
  }
  const checked = body?.eids === undefined ? { value: [], issues: [] } : validateEids(body.eids);
  return { ...checked, fields: body };
}

/**
 * Answers one ad call (`kind`: 'get' for std/video, 'generic', 'onecall') with a JSON summary of what it carried,
 * and prints the decoded eids with their provider ids and names. The one place to swap for eidkit/adserver.
 */
export async function handleAdCall(kind, request) {
  const { value: eids, issues, fields } = await readEids(kind, request);
  const cookie = request.headers.get('cookie') ?? '';
  const pid = /(?:^|;\s*)pid=([^;]+)/.exec(cookie)?.[1];
  const providers = eids.map((e) => ({ source: e.source, provider: providerForSource(e.source), uids: e.uids.length }));
  const path = new URL(request.url).pathname;
  print(`${request.method} ${path} (${kind}) network ${fields.nwid ?? fields.networkId ?? '?'}, pid ${pid ?? 'none'}, uid ${fields.uid ?? 'none'}`);
  for (const p of providers) print(`  eid ${p.source} → provider ${p.provider.id} ${p.provider.name} (${p.uids} uid${p.uids === 1 ? '' : 's'})`);
  if (!providers.length) print('  no eids');
  for (const i of issues) print(`  dropped ${i.path}: ${i.message}`);
  const headers = { ...corsHeaders(request), 'Cache-Control': 'no-store' };
  // The service keeps its own user id in a `pid` cookie (extended-ids.md §2.3).
  if (!pid) headers['Set-Cookie'] = `pid=demo-${Math.random().toString(36).slice(2, 12)}; Path=/; Max-Age=31536000; SameSite=Lax`;
  return Response.json({ kind, path, pid: pid ?? null, uid: fields.uid ?? null, eids, providers, issues }, { headers });
}

/** The demo app: page, tag, ad calls. */
export function createDemoApp() {
  const app = new Hono();
  app.get('/', async (c) => c.html(await readFile(new URL('index.html', here), 'utf8')));
  app.get('/tag/:nwid/:file', async (c) => {
    const { nwid, file } = c.req.param();
    if (!/^\d{1,12}$/.test(nwid) || (file !== 'sas.js' && file !== 'sas.debug.js')) return c.notFound();
    const js = await tagScriptFor(nwid, { debug: file === 'sas.debug.js' });
    return c.body(js, 200, { 'Content-Type': 'text/javascript; charset=utf-8', 'Cache-Control': 'no-store' });
  });
  for (const [path, kind] of Object.entries(AD_CALL_PATHS)) {
    app.options(path, (c) =>
      c.body(null, 204, { ...corsHeaders(c.req.raw), 'Access-Control-Allow-Methods': 'GET, POST, OPTIONS', 'Access-Control-Allow-Headers': 'Content-Type' }),
    );
    app.on(kind === 'get' ? 'GET' : 'POST', path, (c) => handleAdCall(kind, c.req.raw));
  }
  return app;
}

/** Starts the demo on loopback; resolves with the page URL. Port 0 picks a free one. */
export function startDemo(port = Number(process.env.PORT ?? 8080), { quiet = false } = {}) {
  print = quiet ? () => {} : console.log;
  const app = createDemoApp().fetch;
  const honoListener = getRequestListener(app);
  // The provider-module demo routes (issue #5) answer plain node:http requests first; hono gets the rest.
  const server = createServer(async (req, res) => {
    try {
      if (await handleModuleRoute(req, res)) return;
    } catch (e) {
      console.error('module route failed:', e);
      if (!res.headersSent) res.writeHead(500).end();
      return;
    }
    honoListener(req, res);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, HOST, () => resolve({ url: `http://${HOST}:${server.address().port}/`, server }));
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  startDemo()
    .catch((e) => {
      if (e?.code !== 'EADDRINUSE') throw e;
      console.log(`port ${process.env.PORT ?? 8080} is busy; using a free one`);
      return startDemo(0);
    })
    .then(({ url }) => console.log(`eidkit demo: open ${url}  (debug logs: ${url}?sas_debug=1)`));
}
