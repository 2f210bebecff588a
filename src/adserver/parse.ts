/**
 * Parsing ad calls (extended-ids.md §4): GET `/ac` with the Base64 `eids` parameter, POST `/genericpost` and
 * `/call` with an `eids` array in the JSON body, POST `/prebid/v1` from the Prebid.js adapter, and OpenRTB-shaped
 * bodies on any POST endpoint (parse-ortb.ts). Parsing never throws and never refuses a call: whatever is
 * broken is dropped and named in `issues`, the rest is kept.
 */
import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import { isObject, isValidAtype, validateEids } from '../core/index.js';
import type { Eid, Issue, Uid } from '../core/index.js';
import { resolveLimits } from './limits.js';
import type { AdCallLimits } from './limits.js';
import { isOrtbBody, readOrtbBody, readPrebidUnits } from './parse-ortb.js';

/** Which ad-call endpoint a request hit: GET `/ac`, POST `/genericpost`, POST `/call`, POST `/prebid/v1`, or none of them. */
export type AdCallEndpoint = 'ac' | 'genericpost' | 'call' | 'prebid' | 'unknown';

/** One requested format (placement) of the call. */
export interface AdCallFormat {
  /** Format id (`fmtid`, `formatId`, `formats[].id`, a Prebid unit's `formatId`, an OpenRTB imp's `ext.formatId`); 0 when an OpenRTB imp names none. */
  id: number;
  /** Publisher tag id of the placement: one-call `tagId`, Prebid ad unit code, OpenRTB `imp.tagid`. */
  tagId?: string;
  /** The caller's id of this placement, which an answer names: Prebid's `bidId`, OpenRTB `imp.id`. */
  impId?: string;
  /** Global placement id (Prebid `gpid`, OpenRTB `imp.ext.gpid`). */
  gpid?: string;
  /** Banner sizes `[w, h]`, when the caller gave them. */
  sizes?: Array<[number, number]>;
  /** Video parameters as sent (`context`, `mimes`, `protocols`, `playerSize` / `w`, `h`, …). */
  video?: Record<string, unknown>;
  /** The floor price the caller set. */
  floor?: { value: number; currency: string };
}

/** Privacy signals carried by the call (domain-notes.md "Consent"), passed on to bid requests untouched. */
export interface AdCallConsent {
  /** 1 when GDPR applies, 0 when it does not. */
  gdpr?: 0 | 1;
  /** TCF consent string. */
  gdprConsent?: string;
  /** Google's Additional Consent string (`addtl_consent`). */
  addtlConsent?: string;
  /** GPP string. */
  gpp?: string;
  /** GPP applicable section ids. */
  gppSid?: number[];
  /** US Privacy string (for example `1YNN`). */
  usPrivacy?: string;
}

/** What one ad call carries, validated. Fields that were absent or invalid are left out (see `issues`). */
export interface AdCall {
  /** The endpoint that was hit. */
  endpoint: AdCallEndpoint;
  /** Network id (`nwid` / `networkId`). */
  networkId?: number;
  /** Site id (`siteid` / `siteId`). */
  siteId?: number;
  /** Page id or page name (`pgid` / `pageId`). */
  pageId?: string;
  /** Requested formats: one for GET and generic calls, one or more for one-call requests. */
  formats: AdCallFormat[];
  /** Keyword targeting string (`tgt` / `target`). */
  target?: string;
  /** The tag's timestamp (`tmstp` / `timestamp`), milliseconds since the epoch. */
  timestamp?: number;
  /** Publisher user id (`uid`); when present it overrides `pid` as the user id (extended-ids.md §2.3). */
  uid?: string;
  /** The service's own user id, from the cookie named `pid`. */
  pid?: string;
  /** The valid eids, invalid ones dropped, same-source ones merged. */
  eids: Eid[];
  /** Privacy signals. */
  consent: AdCallConsent;
  /** The `User-Agent` header, for the bid request's device. */
  userAgent?: string;
  /** The `Referer` header: the page URL the call came from. */
  referer?: string;
  /** The client IP, when the caller passes it in the options (the parser never guesses it from headers). */
  ip?: string;
  /** Everything that was dropped, and why. Empty for a clean call. */
  issues: Issue[];
}

