/**
 * The CORS answer of ad-call endpoints (docs/ad-server.md, "CORS: which pages may read the answers"). The tag
 * sends the ad server's cookies with every call, so an answer readable by a page is readable with the visitor's
 * `pid`: only the page origins on an allow-list may read it. Reflecting any `Origin` with credentials would let
 * every site on the web read the visitor's ad-server id and answers.
 */
import { ConfigurationError } from '../../core/config-error.js';
import type { IncomingMessage, ServerResponse } from 'node:http';

/** Options of {@link createCorsPolicy}. */
export interface CorsPolicyOptions {
  /**
   * The page origins allowed to read answers: exact origins (`https://www.example.com`, `http://localhost:8080`)
   * and wildcard patterns for subdomains (`https://*.example.org` allows `https://a.example.org` and
   * `https://a.b.example.org`, not `https://example.org`). The scheme is required; a default port may be given or
   * left out; no path. `null` and `*` are refused: neither can be allowed with credentials.
   */
  origins: readonly string[];
  /** Methods a preflight may ask for (default `GET`, `POST`: what the tag and the Prebid adapter send). */
  methods?: readonly string[];
  /** Request headers a preflight may ask for (default `Content-Type`). */
  allowHeaders?: readonly string[];
  /** Response headers an allowed page may read besides the CORS-safelisted ones (default none). */
  exposeHeaders?: readonly string[];
  /** How long a browser may keep a preflight answer, in seconds (default 600; at most 86,400). */
  maxAgeSeconds?: number;
  /** Answer allowed origins with `Access-Control-Allow-Credentials: true` (default true: the tag sends cookies). */
  credentials?: boolean;
}

/** A {@link CorsPolicyOptions} that cannot be used; `field` names the option (`origins[2]`, `maxAgeSeconds`). */
export class CorsPolicyError extends ConfigurationError {
  override name = 'CorsPolicyError';
  constructor(
    /** The option at fault, e.g. `origins[2]`. */
    readonly field: string,
    message: string,
  ) {
    super(`${field}: ${message}`, [{ path: field, message }]);
  }
}

/** The answer to a preflight request: its status and headers. */
export interface CorsPreflightAnswer {
  /** 204 when the origin, method and headers are allowed, else 403. */
  status: 204 | 403;
  /** The headers to send (`Vary` always; the `Access-Control-Allow-*` ones only when allowed). */
  headers: Record<string, string>;
}

/** What a preflight asks: the `Origin`, `Access-Control-Request-Method` and `Access-Control-Request-Headers` values. */
export interface CorsPreflightRequest {
  /** The `Origin` header, if any. */
  origin: string | null | undefined;
  /** The `Access-Control-Request-Method` header. */
  method: string | null | undefined;
  /** The `Access-Control-Request-Headers` header (comma-separated), if any. */
  headers?: string | null;
}

/** A CORS policy for ad-call endpoints, from {@link createCorsPolicy}. */
export interface CorsPolicy {
  /** True when `origin` (an `Origin` header value) is on the allow-list; never for `null` or a malformed value. */
  isAllowed(origin: string | null | undefined): boolean;
  /** The CORS headers of an answer to a request with this `Origin`: `Vary: Origin` always, the rest when allowed. */
  headersFor(origin: string | null | undefined): Record<string, string>;
  /** The answer to a preflight (`OPTIONS` with `Access-Control-Request-Method`). */
  preflight(request: CorsPreflightRequest): CorsPreflightAnswer;
  /** The answer to a fetch `Request` when it is a preflight, else null (answer it, adding {@link headersFor}). */
  preflightResponse(request: Request): Response | null;
}

/** The methods the tag (GET, POST) and the Prebid adapter (POST) use. */
const DEFAULT_METHODS = ['GET', 'POST'];
/** A page posting JSON as `application/json` asks for `Content-Type`; the tag's `text/plain` needs no preflight. */
const DEFAULT_ALLOW_HEADERS = ['Content-Type'];
const DEFAULT_MAX_AGE = 600;
/** Chromium caps preflight caching at 2 hours, Firefox at 24: more would only be a promise no browser keeps. */
const MAX_MAX_AGE = 86_400;
/** Longest `Origin` looked at: a real one is a scheme, a DNS name (≤ 253) and a port. Longer: not allowed, unread. */
const MAX_ORIGIN_LENGTH = 300;
/** Longest `Access-Control-Request-Headers` looked at; browsers list a few names. */
const MAX_REQUEST_HEADERS_LENGTH = 1_000;

