/**
 * Builds the HTTP request of one ad call (issue #2, "sas.call"; extended-ids.md §4): GET `/ac` with the eids
 * as a Base64 query parameter for `std` and `video`, POST JSON with an `eids` array for `generic` and `onecall`.
 * Pure: no DOM, no network, so every rule is unit-tested.
 */
import { encodeEids, isKnownSource, type Eid } from '../core/index.js';
import type { CallType } from './extension.js';

/** The options of `sas.call(type, options)`. Ids may be numbers or digit strings. */
export interface CallOptions {
  siteId?: number | string;
  pageId?: number | string;
  /** The format of a `std`, `video` or `generic` call (and the single format of a `onecall` without `formats`). */
  formatId?: number | string;
  /** The formats of a `onecall` call; `tagId` is the id of the page element the ad goes into. */
  formats?: Array<{ id: number | string; tagId?: string }>;
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
  /** Signals from extensions (consent): extra query parameters / body fields. */
  params: Record<string, string>;
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

/** A GET URL must stay under this many characters (issue #2): a limit many proxies and servers enforce. */
export const MAX_GET_URL = 8000;

/** Every ad-call type and the path it goes to (extended-ids.md §4). */
export const CALL_PATHS: Record<CallType, string> = { std: '/ac', video: '/ac', generic: '/genericpost', onecall: '/call' };

/** An id as given when it is a finite number or a non-empty string; digit strings become numbers. */
const toId = (v: unknown): number | string | undefined =>
  typeof v === 'string' ? (/^\s*\d{1,15}\s*$/.test(v) ? +v : v.trim() || undefined) : typeof v === 'number' && isFinite(v) ? v : undefined;

/** Keyword targeting as the `k=v;k2=v2` string the ad server reads; arrays become comma lists. */
export function targetString(target: unknown): string | undefined {
  const t = target as Record<string, unknown>;
  return (
    (typeof t === 'string'
      ? t
      : t && typeof t === 'object'
        ? Object.keys(t)
            .filter((k) => t[k] != null && (typeof t[k] !== 'object' || Array.isArray(t[k])))
            .map((k) => k + '=' + t[k])
            .join(';')
        : '') || undefined
  );
}

/** UTF-8 length of a string. */
const bytes = (s: string) => unescape(encodeURIComponent(s)).length;

/**
 * Chooses the eids that fit in `budget` Base64 characters, leaving out whole EIDs: unknown sources first, then
 * the largest (issue #2). Returns the kept EIDs in their original order and the sources left out, in the order they went.
 */
export function fitEids(eids: Eid[], budget: number): { kept: Eid[]; dropped: string[] } {
  const sizes = eids.map((e) => bytes(JSON.stringify(e)) + 1);
  const order = eids
    .map((_, i) => i)
    .sort((a, b) => +isKnownSource(eids[a].source) - +isKnownSource(eids[b].source) || sizes[b] - sizes[a]);
  const out = new Set<number>();
  // Array bytes = 1 + Σ(item + 1 separator); Base64 adds a third. Estimate first, then confirm by encoding.
  let total = 1 + sizes.reduce((s, n) => s + n, 0);
  let kept = eids;
  for (const i of order) {
    if ((total * 4) / 3 <= budget && encodeEids(kept).length <= budget) break;
    out.add(i);
    total -= sizes[i];
    kept = eids.filter((_, j) => !out.has(j));
  }
  return { kept, dropped: [...out].map((i) => eids[i].source) };
}

/**
 * Builds the request of one ad call.
 * @example buildRequest('std', { siteId: 1, pageId: 2, formatId: 3 }, { domain: 'https://ads.example', eids, params: {}, now: Date.now() })
 */
export function buildRequest(type: CallType, options: unknown, ctx: CallContext): AdRequest {
  const o = (options && typeof options === 'object' ? options : {}) as Record<string, unknown>;
  const siteId = toId(o.siteId);
  const pageId = toId(o.pageId);
  const formatId = toId(o.formatId);
  const target = targetString(o.target);
  const url = ctx.domain + CALL_PATHS[type];
  let eids = ctx.eids;
  let dropped: string[] = [];

  if (type === 'std' || type === 'video') {
    // Extension params first, then the call's own parameters, which win on a name clash.
    const q: Record<string, unknown> = { ...ctx.params, nwid: ctx.networkId, siteid: siteId, pgid: pageId, fmtid: formatId, tgt: target, tmstp: ctx.now, uid: ctx.uid };
    delete q.eids;
    const base = url + '?' + Object.keys(q)
      .filter((k) => q[k] != null && q[k] !== '')
      .map((k) => encodeURIComponent(k) + '=' + encodeURIComponent(q[k] as string))
      .join('&');
    ({ kept: eids, dropped } = fitEids(eids, MAX_GET_URL - 1 - base.length - 6));
    // With no eids the parameter is absent, not empty (issue #2).
    return { method: 'GET', url: eids.length ? base + '&eids=' + encodeEids(eids) : base, eids, dropped };
  }

  const body: Record<string, unknown> = { ...ctx.params, networkId: ctx.networkId, siteId, pageId };
  if (type === 'onecall') {
    body.formats = (Array.isArray(o.formats) ? o.formats : [{ id: formatId }])
      .map((f) => ({ id: toId(f && f.id), tagId: f && typeof f.tagId === 'string' ? f.tagId : undefined }))
      .filter((f) => f.id !== undefined);
  } else body.formatId = formatId;
  body.target = target || '';
  body.timestamp = ctx.now;
  body.uid = ctx.uid;
  body.eids = eids.length ? eids : undefined;
  return { method: 'POST', url, body: JSON.stringify(body), eids, dropped };
}
