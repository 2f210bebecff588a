/**
 * A local server for end-to-end tests that records every request the page makes (house style: "e2e tests load
 * real pages from a local server and read back every beacon sent"). Shared by the e2e suites of several issues:
 * keep this API stable.
 *
 * ```ts
 * import { startTestServer, publisherPage } from './support/server';
 *
 * const server = await startTestServer({ pages: { '/': publisherPage({ commands: 'sas.call("std", {})' }) } });
 * await page.goto(server.url + '/');
 * const [call] = await server.waitForAdCalls(1);   // call.query.eids, call.eids (decoded), call.cookies.pid …
 * await server.close();
 * ```
 *
 * What it serves, on 127.0.0.1 (port 0 = a free port; `server.altUrl` is the same server as `localhost`, a
 * second origin for cross-origin tests; both are secure contexts, so `crypto.subtle` exists):
 * - `GET /tag/<network_id>/<file>`: the tag, from `tagScript(networkId, file)`; by default the built
 *   `dist/sas.js` (or `dist/sas.debug.js` for `sas.debug.js`). Run `npm run build` first.
 * - `GET /dist/<path>`: any built file.
 * - the ad-call endpoints `/ac` (GET: std and video), `/genericpost` and `/call` (POST), with CORS for the
 *   calling origin and credentials; the first answer sets a `pid` cookie, as the real service does.
 * - `pages` and `routes` given in the options, or added later with `server.page()` / `server.route()`.
 * - with `upstream` (another local server's origin), everything else is proxied there, so the recording sees what
 *   a page of that server (the demo, a module stand-in) sends; without it, anything else is a 404.
 * Every request (including preflights and 404s) is recorded in `server.requests`. Every HTML page it serves or
 * proxies starts with {@link PROBE}, which records console output (read the same way in every engine) and uncaught
 * errors (for WebKit, whose driver cannot observe them), see support/engines/page.ts.
 */
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { test } from '@playwright/test';

/** One request as the server saw it. */
export interface RecordedRequest {
  method: string;
  /** Path without the query string. */
  path: string;
  /** Query parameters (last value wins). */
  query: Record<string, string>;
  /** The raw query string, without `?`. */
  search: string;
  /** Request headers, names in lower case. */
  headers: Record<string, string>;
  /** Cookies sent with the request. */
  cookies: Record<string, string>;
  /** Raw body text ('' for none). */
  body: string;
  /** The body parsed as JSON when it is JSON (whatever the content type), else undefined. */
  json?: unknown;
  /** For ad calls: 'std/video' (GET /ac), 'generic' (POST /genericpost) or 'onecall' (POST /call). */
  kind?: 'std/video' | 'generic' | 'onecall';
  /** For ad calls: the eids carried (decoded from the `eids` parameter, or the body's `eids`), if any. */
  eids?: unknown;
  /** When it arrived (ms since epoch). */
  time: number;
  /** For a request proxied to `upstream`: the upstream's status and headers (names in lower case). */
  response?: { status: number; headers: Record<string, string> };
}

/** What a route answers: a string (HTML when it starts with `<`, else text), or status, headers and body. */
export type RouteResponse =
  string | { status?: number; type?: string; headers?: Record<string, string>; body?: unknown };

/** A route: a fixed answer or a function of the recorded request. */
export type Route = RouteResponse | ((req: RecordedRequest) => RouteResponse | Promise<RouteResponse>);

/** Options of {@link startTestServer}. */
export interface TestServerOptions {
  /** Extra routes, keyed `'/path'` (any method) or `'POST /path'`. They take precedence over the built-in ones. */
  routes?: Record<string, Route>;
  /** HTML pages by path. */
  pages?: Record<string, string>;
  /** The tag script for `/tag/<networkId>/<file>`; default: the built dist file of that name. */
  tagScript?: (networkId: string, file: string) => string | Promise<string>;
  /** The answer to ad calls; default `{ ok: true, kind }` as JSON. */
  adResponse?: (req: RecordedRequest) => RouteResponse | Promise<RouteResponse>;
  /** An origin (`http://127.0.0.1:8080`) every request no route or page answers is proxied to, recorded. */
  upstream?: string;
}

