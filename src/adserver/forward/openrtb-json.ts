/**
 * The JSON text of the bid requests of one ad call, one per partner. Every partner's request carries the same
 * eid objects (buildBidRequest passes them through unmodified), so a list of eids is serialized once for the
 * whole fan-out and its text reused: with five partners, the eids (most of a request's bytes) are written once,
 * not five times. The text of each request is exactly `JSON.stringify(request)`.
 */
import { isPlainObject } from '../../core/plain.js';
import type { OrtbBidRequest } from './openrtb.js';

/** The eid lists already written in this batch: their elements and their JSON. */
type Memo = Array<{ eids: readonly unknown[]; text: string }>;

/**
 * An eid list's JSON, reused when an earlier request of the batch had the same eid objects in the same order
 * (each partner gets its own array, of the same objects). One JSON.stringify per distinct list: cheaper than
 * memoizing eid by eid, which pays a call per eid.
 */
function eidsJson(eids: readonly unknown[], memo: Memo): string {
  next: for (const m of memo) {
    if (m.eids.length !== eids.length) continue;
    for (let i = 0; i < eids.length; i++) if (m.eids[i] !== eids[i]) continue next;
    return m.text;
  }
  const text = JSON.stringify(eids);
  memo.push({ eids, text });
  return text;
}

/** An object JSON.stringify writes key by key, with no `toJSON` of its own: only these take the fast path. */
const isPlain = (v: unknown): v is Record<string, unknown> => isPlainObject(v) && typeof v.toJSON !== 'function';

/**
 * A plain object's JSON, own enumerable keys in order as JSON.stringify takes them. `level` 2 is a request (its
 * `user` goes through level 1), 1 is a user (its `eids` through the memo, its `ext` through level 0), 0 is a
 * user's ext (its `eids` through the memo). What JSON.stringify leaves out (undefined, functions, symbols, a
 * `toJSON` answering undefined) is left out.
 */
function objectJson(o: Record<string, unknown>, memo: Memo, level: 0 | 1 | 2): string {
  let out = '';
  for (const k of Object.keys(o)) {
    const v = o[k];
    let text: string | undefined;
    if (level === 2 && k === 'user' && isPlain(v)) text = objectJson(v, memo, 1);
    else if (level < 2 && k === 'eids' && Array.isArray(v) && typeof (v as { toJSON?: unknown }).toJSON !== 'function') text = eidsJson(v, memo);
    else if (level === 1 && k === 'ext' && isPlain(v)) text = objectJson(v, memo, 0);
    // A value with its own toJSON is handed its key, as JSON.stringify does.
    else if (typeof v === 'object' && v !== null && typeof (v as { toJSON?: unknown }).toJSON === 'function') text = JSON.stringify({ [k]: v }).slice(JSON.stringify(k).length + 2, -1) || undefined;
    else text = JSON.stringify(v) as string | undefined;
    if (text === undefined) continue;
    out += (out ? ',' : '') + JSON.stringify(k) + ':' + text;
  }
  return '{' + out + '}';
}

/**
 * The JSON text of each bid request of one ad call, in order: the same text as `JSON.stringify(request)`, with
 * the eids they share serialized once. Use it for the fan-out to several partners.
 * @example const bodies = bidRequestsJson(partners.map((p) => buildBidRequest(call, p)));
 */
export function bidRequestsJson(requests: readonly OrtbBidRequest[]): string[] {
  const memo: Memo = [];
  return requests.map((req) => (isPlain(req) ? objectJson(req, memo, 2) : JSON.stringify(req)));
}
