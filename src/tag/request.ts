/**
 * Builds the HTTP request of one ad call (`sas.call`): GET `/ac` with the eids
 * as a Base64 query parameter for `std` and `video`, POST JSON with an `eids` array for `generic` and `onecall`.
 * Pure: no DOM, no network, so every rule is unit-tested.
 * See docs/wire-format.md#get-ad-calls-the-base64-eids-parameter.
 */
import { encodeEids, hasEmail, isKnownSource, type Eid } from '../core/index.js';
import type { CallType } from './extension.js';

/** The options of `sas.call(type, options)`. Ids may be numbers or digit strings. */
export interface CallOptions {
  siteId?: number | string;
  pageId?: number | string;
  /** The format of a `std`, `video` or `generic` call (and the single format of a `onecall` without `formats`). */
  formatId?: number | string;
  /** The formats of a `onecall` call; `tagId` is the id of the page element the ad goes into. */
  formats?: { id: number | string; tagId?: string }[];
  /** Keyword targeting: `"k=v;k2=v2"`, or an object turned into that form (arrays become comma lists). */
  target?: string | Record<string, unknown>;
}

/** Everything a call needs besides its options. */
export interface CallContext {
  /** Ad server base URL, no trailing slash. */
  domain: string;
  networkId?: number;
  uid?: string;
  /** The eids to send (validated and merged). */
  eids: Eid[];
  /** Fields from extensions (consent signals, experiment arms): extra query parameters / body fields. */
  params: Record<string, unknown>;
  /** Time stamp for `tmstp` / `timestamp` (cache busting). */
  now: number;
}

/** The request to send, and what was left out of it. */
export interface AdRequest {
  method: 'GET' | 'POST';
  url: string;
  /** JSON text of a POST body. */
  body?: string;
  /** The eids actually carried. */
  eids: Eid[];
  /** Sources left out to keep a GET URL under the limit. */
  dropped: string[];
}

/** A GET URL must stay under this many characters: a limit many proxies and servers enforce. */
export const MAX_GET_URL = 8000;

/** Every ad-call type and the path it goes to (docs/wire-format.md#how-eids-reach-an-ad-call). */
export const CALL_PATHS: Record<CallType, string> = {
  std: '/ac',
  video: '/ac',
  generic: '/genericpost',
  onecall: '/call',
};

/** One entry of a call's `formats` as the page may give it (any value: each field is checked). */
type FormatEntry = { id?: unknown; tagId?: unknown } | null | undefined;

/** An id as given when it is a finite number or a non-empty string; digit strings become numbers. */
const toId = (v: unknown): number | string | undefined =>
  typeof v === 'string'
    ? /^\s*\d{1,15}\s*$/.test(v)
      ? +v
      : v.trim() || undefined
    : typeof v === 'number' && isFinite(v)
      ? v
      : undefined;

/** Keyword targeting as the `k=v;k2=v2` string the ad server reads; arrays become comma lists. */
export function targetString(target: unknown): string | undefined {
  const t = target as Record<string, unknown>;
  return (
    (typeof t === 'string'
      ? t
      : t && typeof t === 'object'
        ? Object.keys(t)
            .filter((k) => t[k] != null && (typeof t[k] !== 'object' || Array.isArray(t[k])))
            .map((k) => k + '=' + (t[k] as string))
            .join(';')
        : '') || undefined
  );
}

/**
 * Chooses the eids that fit in `budget` Base64 characters, leaving out whole EIDs: unknown sources first, then
 * the largest. Returns the kept EIDs in their original order and the sources left out, in the order they went.
 */
export function fitEids(eids: Eid[], budget: number): { kept: Eid[]; dropped: string[] } {
  // UTF-8 bytes of each item of the JSON array, plus its separator (a comma, or the closing bracket).
  // eslint-disable-next-line @typescript-eslint/no-deprecated -- the smallest UTF-8 byte count the tag can carry
  const sizes = eids.map((e) => unescape(encodeURIComponent(JSON.stringify(e))).length + 1);
  // The array's bytes are exact ('[' + items): unpadded Base64 of n bytes is ceil(4n / 3) characters.
  let total = sizes.reduce((s, n) => s + n, 1);
  const out = eids
    .map((_, i) => i)
    .sort((a, b) => +isKnownSource(eids[a].source) - +isKnownSource(eids[b].source) || sizes[b] - sizes[a])
    // Keeps dropping while the URL is over budget. The comma form is 8 B gzip smaller than a block body, in a core
    // whose budget has about that much left.
    // eslint-disable-next-line no-sequences
    .filter((i) => total * 4 > budget * 3 && ((total -= sizes[i]), true));
  return { kept: eids.filter((_, i) => !out.includes(i)), dropped: out.map((i) => eids[i].source) };
}

/**
 * Builds the request of one ad call.
 * @example buildRequest('std', { siteId: 1, pageId: 2, formatId: 3 }, { domain: 'https://ads.example', eids, params: {}, now: Date.now() })
 */
export function buildRequest(type: CallType, options: unknown, ctx: CallContext): AdRequest {
  const o = (options && typeof options === 'object' ? options : {}) as Record<string, unknown>;
  const formatId = toId(o.formatId);
  const target = targetString(o.target);
  const url = ctx.domain + CALL_PATHS[type];
  const get = type === 'std' || type === 'video';
  // Extension params first, then the call's own fields, which win on a name clash; `eids` only from ctx.eids.
  const fields: Record<string, unknown> = { ...ctx.params, eids: undefined };
  const values = [
    ctx.networkId,
    toId(o.siteId),
    toId(o.pageId),
    formatId,
    get ? target : target || '',
    ctx.now,
    ctx.uid,
  ];
  (get ? 'nwid siteid pgid fmtid tgt tmstp uid' : 'networkId siteId pageId formatId target timestamp uid')
    .split(' ')
    // Only hashes leave the browser: a value holding an email address (a uid, a target) is left out.
    .forEach((k, i) => (fields[k] = hasEmail(String(values[i])) ? undefined : values[i]));
  let eids = ctx.eids;
  let dropped: string[] = [];

  if (get) {
    const base =
      url +
      '?' +
      Object.keys(fields)
        .filter((k) => fields[k] != null)
        .map((k) => encodeURIComponent(k) + '=' + encodeURIComponent(fields[k] as string))
        .join('&');
    ({ kept: eids, dropped } = fitEids(eids, MAX_GET_URL - 1 - base.length - 6));
    // With no eids the parameter is absent, not empty: an empty one would read as "no ids" to a strict server.
    return { method: 'GET', url: eids.length ? base + '&eids=' + encodeEids(eids) : base, eids, dropped };
  }

  if (type === 'onecall') {
    fields.formatId = undefined;
    fields.formats = (Array.isArray(o.formats) ? (o.formats as FormatEntry[]) : [{ id: formatId }])
      .map((f: FormatEntry) => ({ id: toId(f && f.id), tagId: f && typeof f.tagId === 'string' ? f.tagId : undefined }))
      .filter((f) => f.id !== undefined);
  }
  // JSON.stringify leaves out the undefined fields (uid, eids when there are none).
  fields.eids = eids.length ? eids : undefined;
  return { method: 'POST', url, body: JSON.stringify(fields), eids, dropped };
}