/** A running test server. */
export interface TestServer {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  /** `http://localhost:<port>`: the same server as a second origin. */
  altUrl: string;
  port: number;
  /** Every request so far, in arrival order. */
  requests: RecordedRequest[];
  /** The ad calls so far (preflights excluded). */
  adCalls(): RecordedRequest[];
  /** Resolves with the first recorded request (past or future) matching `predicate`; rejects after `timeoutMs`. */
  waitFor(predicate: (r: RecordedRequest) => boolean, timeoutMs?: number): Promise<RecordedRequest>;
  /** Resolves once at least `n` ad calls have arrived, with the first `n`; rejects after `timeoutMs`. */
  waitForAdCalls(n: number, timeoutMs?: number): Promise<RecordedRequest[]>;
  /** Adds or replaces a page. */
  page(path: string, html: string): void;
  /** Adds or replaces a route (`'/path'` or `'METHOD /path'`). */
  route(key: string, route: Route): void;
  /** Forgets the recorded requests. */
  clear(): void;
  close(): Promise<void>;
}

const DIST = new URL('../../../dist/', import.meta.url);
const AD_PATHS: Record<string, RecordedRequest['kind']> = {
  '/ac': 'std/video',
  '/genericpost': 'generic',
  '/call': 'onecall',
};

function parseCookies(header: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (header ?? '').split(';')) {
    const i = part.indexOf('=');
    if (i > 0) out[part.slice(0, i).trim()] = decodeURIComponent(part.slice(i + 1).trim());
  }
  return out;
}

function tryJson(text: string): unknown {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}

/** Decodes a Base64 (standard or URL-safe, padded or not) JSON parameter; undefined when it is not one. */
export function decodeEidsParam(value: string | undefined): unknown {
  // Node's base64 decoder accepts both alphabets, with or without padding.
  return value === undefined ? undefined : tryJson(Buffer.from(value, 'base64').toString('utf8'));
}

/**
 * The first script of every HTML page served: keeps `console.*` lines and uncaught errors / rejections of the
 * document in `window.__e2e`, so every engine's driver reads console output the same way (and WebKit's, without
 * error events over classic WebDriver, its errors too).
 */
export const PROBE = `<script>(function () {
  var log = window.__e2e = { console: [], errors: [] };
  function text(a) {
    if (typeof a === 'string' || a instanceof Error) return String(a);
    try { return JSON.stringify(a) || String(a); } catch (e) { return String(a); }
  }
  ['log', 'info', 'warn', 'error', 'debug'].forEach(function (k) {
    var f = console[k];
    console[k] = function () {
      try { log.console.push([].map.call(arguments, text).join(' ')); } catch (e) {}
      return f.apply(this, arguments);
    };
  });
  addEventListener('error', function (e) { log.errors.push(String(e.error || e.message)); });
  addEventListener('unhandledrejection', function (e) { log.errors.push('Uncaught (in promise) ' + String(e.reason)); });
})();</script>`;

/** `html` with {@link PROBE} as the first thing after `<head>` (or the doctype), before any page script. */
export function withProbe(html: string): string {
  const at = /<head\b[^>]*>/i.exec(html) ?? /^\s*<!doctype[^>]*>/i.exec(html);
  const i = at ? at.index + at[0].length : 0;
  return html.slice(0, i) + PROBE + html.slice(i);
}