/** Request headers as WHATWG `Headers` or Node's `IncomingHttpHeaders`-style record. */
export type HeadersLike = Headers | Record<string, string | string[] | undefined>;

/** What {@link parseAdCall} reads: the URL, method, headers and (for POST) the body. */
export interface AdCallInput {
  /** Absolute URL, or a path with query string (`/ac?nwid=1&eids=…`). */
  url: string | URL;
  /** HTTP method; `GET` when omitted, or `POST` when a body is given. */
  method?: string;
  /** Request headers (the `cookie`, `user-agent` and `referer` headers are read). */
  headers?: HeadersLike;
  /** POST body: raw text or bytes, or an object a framework already parsed from JSON. */
  body?: string | Uint8Array | Record<string, unknown> | null;
}

/** Options of every parse function. */
export interface ParseOptions {
  /** Size caps; defaults in {@link DEFAULT_LIMITS}. */
  limits?: Partial<AdCallLimits>;
  /** The client IP to record on the call (take it from your proxy setup, not from a spoofable header). */
  ip?: string;
}

const ENDPOINTS: Record<string, AdCallEndpoint> = { ac: 'ac', genericpost: 'genericpost', call: 'call' };
const PREBID_PATH = /\/prebid\/v1\/?$/i;
const MAX_ID = 2 ** 31 - 1;
const COOKIE_VALUE = /^[\x21\x23-\x2b\x2d-\x3a\x3c-\x5b\x5d-\x7e]+$/;
const decoder = new TextDecoder();

/**
 * Node's fast path of core's `decodeBase64Json`, accepting and refusing the same texts with the same issues:
 * Base64, standard or URL-safe, padded or not, of UTF-8 JSON. Buffer decodes natively, several times faster
 * than core's portable `atob` route, which keeps parsing an ad call within 2x a bare decode (README "Measured
 * sizes and ratios"). Buffer skips or stops at characters outside both alphabets instead of failing, and each
 * such character shortens the output, so comparing the decoded length with the length the text implies finds
 * them without a second scan.
 */
export function decodeBase64JsonFast(text: string, path = 'eids'): { value: unknown; issues: Issue[] } {
  let body = text.trim();
  if (body.endsWith('=')) body = body.replace(/={1,2}$/, '');
  const bytes = body.length % 4 === 1 ? undefined : Buffer.from(body, 'base64');
  if (!bytes || bytes.length !== Math.floor((body.length * 3) / 4) || !isUtf8(bytes)) {
    return { value: undefined, issues: [{ path, message: 'not valid Base64' }] };
  }
  try {
    return { value: JSON.parse(bytes.toString('utf8')) as unknown, issues: [] };
  } catch {
    return { value: undefined, issues: [{ path, message: 'Base64 does not hold valid JSON' }] };
  }
}


/** Deepest `ext` nesting the no-copy path keeps; deeper ones go through core (which drops what cannot be serialized). */
const MAX_EXT_DEPTH = 32;

/**
 * True when a value from JSON.parse nests at most `depth` objects and arrays. JSON.parse accepts nesting far
 * deeper than JSON.stringify can write back (a 60 KB body of `{"a":{"a":…}}` overflows the stack), so keeping
 * such an ext unchecked would make the call impossible to log or forward.
 */
function shallowJson(v: unknown, depth: number): boolean {
  if (typeof v !== 'object' || v === null) return true;
  if (depth === 0) return false;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) if (!shallowJson(v[i], depth - 1)) return false;
    return true;
  }
  for (const k in v) if (!shallowJson((v as Record<string, unknown>)[k], depth - 1)) return false;
  return true;
}

