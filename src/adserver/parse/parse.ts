/**
 * Parsing ad calls (docs/wire-format.md): GET `/ac` with the Base64 `eids` parameter, POST `/genericpost` and
 * `/call` with an `eids` array in the JSON body, POST `/prebid/v1` from the Prebid.js adapter, and OpenRTB-shaped
 * bodies on any POST endpoint (ortb.ts). This file holds the entry points: the endpoint, the URL and the
 * headers (cookie `pid`, user agent, referer) of a request, and the adapters that read a body from a WHATWG
 * `Request` or a Node `IncomingMessage`; the fields are read in readers.ts into an AdCall (ad-call.ts).
 * Parsing never throws and never refuses a call: whatever is broken is dropped and named in `issues`.
 */
import type { IncomingMessage } from 'node:http';
import { resolveLimits } from './limits.js';
import { ownString } from '../common/index.js';
import { Collector } from './ad-call.js';
import type { AdCall, AdCallEndpoint, AdCallInput, HeadersLike, ParseOptions } from './ad-call.js';
import { readBody, readQuery } from './readers.js';
import { pageUrlRules, scrubWith, type PageUrlRules } from './page-url.js';
import { clientAddress, normaliseIp, trustedProxyList } from './client-ip.js';

const ENDPOINTS: Record<string, AdCallEndpoint> = { ac: 'ac', genericpost: 'genericpost', call: 'call' };
const PREBID_PATH = /\/prebid\/v1\/?$/i;
const OPENRTB_PATH = /\/openrtb2\/auction\/?$/i;
const COOKIE_VALUE = /^[\x21\x23-\x2b\x2d-\x3a\x3c-\x5b\x5d-\x7e]+$/;

/**
 * The endpoint named by a URL path's last segment (`/ac`, `/x/genericpost`, `/call/`), `prebid` for `…/prebid/v1`,
 * `openrtb` for `…/openrtb2/auction`.
 */
export function endpointOf(pathname: string): AdCallEndpoint {
  if (PREBID_PATH.test(pathname)) return 'prebid';
  if (OPENRTB_PATH.test(pathname)) return 'openrtb';
  const end = pathname.endsWith('/') ? pathname.length - 1 : pathname.length;
  const last = pathname.slice(pathname.lastIndexOf('/', end - 1) + 1, end).toLowerCase();
  return Object.hasOwn(ENDPOINTS, last) ? ENDPOINTS[last] : 'unknown';
}

function header(headers: HeadersLike | undefined, name: string): string | undefined {
  if (!headers) return undefined;
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const v = (headers as Record<string, string | string[] | undefined>)[name];
  return Array.isArray(v) ? v.join(name === 'cookie' ? '; ' : ', ') : v;
}

/**
 * Reads one cookie's value from a `Cookie` header; the first occurrence wins, as browsers send the most specific first.
 */
export function readCookie(cookieHeader: string | undefined, name: string): string | undefined {
  if (!cookieHeader) return undefined;
  const n = cookieHeader.length;
  let i = 0;
  let eq = -1; // the next `=`, reused while ahead of i: searching from every `;` would be quadratic
  while (i < n) {
    let end = cookieHeader.indexOf(';', i);
    if (end < 0) end = n;
    if (eq < i) eq = cookieHeader.indexOf('=', i);
    if (eq < 0) eq = n;
    if (eq < end && cookieHeader.slice(i, eq).trim() === name) {
      const value = cookieHeader.slice(eq + 1, end).trim();
      return value.length >= 2 && value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value;
    }
    i = end + 1;
  }
  return undefined;
}

const ORIGIN = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i;
const DOT_SEGMENT = /\/\.|\\|%2e/i;

/** Path and query of a URL, without building a URL object on the common shapes (`/path?q`, `https://host/path?q`). */
function splitUrl(url: string | URL): { pathname: string; search: string } | undefined {
  if (url instanceof URL) return { pathname: url.pathname, search: url.search };
  if (typeof url !== 'string') return undefined;
  const origin = url.startsWith('/') && !url.startsWith('//') ? '' : ORIGIN.exec(url)?.[0];
  if (origin === undefined) {
    try {
      const u = new URL(url, 'http://localhost');
      return { pathname: u.pathname, search: u.search };
    } catch {
      return undefined;
    }
  }
  let rest = url.slice(origin.length);
  const hash = rest.indexOf('#');
  if (hash >= 0) rest = rest.slice(0, hash);
  const q = rest.indexOf('?');
  let pathname = (q < 0 ? rest : rest.slice(0, q)) || '/';
  // Dot segments and backslashes resolve as a URL parser would (`/ac/x/..` is `/ac`), so every entry point agrees.
  if (DOT_SEGMENT.test(pathname)) {
    try {
      pathname = new URL(pathname, 'http://localhost').pathname;
    } catch {
      return undefined;
    }
  }
  return { pathname, search: q < 0 ? '' : rest.slice(q) };
}