/** `scheme://host[:port]` as browsers serialise an origin: lower-case, IDNs in punycode, no default port. */
const ORIGIN_SYNTAX = /^(https?):\/\/([a-z0-9-]+(?:\.[a-z0-9-]+)*|\[[0-9a-f:.]+\])(?::(\d{1,5}))?$/;
const TOKEN = /^[!#$%&'*+.^_`|~0-9a-z-]+$/i;
const DEFAULT_PORT: Record<string, string> = { http: '80', https: '443' };

/** An allow-list entry, normalised: exact `origin`, or `scheme`, `suffix` (`.example.org`) and `port` of a pattern. */
type Entry = { exact: string } | { scheme: string; suffix: string; port: string };

/** The normalised origin `new URL` gives for an entry, or a CorsPolicyError naming `field`. */
function normalise(value: string, field: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new CorsPolicyError(field, `${JSON.stringify(value)} is not an origin (scheme://host[:port])`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new CorsPolicyError(field, `${JSON.stringify(value)}: the scheme must be http or https`);
  }
  const bare = value.replace(/\/$/, '');
  if (url.username || url.password || url.search || url.hash || url.pathname !== '/' || bare.endsWith('/')) {
    const what = `${JSON.stringify(value)} is not an origin`;
    throw new CorsPolicyError(field, `${what}: no path, query, fragment or credentials`);
  }
  return url;
}

/** One allow-list entry read, or a CorsPolicyError naming `origins[i]`. */
function parseEntry(value: unknown, field: string): Entry {
  if (typeof value !== 'string' || value.trim() === '') throw new CorsPolicyError(field, 'must be a non-empty string');
  if (value === 'null' || value === '*') {
    throw new CorsPolicyError(field, `${value} can never be allowed with credentials`);
  }
  const star = /^(https?):\/\/\*\.(.+)$/i.exec(value);
  if (!star) {
    if (value.includes('*')) {
      throw new CorsPolicyError(field, `${JSON.stringify(value)}: a wildcard is only allowed as the first label`);
    }
    return { exact: normalise(value, field).origin };
  }
  // The pattern's host is parsed with a placeholder first label, so IDNs, case and default ports normalise as the
  // browser's Origin will.
  const url = normalise(`${star[1]}://wildcard-label.${star[2]}`, field);
  const host = url.hostname;
  if (host.startsWith('[') || /^[\d.]+$/.test(host)) {
    throw new CorsPolicyError(field, 'a wildcard needs a domain name, not an IP address');
  }
  const suffix = host.slice('wildcard-label'.length);
  if (suffix.split('.').length < 3) {
    const why = 'a wildcard must be under a domain of two labels or more (https://*.example.com)';
    throw new CorsPolicyError(field, `${JSON.stringify(value)}: ${why}`);
  }
  return { scheme: url.protocol.slice(0, -1), suffix, port: url.port };
}

/** A list option: tokens (method or header names), or a CorsPolicyError naming it. */
function tokenList(value: readonly string[] | undefined, fallback: readonly string[], field: string): string[] {
  if (value === undefined) return [...fallback];
  if (!Array.isArray(value)) throw new CorsPolicyError(field, 'must be an array of names');
  value.forEach((v, i) => {
    if (typeof v !== 'string' || !TOKEN.test(v)) {
      throw new CorsPolicyError(`${field}[${i}]`, `${JSON.stringify(v)} is not a header or method name`);
    }
  });
  return [...(value as readonly string[])];
}

/**
 * A CORS policy for ad-call endpoints: an allow-list of page origins (exact, or `https://*.example.com` for
 * subdomains), credentials only for allowed origins, `Vary: Origin` on every answer, preflights answered, `null`
 * never allowed. Checks the options now and throws a {@link CorsPolicyError} naming the field.
 * @example
 * const cors = createCorsPolicy({ origins: ['https://www.example.com', 'https://*.example.org'] });
 * const preflight = cors.preflightResponse(request);
 * if (preflight) return preflight;
 * return Response.json(answer, { headers: cors.headersFor(request.headers.get('origin')) });
 */
export function createCorsPolicy(options: CorsPolicyOptions): CorsPolicy {
  if (!options || typeof options !== 'object') throw new CorsPolicyError('options', 'must be an object with origins');
  if (!Array.isArray(options.origins)) throw new CorsPolicyError('origins', 'must be an array of page origins');
  const entries = options.origins.map((o, i) => parseEntry(o, `origins[${i}]`));
  const exact = new Set(entries.flatMap((e) => ('exact' in e ? [e.exact] : [])));
  const patterns = entries.filter((e): e is Extract<Entry, { suffix: string }> => 'suffix' in e);
  const methods = tokenList(options.methods, DEFAULT_METHODS, 'methods').map((m) => m.toUpperCase());
  const allowHeaders = tokenList(options.allowHeaders, DEFAULT_ALLOW_HEADERS, 'allowHeaders');
  const exposeHeaders = tokenList(options.exposeHeaders, [], 'exposeHeaders');
  const maxAge = options.maxAgeSeconds ?? DEFAULT_MAX_AGE;
  if (!Number.isInteger(maxAge) || maxAge < 0 || maxAge > MAX_MAX_AGE) {
    throw new CorsPolicyError('maxAgeSeconds', `must be an integer from 0 to ${MAX_MAX_AGE}`);
  }
  if (options.credentials !== undefined && typeof options.credentials !== 'boolean') {
    throw new CorsPolicyError('credentials', 'must be true or false');
  }
  const credentials = options.credentials ?? true;
  const allowedHeaderNames = new Set(allowHeaders.map((h) => h.toLowerCase()));

  function isAllowed(origin: string | null | undefined): boolean {
    if (typeof origin !== 'string' || origin.length > MAX_ORIGIN_LENGTH) return false;
    const m = ORIGIN_SYNTAX.exec(origin); // browsers send origins in lower case: anything else is not one
    if (!m) return false;
    const [, scheme, host, rawPort] = m as unknown as [string, string, string, string | undefined];
    const port = rawPort === undefined || rawPort === DEFAULT_PORT[scheme] ? '' : rawPort;
    if (exact.has(`${scheme}://${host}${port ? `:${port}` : ''}`)) return true;
    // A pattern matches subdomains only: the host ends with ".example.org" and has a label before it, so neither
    // "evil-example.org" nor "example.org.evil.net" nor "example.org" itself matches.
    return patterns.some(
      (p) => p.scheme === scheme && p.port === port && host.length > p.suffix.length && host.endsWith(p.suffix),
    );
  }

  function headersFor(origin: string | null | undefined): Record<string, string> {
    const headers: Record<string, string> = { Vary: 'Origin' };
    if (!isAllowed(origin)) return headers;
    headers['Access-Control-Allow-Origin'] = origin!;
    if (credentials) headers['Access-Control-Allow-Credentials'] = 'true';
    if (exposeHeaders.length) headers['Access-Control-Expose-Headers'] = exposeHeaders.join(', ');
    return headers;
  }

  function preflight(request: CorsPreflightRequest): CorsPreflightAnswer {
    const vary = { Vary: 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers' };
    const method = (request.method ?? '').toUpperCase();
    const asked = request.headers ?? '';
    const namesOk =
      asked.length <= MAX_REQUEST_HEADERS_LENGTH &&
      asked.split(',').every((h) => h.trim() === '' || allowedHeaderNames.has(h.trim().toLowerCase()));
    if (!isAllowed(request.origin) || !methods.includes(method) || !namesOk) return { status: 403, headers: vary };
    const headers: Record<string, string> = {
      ...headersFor(request.origin),
      ...vary,
      'Access-Control-Allow-Methods': methods.join(', '),
      'Access-Control-Max-Age': String(maxAge),
    };
    if (allowHeaders.length) headers['Access-Control-Allow-Headers'] = allowHeaders.join(', ');
    return { status: 204, headers };
  }

  function preflightResponse(request: Request): Response | null {
    const method = request.headers.get('access-control-request-method');
    if (request.method !== 'OPTIONS' || method === null) return null;
    const asked = request.headers.get('access-control-request-headers');
    const answer = preflight({ origin: request.headers.get('origin'), method, headers: asked });
    return new Response(null, answer);
  }

  return { isAllowed, headersFor, preflight, preflightResponse };
}

/**
 * The policy for `node:http`: answers a preflight itself (returns true: the request is done), else sets the CORS
 * headers on `res` and returns false for the handler to answer.
 * @example
 * createServer((req, res) => { if (corsForNode(cors, req, res)) return; res.end(JSON.stringify(answer)); });
 */
export function corsForNode(policy: CorsPolicy, req: IncomingMessage, res: ServerResponse): boolean {
  const header = (name: string) => {
    const v = req.headers[name];
    return Array.isArray(v) ? v.join(',') : v;
  };
  const method = header('access-control-request-method');
  if (req.method === 'OPTIONS' && method !== undefined) {
    const asked = header('access-control-request-headers');
    const answer = policy.preflight({ origin: header('origin'), method, headers: asked });
    res.writeHead(answer.status, answer.headers).end();
    return true;
  }
  for (const [name, value] of Object.entries(policy.headersFor(header('origin')))) {
    res.setHeader(name, name === 'Vary' ? withVary(res.getHeader('vary'), value) : value);
  }
  return false;
}

/** A `Vary` value with `add` joined to what the answer already varies on. */
function withVary(existing: unknown, add: string): string {
  const list = String((existing ?? '') as string)
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean);
  const has = list.some((v) => v.toLowerCase() === add.toLowerCase() || v === '*');
  return (has ? list : [...list, add]).join(', ');
}

/** The part of a hono `Context` {@link corsMiddleware} uses (so this module needs no hono import). */
export interface CorsContext {
  req: { raw: Request };
  res: Response;
}

/**
 * The policy as hono middleware: answers preflights, and adds the CORS headers to every other answer.
 * @example app.use('/ac', corsMiddleware(cors)); app.use('/genericpost', corsMiddleware(cors));
 */
export function corsMiddleware(
  policy: CorsPolicy,
): (c: CorsContext, next: () => Promise<void>) => Promise<Response | undefined> {
  return async (c, next) => {
    const preflight = policy.preflightResponse(c.req.raw);
    if (preflight) return preflight;
    await next();
    const headers = policy.headersFor(c.req.raw.headers.get('origin'));
    const apply = (res: Response) => {
      for (const [name, value] of Object.entries(headers)) {
        res.headers.set(name, name === 'Vary' ? withVary(res.headers.get('vary'), value) : value);
      }
    };
    // A Response from fetch() has immutable headers: answer with a copy then.
    try {
      apply(c.res);
    } catch {
      c.res = new Response(c.res.body, c.res);
      apply(c.res);
    }
  };
}
