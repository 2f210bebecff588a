/**
 * Reading an ad call's fields into a Collector: the GET `/ac` query and the JSON body of a
 * POST (`/genericpost`, `/call`, `/prebid/v1`), handing OpenRTB-shaped bodies and Prebid ad units to
 * ortb.ts. Like the rest of the parser they never throw: what is broken is dropped and named in `issues`.
 */
import { isObject } from '../../core/index.js';
import { ownString } from '../common/index.js';
import type { AdCallInput, Collector } from './ad-call.js';
import { checkPrebidExtras, isOrtbBody, readOrtbBody, readPrebidUnits } from './ortb.js';

const decoder = new TextDecoder();

/** The GET parameters an ad call reads (docs/wire-format.md#get-ad-calls-the-base64-eids-parameter). */
const QUERY_KEYS = new Set([
  'nwid',
  'siteid',
  'pgid',
  'fmtid',
  'tgt',
  'tmstp',
  'uid',
  'eids',
  'gdpr',
  'gdpr_consent',
  'gpp',
  'gpp_sid',
  'us_privacy',
  'gpc',
]);

/** The GET parameters kept as text (the others are read as numbers, or decoded and dropped). */
const KEPT_AS_TEXT = new Set(['pgid', 'tgt', 'uid', 'gdpr_consent', 'gpp', 'us_privacy']);

/**
 * The known query parameters, first occurrence wins (a malformed one too: each known key is decoded once, so a
 * query of 100,000 broken repeats costs one failed decode, not 100,000 thrown errors). One pass, no
 * URLSearchParams: values are decoded only for known keys and only when they hold an escape, which keeps the
 * 1-2 KB `eids` value from being copied.
 */
function parseQuery(search: string, col: Collector): Map<string, string> {
  const out = new Map<string, string>();
  let malformed: Set<string> | undefined; // keys whose first occurrence could not be decoded (rare: made lazily)
  const n = search.length;
  let i = search.startsWith('?') ? 1 : 0;
  // The next `=` at or after i, found once and reused while it lies ahead: searching again from every `&` would
  // rescan the same text, quadratic for a long query with no `=` (docs/ad-server.md "Caps").
  let nextEq = -1;
  while (i < n) {
    let amp = search.indexOf('&', i);
    if (amp < 0) amp = n;
    if (nextEq < i) nextEq = search.indexOf('=', i);
    if (nextEq < 0) nextEq = n;
    const eq = nextEq > amp ? amp : nextEq;
    const rawKey = search.slice(i, eq);
    // Keys are plain ASCII names: decode only one that is not found as it stands.
    const key = QUERY_KEYS.has(rawKey) ? rawKey : decodeKey(rawKey);
    if (key !== undefined && QUERY_KEYS.has(key) && !out.has(key) && !malformed?.has(key)) {
      // In `eids` a `+` is standard Base64, never a form-encoded space.
      const raw = eq < amp ? search.slice(eq + 1, amp) : '';
      const value = decodeComponent(raw, key !== 'eids');
      // A text value with nothing to decode is a slice of the whole URL (V8 keeps a substring as a view of its
      // parent): a copy, so that what keeps it (the consent caches, cap keys, a log) does not keep the URL.
      if (value !== undefined) out.set(key, value === raw && KEPT_AS_TEXT.has(key) ? ownString(value) : value);
      else {
        col.issue(key, 'malformed percent-encoding; ignored');
        (malformed ??= new Set()).add(key);
      }
    }
    i = amp + 1;
  }
  return out;
}

/** Longest key that can spell a known parameter: 12 characters, each as a `%XX` escape. */
const MAX_KEY = 36;

/**
 * A query key decoded, when it can be a known parameter: those are ASCII names, so a key with a broken escape or
 * one above `%7F` is none of them, and is passed over without calling decodeURIComponent (which throws on it:
 * a thrown error costs microseconds, and a hostile query can hold one per character pair).
 */
function decodeKey(raw: string): string | undefined {
  if (raw.length > MAX_KEY) return undefined;
  if (!raw.includes('%')) return raw.includes('+') ? raw.replace(/\+/g, ' ') : raw;
  if (/%(?![0-7][0-9a-f])/i.test(raw)) return undefined;
  return decodeURIComponent(raw.replace(/\+/g, ' '));
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

/** Reads the GET `/ac` parameters of a query string (`?nwid=1&eids=…`) into the call. */
export function readQuery(col: Collector, search: string): void {
  const q = parseQuery(search, col);
  const get = (k: string) => q.get(k);
  const call = col.call;
  col.set('networkId', col.id('nwid', get('nwid')));
  col.set('siteId', col.id('siteid', get('siteid')));
  col.set('pageId', col.text('pgid', get('pgid')));
  const fmt = col.id('fmtid', get('fmtid'));
  if (fmt !== undefined) call.formats.push({ id: fmt });
  col.set('target', col.impersonal('tgt', get('tgt')));
  col.timestamp('tmstp', get('tmstp'));
  col.uid('uid', get('uid'));
  col.consent(get('gdpr'), get('gdpr_consent'), get('gpp'), get('gpp_sid'), get('us_privacy'), [
    'gdpr',
    'gdpr_consent',
    'gpp',
    'gpp_sid',
    'us_privacy',
  ]);
  col.gpc('gpc', get('gpc'));
  const eids = q.get('eids');
  if (eids !== undefined && eids !== '') col.eidsParam(eids.includes(' ') ? eids.replace(/ /g, '+') : eids);
}

/** Reads a POST body (text, bytes, or an object a framework parsed) into the call, within `maxBodyBytes`. */
export function readBody(col: Collector, body: AdCallInput['body']): void {
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
  if (call.endpoint === 'prebid') checkPrebidExtras(col, field);
  col.set('target', col.impersonal('target', field('target')));
  col.timestamp('timestamp', field('timestamp'));
  col.uid('uid', field('uid'));
  const either = (a: string, b2: string) => field(a) ?? field(b2);
  col.consent(
    field('gdpr'),
    either('gdprConsent', 'gdpr_consent'),
    field('gpp'),
    either('gppSid', 'gpp_sid'),
    either('usPrivacy', 'us_privacy'),
    ['gdpr', 'gdprConsent', 'gpp', 'gppSid', 'usPrivacy'],
  );
  col.gpc('gpc', field('gpc'));
  const addtl = col.text('addtl_consent', field('addtl_consent'));
  if (addtl !== undefined) call.consent.addtlConsent = addtl;
  // The Prebid adapter sends the page Prebid detected: under a strict referrer policy the header holds only the origin.
  const page = col.text('page', field('page'));
  if (page !== undefined) call.referer = page;
  const eids = field('eids');
  // The body carries an array; a Base64 string (what `setEids` also accepts) is decoded rather than refused.
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
  if (formats.length > n)
    col.issue('formats', `more than ${col.limits.maxFormats} formats: ${formats.length - n} dropped`);
}