/**
 * True when eids fresh from JSON.parse are exactly what core's `validateEids` would return for them (every
 * field valid, within the limits, no same-source eids, no repeated uid id, nothing to drop or trim), so the
 * parser keeps them as they are instead of copying: the common case, and half the cost of a parse. Anything
 * else, however small, answers false and goes through `validateEids`, which names the issues. A property test
 * holds the two to agreement (test/adserver/parse.test.ts). Written for speed: no Sets, no allocations but one
 * array, key names compared directly.
 */
export function isCanonicalEids(input: unknown, limits: Readonly<AdCallLimits>): input is Eid[] {
  if (!Array.isArray(input) || input.length > limits.maxEids) return false;
  const n = input.length;
  const sources: string[] = new Array<string>(n);
  for (let e = 0; e < n; e++) {
    const eid: unknown = input[e];
    if (!isObject(eid)) return false;
    for (const k in eid) {
      if (k !== 'source' && k !== 'uids' && k !== 'inserter' && k !== 'matcher' && k !== 'mm' && k !== 'ext') return false;
    }
    const { source, uids, inserter, matcher, mm, ext } = eid;
    if (typeof source !== 'string' || !source || source.length > limits.maxIdLength || source.trim() !== source) return false;
    const key = source.toLowerCase();
    for (let j = 0; j < e; j++) if (sources[j] === key) return false;
    sources[e] = key;
    if (!Array.isArray(uids) || uids.length === 0 || uids.length > limits.maxUids) return false;
    if (inserter !== undefined && (typeof inserter !== 'string' || !inserter)) return false;
    if (matcher !== undefined && (typeof matcher !== 'string' || !matcher)) return false;
    if (mm !== undefined && !(typeof mm === 'number' && Number.isInteger(mm) && mm >= 0)) return false;
    if (ext !== undefined && (!isObject(ext) || !shallowJson(ext, MAX_EXT_DEPTH))) return false;
    for (let i = 0; i < uids.length; i++) {
      const uid: unknown = uids[i];
      if (!isObject(uid)) return false;
      for (const k in uid) if (k !== 'id' && k !== 'atype' && k !== 'ext') return false;
      const id = uid.id;
      if (typeof id !== 'string' || !id || id.length > limits.maxIdLength) return false;
      if (uid.atype !== undefined && !isValidAtype(uid.atype)) return false;
      if (uid.ext !== undefined && (!isObject(uid.ext) || !shallowJson(uid.ext, MAX_EXT_DEPTH))) return false;
      for (let j = 0; j < i; j++) if ((uids[j] as Uid).id === id) return false;
    }
  }
  return true;
}