function finish(
  col: Collector,
  headers: HeadersLike | undefined,
  options: ParseOptions,
  pageUrl: PageUrlRules,
): AdCall {
  const call = col.call;
  const rawPid = readCookie(header(headers, 'cookie'), 'pid');
  if (rawPid !== undefined) {
    // A slice of the Cookie header: copied, since caps and logs keep it (see ownString).
    if (rawPid.length > 0 && rawPid.length <= col.limits.maxUserIdLength && COOKIE_VALUE.test(rawPid))
      call.pid = ownString(rawPid);
    else col.issue('cookie.pid', 'not a valid pid; ignored');
  }
  const ua = header(headers, 'user-agent');
  // An OpenRTB body's `device.ua` (the user's browser, relayed by a server) beats the caller's own header.
  if (ua && call.userAgent === undefined)
    call.userAgent = ua.length > col.limits.maxTextLength ? ownString(ua.slice(0, col.limits.maxTextLength)) : ua;
  const referer = header(headers, 'referer');
  if (referer && referer.length <= col.limits.maxTextLength && call.referer === undefined) call.referer = referer;
  // Whoever sent the call, its page URL keeps no raw email (docs/ad-server.md#page-urls-without-emails).
  if (call.referer !== undefined) call.referer = scrubWith(call.referer, pageUrl);
  // The browser's own Global Privacy Control (`Sec-GPC: 1`, sent on every request when the user turned it on).
  if (call.consent.gpc === undefined && header(headers, 'sec-gpc')?.trim() === '1') call.consent.gpc = true;
  // The device's own address when a server relayed its request (OpenRTB `device.ip`), else the peer's, or the client
  // behind the peer when the peer is a trusted proxy.
  if (call.ip === undefined) {
    const trusted = options.trustedProxies ? trustedProxyList(options.trustedProxies) : undefined;
    const peer = normaliseIp(options.ip);
    const forwarded = header(headers, 'x-forwarded-for');
    const ip = clientAddress(peer, forwarded, trusted, (m) => col.issue('x-forwarded-for', m));
    if (ip !== undefined) call.ip = ip;
  }
  col.closeIssues();
  return call;
}

/**
 * Parses one ad call from its URL, method, headers and body. Never throws.
 * @example parseAdCall({ url: '/ac?nwid=1234&siteid=1&pgid=2&fmtid=3&eids=W3si…', headers: { cookie: 'pid=abc' } })
 */
export function parseAdCall(input: AdCallInput, options: ParseOptions = {}): AdCall {
  const limits = resolveLimits(options.limits);
  const pageUrl = pageUrlRules(options.pageUrl);
  const url = splitUrl(input?.url ?? '');
  const col = new Collector(url ? endpointOf(url.pathname) : 'unknown', limits);
  try {
    if (!url) col.issue('url', 'not a valid URL');
    else if (col.call.endpoint === 'unknown') {
      // The path is the caller's: quote a bounded piece of it, never the whole (up to 8,000 characters).
      const path =
        url.pathname.length > 100 ? `${url.pathname.slice(0, 100)}… (${url.pathname.length} characters)` : url.pathname;
      col.issue('url', `${path} is not an ad-call endpoint (/ac, /genericpost, /call, /prebid/v1, /openrtb2/auction)`);
    }
    const method = (input.method ?? (input.body !== undefined ? 'POST' : 'GET')).toUpperCase();
    if (method === 'POST') readBody(col, input.body);
    else if (url) readQuery(col, url.search);
  } catch {
    col.issue('request', 'could not be read');
  }
  return finish(col, input?.headers, options, pageUrl);
}

/** Result of reading a capped body: the bytes, or the reason they were not kept. */
type BodyRead = { bytes: Uint8Array } | { tooLarge: true } | { failed: true };

/**
 * Buffers a body up to `max` bytes. Past the cap it stops buffering; with `drain` it keeps consuming (and
 * discarding) so a Node socket stays usable for the response, otherwise it stops reading at once.
 */
async function readCapped(chunks: AsyncIterable<Uint8Array | string>, max: number, drain: boolean): Promise<BodyRead> {
  const parts: Uint8Array[] = [];
  let size = 0;
  try {
    for await (const chunk of chunks) {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      size += bytes.byteLength;
      if (size <= max) parts.push(bytes);
      else if (!drain) return { tooLarge: true };
      else parts.length = 0;
    }
  } catch {
    return { failed: true };
  }
  return size > max ? { tooLarge: true } : { bytes: Buffer.concat(parts) };
}

