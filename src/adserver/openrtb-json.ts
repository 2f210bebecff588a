/**
 * The JSON text of the bid requests of one ad call, one per partner. Every partner's request carries the same
 * eid objects (buildBidRequest passes them through unmodified), so a list of eids is serialized once for the
 * whole fan-out and its text reused: with five partners, the eids (most of a request's bytes) are written once,
 * not five times. The text of each request is exactly `JSON.stringify(request)`.
 */
import type { OrtbBidRequest } from './openrtb.js';

/** The eid lists already written in this batch: their elements and their JSON. */
type Memo = Array<{ eids: readonly unknown[]; text: string }>;

const skipped = (v: unknown) => v === undefined || typeof v === 'function' || typeof v === 'symbol';

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

/** An object's JSON with its `eids` array (at this level, or in `ext` when `nested`) written through the memo. */
function objectJson(o: Record<string, unknown>, memo: Memo, nested: boolean): string {
  if (typeof o.toJSON === 'function') return JSON.stringify(o);
  let out = '{';
  let first = true;
  for (const k in o) {
    const v = o[k];
    if (skipped(v)) continue;
    let text: string;
    if (k === 'eids' && Array.isArray(v)) text = eidsJson(v, memo);
    else if (nested && k === 'ext' && typeof v === 'object' && v !== null && !Array.isArray(v)) text = objectJson(v as Record<string, unknown>, memo, false);
    else text = JSON.stringify(v);
    out += (first ? '' : ',') + JSON.stringify(k) + ':' + text;
    first = false;
  }
  return out + '}';
}

/**
 * The JSON text of each bid request of one ad call, in order: the same text as `JSON.stringify(request)`, with
 * the eids they share serialized once. Use it for the fan-out to several partners.
 * @example const bodies = bidRequestsJson(partners.map((p) => buildBidRequest(call, p)));
 */
export function bidRequestsJson(requests: readonly OrtbBidRequest[]): string[] {
  const memo: Memo = [];
  return requests.map((req) => {
    const r = req as unknown as Record<string, unknown>;
    if (typeof r !== 'object' || r === null || typeof r.toJSON === 'function') return JSON.stringify(req);
    let out = '{';
    let first = true;
    for (const k in r) {
      const v = r[k];
      if (skipped(v)) continue;
      const text = k === 'user' && typeof v === 'object' && v !== null && !Array.isArray(v) ? objectJson(v as Record<string, unknown>, memo, true) : JSON.stringify(v);
      out += (first ? '' : ',') + JSON.stringify(k) + ':' + text;
      first = false;
    }
    return out + '}';
  });
}