/** The endpoint named by a URL path's last segment (`/ac`, `/x/genericpost`, `/call/`), or `prebid` for `…/prebid/v1`. */
export function endpointOf(pathname: string): AdCallEndpoint {
  if (PREBID_PATH.test(pathname)) return 'prebid';
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

/** Reads one cookie's value from a `Cookie` header; the first occurrence wins, as browsers send the most specific first. */
export function readCookie(cookieHeader: string | undefined, name: string): string | undefined {
  if (!cookieHeader) return undefined;
  const n = cookieHeader.length;
  let i = 0;
  while (i < n) {
    let end = cookieHeader.indexOf(';', i);
    if (end < 0) end = n;
    const eq = cookieHeader.indexOf('=', i);
    if (eq >= 0 && eq < end && cookieHeader.slice(i, eq).trim() === name) {
      const value = cookieHeader.slice(eq + 1, end).trim();
      return value.length >= 2 && value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value;
    }
    i = end + 1;
  }
  return undefined;
}

/** A parse in progress: collects fields and issues (shared with parse-ortb.ts). */
export class Collector {
  readonly call: AdCall;
  readonly limits: AdCallLimits;
  constructor(endpoint: AdCallEndpoint, limits: AdCallLimits) {
    this.limits = limits;
    this.call = { endpoint, formats: [], eids: [], consent: {}, issues: [] };
  }
  /** Sets an optional field only when it has a value, so absent fields have no key at all. */
  set<K extends 'networkId' | 'siteId' | 'pageId' | 'target'>(key: K, value: AdCall[K]): void {
    if (value !== undefined) this.call[key] = value;
  }
  issue(path: string, message: string): void {
    this.call.issues.push({ path, message });
  }
  /** A positive integer id (a number, or a string of digits), else an issue. */
  id(path: string, v: unknown): number | undefined {
    if (v === undefined || v === null || v === '') return undefined;
    const n = typeof v === 'number' ? v : typeof v === 'string' && /^\s*\d{1,10}\s*$/.test(v) ? Number(v) : NaN;
    if (Number.isInteger(n) && n > 0 && n <= MAX_ID) return n;
    this.issue(path, 'must be a positive integer id');
    return undefined;
  }
  /** A non-empty string up to `max` characters (numbers are accepted and stringified), else an issue. */
  text(path: string, v: unknown, max = this.limits.maxTextLength): string | undefined {
    if (v === undefined || v === null) return undefined;
    const s = typeof v === 'string' ? v.trim() : typeof v === 'number' && Number.isFinite(v) ? String(v) : undefined;
    if (s === undefined) {
      this.issue(path, 'must be a string');
      return undefined;
    }
    if (!s) return undefined;
    if (s.length > max) {
      this.issue(path, `longer than ${max} characters; dropped`);
      return undefined;
    }
    return s;
  }
  timestamp(path: string, v: unknown): void {
    if (v === undefined || v === null || v === '') return;
    const n = typeof v === 'number' ? v : typeof v === 'string' && /^\s*\d{1,16}\s*$/.test(v) ? Number(v) : NaN;
    if (Number.isSafeInteger(n) && n >= 0) this.call.timestamp = n;
    else this.issue(path, 'must be a millisecond timestamp');
  }
  uid(path: string, v: unknown): void {
    const uid = this.text(path, v, this.limits.maxUserIdLength);
    if (uid !== undefined) this.call.uid = uid;
  }
  /** Validates eids; `fresh` when this parser made them with JSON.parse, so they may be kept as they are. */
  eids(input: unknown, fresh: boolean): void {
    if (fresh && isCanonicalEids(input, this.limits)) {
      this.call.eids = input;
      return;
    }
    const { value, issues } = validateEids(input, this.limits);
    this.call.eids = value;
    this.call.issues.push(...issues);
  }
  /** The `eids` GET parameter: Base64 (standard or URL-safe, padded or not) of a JSON array. */
  eidsParam(param: string): void {
    if (param.length > this.limits.maxEidsParamLength) {
      this.issue('eids', `parameter longer than ${this.limits.maxEidsParamLength} characters; all eids dropped`);
      return;
    }
    const { value, issues } = decodeBase64JsonFast(param);
    if (issues.length) {
      this.call.issues.push(...issues.map((i) => ({ path: i.path, message: `${i.message}; all eids dropped` })));
      return;
    }
    this.eids(value, true);
  }
  /** Reads the privacy signals; `names` are the paths issues name them by, in argument order. */
  consent(gdpr: unknown, gdprConsent: unknown, gpp: unknown, gppSid: unknown, usPrivacy: unknown, names: string[]): void {
    const c = this.call.consent;
    if (gdpr !== undefined && gdpr !== null && gdpr !== '') {
      if (gdpr === 0 || gdpr === 1 || gdpr === '0' || gdpr === '1' || typeof gdpr === 'boolean') c.gdpr = Number(gdpr) as 0 | 1;
      else this.issue(names[0], 'must be 0 or 1');
    }
    const tcf = this.text(names[1], gdprConsent);
    if (tcf !== undefined) c.gdprConsent = tcf;
    const gppString = this.text(names[2], gpp);
    if (gppString !== undefined) c.gpp = gppString;
    if (gppSid !== undefined && gppSid !== null && gppSid !== '') {
      const list = Array.isArray(gppSid) ? gppSid : String(gppSid).split(',');
      const sids = list.map((s) => (typeof s === 'number' ? s : /^\s*\d{1,5}\s*$/.test(String(s)) ? Number(s) : NaN));
      if (sids.length <= 64 && sids.every((n) => Number.isInteger(n) && n >= 0)) c.gppSid = sids;
      else this.issue(names[3], 'must be a list of section ids');
    }
    const usp = this.text(names[4], usPrivacy, 16);
    if (usp !== undefined) c.usPrivacy = usp;
  }
}

/** The GET parameters an ad call reads (extended-ids.md §4, domain-notes.md "Consent"). */
const QUERY_KEYS = new Set(['nwid', 'siteid', 'pgid', 'fmtid', 'tgt', 'tmstp', 'uid', 'eids', 'gdpr', 'gdpr_consent', 'gpp', 'gpp_sid', 'us_privacy']);

/**
 * The known query parameters, first occurrence wins. One pass, no URLSearchParams: values are decoded only
 * for known keys and only when they hold an escape, which keeps the 1-2 KB `eids` value from being copied.
 */
function parseQuery(search: string, col: Collector): Map<string, string> {
  const out = new Map<string, string>();
  const n = search.length;
  let i = search.startsWith('?') ? 1 : 0;
  while (i < n) {
    let amp = search.indexOf('&', i);
    if (amp < 0) amp = n;
    let eq = search.indexOf('=', i);
    if (eq < 0 || eq > amp) eq = amp;
    const rawKey = search.slice(i, eq);
    // Keys are plain ASCII names: decode only one that is not found as it stands.
    const key = QUERY_KEYS.has(rawKey) ? rawKey : decodeComponent(rawKey, true);
    if (key !== undefined && QUERY_KEYS.has(key) && !out.has(key)) {
      // In `eids` a `+` is standard Base64, never a form-encoded space.
      const value = decodeComponent(eq < amp ? search.slice(eq + 1, amp) : '', key !== 'eids');
      if (value === undefined) col.issue(key, 'malformed percent-encoding; ignored');
      else out.set(key, value);
    }
    i = amp + 1;
  }
  return out;
}

function decodeComponent(raw: string, plusIsSpace: boolean): string | undefined {
  const s = plusIsSpace && raw.includes('+') ? raw.replace(/\+/g, ' ') : raw;
  if (!s.includes('%')) return s;
  try {
    return decodeURIComponent(s);
  } catch {
    return undefined;
  }
}

function readQuery(col: Collector, search: string): void {
  const q = parseQuery(search, col);
  const get = (k: string) => q.get(k);
  const call = col.call;
  col.set('networkId', col.id('nwid', get('nwid')));
  col.set('siteId', col.id('siteid', get('siteid')));
  col.set('pageId', col.text('pgid', get('pgid')));
  const fmt = col.id('fmtid', get('fmtid'));
  if (fmt !== undefined) call.formats.push({ id: fmt });
  col.set('target', col.text('tgt', get('tgt')));
  col.timestamp('tmstp', get('tmstp'));
  col.uid('uid', get('uid'));
  col.consent(get('gdpr'), get('gdpr_consent'), get('gpp'), get('gpp_sid'), get('us_privacy'), [
    'gdpr',
    'gdpr_consent',
    'gpp',
    'gpp_sid',
    'us_privacy',
  ]);
  const eids = q.get('eids');
  if (eids !== undefined && eids !== '') col.eidsParam(eids.includes(' ') ? eids.replace(/ /g, '+') : eids);
}

function readBody(col: Collector, body: AdCallInput['body']): void {
  if (body === undefined || body === null) {
    col.issue('body', 'POST ad call without a body');
    return;
  }
  let data: unknown = body;
  if (typeof body === 'string' || body instanceof Uint8Array) {
    const size = typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength;
    if (size > col.limits.maxBodyBytes) {
      col.issue('body', `larger than ${col.limits.maxBodyBytes} bytes; body ignored`);
      return;
    }
    const text = typeof body === 'string' ? body : decoder.decode(body);
    if (!text.trim()) {
      col.issue('body', 'POST ad call with an empty body');
      return;
    }
    try {
      data = JSON.parse(text);
    } catch {
      col.issue('body', 'not valid JSON; body ignored');
      return;
    }
  }
  if (!isObject(data)) {
    col.issue('body', 'must be a JSON object; body ignored');
    return;
  }
  readBodyFields(col, data, data !== body);
}

function readBodyFields(col: Collector, b: Record<string, unknown>, fresh: boolean): void {
  // An OpenRTB-shaped body (the video plugin, Prebid Server, another SSP) can reach any POST endpoint.
  if (col.call.endpoint !== 'prebid' && isOrtbBody(b)) {
    readOrtbBody(col, b, fresh);
    return;
  }
  const call = col.call;
  // A getter that throws (a framework's lazy body object) must not fail the call.
  const field = (k: string): unknown => {
    try {
      return b[k];
    } catch {
      col.issue(k, 'could not be read');
      return undefined;
    }
  };
  col.set('networkId', col.id('networkId', field('networkId')));
  col.set('siteId', col.id('siteId', field('siteId')));
  col.set('pageId', col.text('pageId', field('pageId')));
  const formatId = col.id('formatId', field('formatId'));
  if (formatId !== undefined) call.formats.push({ id: formatId });
  const formats = field('formats');
  if (formats !== undefined) readFormats(col, formats);
  const units = field('units');
  if (units !== undefined) readPrebidUnits(col, units);
  col.set('target', col.text('target', field('target')));
  col.timestamp('timestamp', field('timestamp'));
  col.uid('uid', field('uid'));
  const either = (a: string, b2: string) => field(a) ?? field(b2);
  col.consent(field('gdpr'), either('gdprConsent', 'gdpr_consent'), field('gpp'), either('gppSid', 'gpp_sid'), either('usPrivacy', 'us_privacy'), [
    'gdpr',
    'gdprConsent',
    'gpp',
    'gppSid',
    'usPrivacy',
  ]);
  const addtl = col.text('addtl_consent', field('addtl_consent'));
  if (addtl !== undefined) call.consent.addtlConsent = addtl;
  // The Prebid adapter sends the page Prebid detected: under a strict referrer policy the header holds only the origin.
  const page = col.text('page', field('page'));
  if (page !== undefined) call.referer = page;
  const eids = field('eids');
  // The spec sends an array; a Base64 string (what `setEids` also accepts) is decoded rather than refused.
  if (typeof eids === 'string') col.eidsParam(eids);
  else if (eids !== undefined && eids !== null) col.eids(eids, fresh);
}

function readFormats(col: Collector, formats: unknown): void {
  if (!Array.isArray(formats)) {
    col.issue('formats', 'must be an array');
    return;
  }
  const n = Math.min(formats.length, col.limits.maxFormats);
  for (let i = 0; i < n; i++) {
    const f = formats[i] as unknown;
    if (!isObject(f)) {
      col.issue(`formats[${i}]`, 'must be an object');
      continue;
    }
    const id = col.id(`formats[${i}].id`, f.id);
    if (id === undefined) {
      if (f.id === undefined) col.issue(`formats[${i}].id`, 'missing');
      continue;
    }
    const tagId = col.text(`formats[${i}].tagId`, f.tagId, 256);
    col.call.formats.push(tagId === undefined ? { id } : { id, tagId });
  }
  if (formats.length > n) col.issue('formats', `more than ${col.limits.maxFormats} formats: ${formats.length - n} dropped`);
}

const ORIGIN = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i;

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
  return { pathname: (q < 0 ? rest : rest.slice(0, q)) || '/', search: q < 0 ? '' : rest.slice(q) };
}