/**
 * A call without a body is parsed at once and handed back as a settled promise: an async function here would add
 * its ticks to every GET ad call.
 */
function parseWithBody(
  url: string | URL,
  method: string,
  headers: HeadersLike | undefined,
  body: AsyncIterable<Uint8Array | string> | null,
  options: ParseOptions,
  drain: boolean,
): Promise<AdCall> {
  if (method.toUpperCase() !== 'POST') return Promise.resolve(parseAdCall({ url, method, headers }, options));
  return parsePost(url, method, headers, body, options, drain);
}

async function parsePost(
  url: string | URL,
  method: string,
  headers: HeadersLike | undefined,
  body: AsyncIterable<Uint8Array | string> | null,
  options: ParseOptions,
  drain: boolean,
): Promise<AdCall> {
  const limits = resolveLimits(options.limits);
  const declared = Number(header(headers, 'content-length'));
  let read: BodyRead;
  // Refuse by the declared length first so an oversized body is never buffered.
  if (Number.isFinite(declared) && declared > limits.maxBodyBytes) {
    read = { tooLarge: true };
    if (body) void readCapped(body, 0, drain);
  } else read = body ? await readCapped(body, limits.maxBodyBytes, drain) : { bytes: new Uint8Array() };
  if ('bytes' in read) return parseAdCall({ url, method, headers, body: read.bytes }, options);
  const call = parseAdCall({ url, method: 'GET', headers }, options);
  // Only the endpoint, cookie and headers are known: the query of a POST is not an ad call's parameters.
  const bare: AdCall = {
    endpoint: call.endpoint,
    formats: [],
    eids: [],
    consent: {},
    issues: call.issues.filter((i) => i.path === 'url' || i.path === 'cookie.pid'),
  };
  for (const k of ['pid', 'userAgent', 'referer', 'ip'] as const) if (call[k] !== undefined) bare[k] = call[k];
  bare.issues.push(
    'tooLarge' in read
      ? { path: 'body', message: `larger than ${limits.maxBodyBytes} bytes; body ignored` }
      : { path: 'body', message: 'could not be read; body ignored' },
  );
  return bare;
}

/**
 * Parses an ad call from a WHATWG `Request` (hono, fetch handlers, undici). Reads at most `maxBodyBytes`.
 * @example app.post('/genericpost', async (c) => { const call = await parseAdCallRequest(c.req.raw); … })
 */
export function parseAdCallRequest(request: Request, options: ParseOptions = {}): Promise<AdCall> {
  try {
    const method = request.method;
    // Only a POST's body is read: on Node, @hono/node-server builds a whole WHATWG Request the first time `body` is
    // touched (its lazy request spares that for a GET), which costs more than the rest of the parse.
    const body = method.toUpperCase() === 'POST' ? (request.body as unknown as AsyncIterable<Uint8Array> | null) : null;
    return parseWithBody(request.url, method, request.headers, body, options, false);
  } catch (e) {
    return Promise.reject(e);
  }
}

/**
 * Parses an ad call from Node's `http.IncomingMessage` (node:http, express, fastify's `request.raw`).
 * Buffers at most `maxBodyBytes`; a larger body is read to its end and discarded so the socket can answer.
 * When a body parser already consumed the stream (express.json(), body-parser), its `req.body` is used.
 * The peer's address is the socket's unless `options.ip` says otherwise; behind your own proxies, list them in
 * `options.trustedProxies` to read the client's from `X-Forwarded-For`.
 * @example
 * http.createServer(async (req, res) => {
 *   const call = await parseIncomingMessage(req, { trustedProxies: ['10.0.0.0/8'] });
 *   …
 * });
 */
export function parseIncomingMessage(req: IncomingMessage, options: ParseOptions = {}): Promise<AdCall> {
  try {
    if (options.ip === undefined && req.socket?.remoteAddress) options = { ...options, ip: req.socket.remoteAddress };
    // The request target as the client sent it (a path, or absolute-form through a proxy): parseAdCall reads every
    // form without building a URL object, and names an unusable one in `issues` instead of throwing.
    const url = req.url ?? '/';
    const parsed = (req as IncomingMessage & { body?: unknown }).body;
    if (req.readableEnded && parsed !== undefined && (req.method ?? 'GET').toUpperCase() === 'POST') {
      const body =
        typeof parsed === 'string' || parsed instanceof Uint8Array || (typeof parsed === 'object' && parsed !== null)
          ? parsed
          : null;
      return Promise.resolve(
        parseAdCall({ url, method: 'POST', headers: req.headers, body: body as AdCallInput['body'] }, options),
      );
    }
    return parseWithBody(url, req.method ?? 'GET', req.headers, req, options, true);
  } catch (e) {
    return Promise.reject(e);
  }
}