/** A publisher page with the standard stub, the async tag from `/tag/<networkId>/sas.js`, and `commands` queued. */
export function publisherPage(
  opts: { networkId?: number | string; file?: string; head?: string; commands?: string; body?: string } = {},
): string {
  const { networkId = 1234, file = 'sas.js', head = '', commands = '', body = '' } = opts;
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>test page</title>
<script>window.sas = window.sas || {}; sas.cmd = sas.cmd || [];</script>
${head}
<script async src="/tag/${networkId}/${file}"></script>
${commands ? `<script>sas.cmd.push(function () {\n${commands}\n});</script>` : ''}
</head><body>${body}</body></html>`;
}

/** Starts the server on 127.0.0.1 and a free port. */
export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const routes = new Map<string, Route>(Object.entries(options.routes ?? {}));
  const pages = new Map<string, string>(Object.entries(options.pages ?? {}));
  const requests: RecordedRequest[] = [];
  const waiters = new Set<() => void>();
  let pidCounter = 0;

  const tagScript = options.tagScript ?? ((_nw: string, file: string) => readFile(new URL(file, DIST), 'utf8'));

  async function answer(
    req: RecordedRequest,
    res: ServerResponse,
    r: RouteResponse,
    extraHeaders: Record<string, string>,
  ) {
    const spec =
      typeof r === 'string'
        ? { body: r, type: r.trimStart().startsWith('<') ? 'text/html; charset=utf-8' : 'text/plain; charset=utf-8' }
        : r;
    const text =
      spec.body === undefined
        ? ''
        : typeof spec.body === 'string' || Buffer.isBuffer(spec.body)
          ? spec.body
          : JSON.stringify(spec.body);
    const type =
      spec.type ??
      (typeof spec.body === 'string' || spec.body === undefined ? 'text/plain; charset=utf-8' : 'application/json');
    const body = type.startsWith('text/html') && typeof text === 'string' ? withProbe(text) : text;
    res.writeHead(spec.status ?? 200, {
      'Content-Type': type,
      'Cache-Control': 'no-store',
      ...extraHeaders,
      ...spec.headers,
    });
    res.end(req.method === 'HEAD' ? undefined : body);
  }

  /** Forwards the request to `options.upstream` as it came (Host included); HTML answers get the probe. */
  function proxy(req: RecordedRequest, incoming: IncomingMessage, raw: Buffer, res: ServerResponse) {
    const target = new URL(incoming.url ?? '/', options.upstream);
    return new Promise<void>((resolve, reject) => {
      const out = httpRequest(target, { method: req.method, headers: incoming.headers }, (up) => {
        const headers = Object.fromEntries(
          Object.entries(up.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : String(v)]),
        );
        req.response = { status: up.statusCode ?? 0, headers };
        const html = String(headers['content-type']).startsWith('text/html') && !headers['content-encoding'];
        if (!html) {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res).on('finish', resolve).on('error', reject);
          return;
        }
        const chunks: Buffer[] = [];
        up.on('data', (c: Buffer) => chunks.push(c));
        up.on('error', reject);
        up.on('end', () => {
          const { 'content-length': _, ...rest } = up.headers;
          res.writeHead(up.statusCode ?? 502, rest);
          res.end(withProbe(Buffer.concat(chunks).toString('utf8')));
          resolve();
        });
      });
      out.on('error', reject);
      out.end(raw);
    });
  }

  async function handle(incoming: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const c of incoming) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks);
    const body = raw.toString('utf8');
    const u = new URL(incoming.url ?? '/', 'http://127.0.0.1');
    const headers = Object.fromEntries(
      Object.entries(incoming.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : String(v)]),
    );
    const req: RecordedRequest = {
      method: incoming.method ?? 'GET',
      path: u.pathname,
      query: Object.fromEntries(u.searchParams),
      search: u.search.slice(1),
      headers,
      cookies: parseCookies(headers.cookie),
      body,
      json: tryJson(body),
      time: Date.now(),
    };
    const kind = AD_PATHS[req.path];
    if (kind && req.method !== 'OPTIONS') {
      req.kind = kind;
      req.eids =
        kind === 'std/video' ? decodeEidsParam(req.query.eids) : (req.json as { eids?: unknown } | undefined)?.eids;
    }
    requests.push(req);
    waiters.forEach((w) => w());

    // CORS with credentials for the calling origin (the tag sends cookies with every ad call).
    const cors: Record<string, string> = headers.origin
      ? { 'Access-Control-Allow-Origin': headers.origin, 'Access-Control-Allow-Credentials': 'true', Vary: 'Origin' }
      : {};
    if (req.method === 'OPTIONS' && !options.upstream) {
      res.writeHead(204, {
        ...cors,
        'Access-Control-Allow-Methods': 'GET, POST, OPTIONS',
        'Access-Control-Allow-Headers': headers['access-control-request-headers'] ?? 'Content-Type',
        'Access-Control-Max-Age': '600',
      });
      return res.end();
    }
    const route = routes.get(`${req.method} ${req.path}`) ?? routes.get(req.path);
    if (route !== undefined) return answer(req, res, typeof route === 'function' ? await route(req) : route, cors);
    if (pages.has(req.path))
      return answer(req, res, { body: pages.get(req.path), type: 'text/html; charset=utf-8' }, cors);
    if (options.upstream) return proxy(req, incoming, raw, res);
    const tag = /^\/tag\/([^/]+)\/([\w.-]+\.js)$/.exec(req.path);
    if (tag)
      return answer(req, res, { body: await tagScript(tag[1], tag[2]), type: 'text/javascript; charset=utf-8' }, cors);
    if (req.path.startsWith('/dist/') && !req.path.includes('..')) {
      try {
        const file = await readFile(new URL(req.path.slice('/dist/'.length), DIST), 'utf8');
        return await answer(
          req,
          res,
          { body: file, type: req.path.endsWith('.js') ? 'text/javascript; charset=utf-8' : 'text/plain' },
          cors,
        );
      } catch {
        // Falls through to the 404.
      }
    }
    if (kind) {
      // The service keeps its own user id in a `pid` cookie.
      const setCookie: Record<string, string> = req.cookies.pid
        ? {}
        : { 'Set-Cookie': `pid=test-pid-${++pidCounter}; Path=/; SameSite=Lax` };
      const r = options.adResponse ? await options.adResponse(req) : { body: { ok: true, kind } };
      return answer(req, res, r, { ...cors, ...setCookie });
    }
    return answer(req, res, { status: 404, body: 'not found' }, cors);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'text/plain' });
      res.end(String(e));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;

  function waitFor(predicate: (r: RecordedRequest) => boolean, timeoutMs = 5000): Promise<RecordedRequest> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const hit = requests.find(predicate);
        if (!hit) return;
        waiters.delete(check);
        clearTimeout(timer);
        resolve(hit);
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(
          new Error(
            `no matching request within ${timeoutMs} ms; got: ${requests.map((r) => `${r.method} ${r.path}`).join(', ') || 'none'}`,
          ),
        );
      }, timeoutMs);
      waiters.add(check);
      check();
    });
  }

  const adCalls = () => requests.filter((r) => r.kind);
  return {
    url: `http://127.0.0.1:${port}`,
    altUrl: `http://localhost:${port}`,
    port,
    requests,
    adCalls,
    waitFor,
    async waitForAdCalls(n, timeoutMs = 5000) {
      await waitFor(() => adCalls().length >= n, timeoutMs);
      return adCalls().slice(0, n);
    },
    page: (path, html) => void pages.set(path, html),
    route: (key, route) => void routes.set(key, route),
    clear: () => void requests.splice(0),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Starts one test server for the calling spec file (before all its tests), clears its recorded requests before each
 * test and stops it after; returns a getter for it.
 * @example const server = useTestServer(); test('…', async ({ page }) => { await page.goto(server().url); });
 */
export function useTestServer(options: TestServerOptions = {}): () => TestServer {
  let server: TestServer;
  test.beforeAll(async () => {
    server = await startTestServer(options);
  });
  test.afterAll(async () => {
    await server.close();
  });
  test.beforeEach(() => server.clear());
  return () => server;
}