function finish(col: Collector, headers: HeadersLike | undefined, options: ParseOptions): AdCall {
  const call = col.call;
  const rawPid = readCookie(header(headers, 'cookie'), 'pid');
  if (rawPid !== undefined) {
    if (rawPid.length > 0 && rawPid.length <= col.limits.maxUserIdLength && COOKIE_VALUE.test(rawPid)) call.pid = rawPid;
    else col.issue('cookie.pid', 'not a valid pid; ignored');
  }
  const ua = header(headers, 'user-agent');
  // An OpenRTB body's `device.ua` (the user's browser, relayed by a server) beats the caller's own header.
  if (ua && call.userAgent === undefined) call.userAgent = ua.slice(0, col.limits.maxTextLength);
  const referer = header(headers, 'referer');
  if (referer && referer.length <= col.limits.maxTextLength && call.referer === undefined) call.referer = referer;
  if (options.ip) call.ip = options.ip;
  return call;
}

/**
 * Parses one ad call from its URL, method, headers and body. Never throws.
 * @example parseAdCall({ url: '/ac?nwid=1234&siteid=1&pgid=2&fmtid=3&eids=W3si…', headers: { cookie: 'pid=abc' } })
 */
export function parseAdCall(input: AdCallInput, options: ParseOptions = {}): AdCall {
  const limits = resolveLimits(options.limits);
  const url = splitUrl(input?.url ?? '');
  const col = new Collector(url ? endpointOf(url.pathname) : 'unknown', limits);
  try {
    if (!url) col.issue('url', 'not a valid URL');
    else if (col.call.endpoint === 'unknown') col.issue('url', `${url.pathname} is not an ad-call endpoint (/ac, /genericpost, /call, /prebid/v1)`);
    const method = (input.method ?? (input.body !== undefined ? 'POST' : 'GET')).toUpperCase();
    if (method === 'POST') readBody(col, input.body);
    else if (url) readQuery(col, url.search);
  } catch {
    col.issue('request', 'could not be read');
  }
  return finish(col, input?.headers, options);
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

async function parseWithBody(
  url: string | URL,
  method: string,
  headers: HeadersLike | undefined,
  body: AsyncIterable<Uint8Array | string> | null,
  options: ParseOptions,
  drain: boolean,
): Promise<AdCall> {
  if (method.toUpperCase() !== 'POST') return parseAdCall({ url, method, headers }, options);
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
  const bare: AdCall = { endpoint: call.endpoint, formats: [], eids: [], consent: {}, issues: call.issues.filter((i) => i.path === 'url' || i.path === 'cookie.pid') };
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
export async function parseAdCallRequest(request: Request, options: ParseOptions = {}): Promise<AdCall> {
  const body = request.body as unknown as AsyncIterable<Uint8Array> | null;
  return parseWithBody(request.url, request.method, request.headers, body, options, false);
}

/**
 * Parses an ad call from Node's `http.IncomingMessage` (node:http, express, fastify's `request.raw`).
 * Buffers at most `maxBodyBytes`; a larger body is read to its end and discarded so the socket can answer.
 * When a body parser already consumed the stream (express.json(), body-parser), its `req.body` is used.
 * @example http.createServer(async (req, res) => { const call = await parseIncomingMessage(req, { ip: req.socket.remoteAddress }); … })
 */
export async function parseIncomingMessage(req: IncomingMessage, options: ParseOptions = {}): Promise<AdCall> {
  // The usual request target, a path (`/ac?…`), is read as it stands; only the rare other forms build a URL.
  const target = req.url ?? '/';
  let url = target;
  if (!target.startsWith('/') || target.startsWith('//')) {
    const host = header(req.headers, 'host') ?? 'localhost';
    try {
      url = new URL(target, `http://${host}`).href;
    } catch {
      url = new URL(target, 'http://localhost').href;
    }
  }
  const parsed = (req as IncomingMessage & { body?: unknown }).body;
  if (req.readableEnded && parsed !== undefined && (req.method ?? 'GET').toUpperCase() === 'POST') {
    const body = typeof parsed === 'string' || parsed instanceof Uint8Array || (typeof parsed === 'object' && parsed !== null) ? parsed : null;
    return parseAdCall({ url, method: 'POST', headers: req.headers, body: body as AdCallInput['body'] }, options);
  }
  return parseWithBody(url, req.method ?? 'GET', req.headers, req, options, true);
}
