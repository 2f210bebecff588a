/**
 * The JSON text of the bid requests of one ad call, one per partner: exactly `JSON.stringify` of each. The partners
 * of one call mostly receive the same eids (the same objects, in the same order), and their text is most of a
 * request's, so each distinct list is written once, by `JSON.stringify`, and set into every request that carries it.
 */
import { randomBytes } from 'node:crypto';
import type { OrtbBidRequest, OrtbEid } from './openrtb.js';

// Stands for a list in a request while it is written: a random token per process (72 bits), so no caller's string
// can be it; plain letters, so writing it takes JSON.stringify's fast path. Its JSON text (with its quotes, which a
// quote inside another string cannot give: that one is escaped) is looked for, then replaced by the list's.
const MARK_JSON = JSON.stringify(`eidkit-eids-${randomBytes(9).toString('hex')}`);
const MARK = JSON.parse(MARK_JSON) as string;

interface UserWithEids {
  eids?: readonly OrtbEid[];
  ext?: { eids?: readonly OrtbEid[] } & Record<string, unknown>;
}

/**
 * The JSON text of each bid request of one ad call, in order: `JSON.stringify(request)`, byte for byte.
 * @example const bodies = bidRequestsJson(partners.map((p) => buildBidRequest(call, p)));
 */
export function bidRequestsJson(requests: readonly OrtbBidRequest[]): string[] {
  if (requests.length < 2) return requests.map((request) => JSON.stringify(request));
  const written: { eids: readonly OrtbEid[]; json: string }[] = [];
  const jsonOf = (eids: readonly OrtbEid[]) => {
    for (const w of written) if (sameList(w.eids, eids)) return w.json;
    const json = JSON.stringify(eids);
    written.push({ eids, json });
    return json;
  };
  return requests.map((request) => {
    const user = request.user as UserWithEids | undefined;
    const top = Array.isArray(user?.eids) ? user.eids : undefined;
    const ext = Array.isArray(user?.ext?.eids) ? user.ext.eids : undefined;
    // Only plain objects (no toJSON of their own or inherited to honour) and, in a `both` request, one list in both
    // places; anything else is written as it is.
    if (!user || (!top && !ext) || (top && ext && !sameList(top, ext))) return JSON.stringify(request);
    if (!isPlain(request) || !isPlain(user) || (ext && !isPlain(user.ext))) return JSON.stringify(request);
    // Shallow copies with the mark in place of each list keep every key where it was.
    const marked: Record<string, unknown> = { ...user };
    if (top) marked.eids = MARK;
    if (ext) marked.ext = { ...user.ext, eids: MARK };
    const text = JSON.stringify({ ...request, user: marked });
    const json = jsonOf((top ?? ext)!);
    const at = text.indexOf(MARK_JSON);
    const out = text.slice(0, at) + json + text.slice(at + MARK_JSON.length);
    return top && ext ? out.replace(MARK_JSON, () => json) : out;
  });
}

const sameList = (a: readonly OrtbEid[], b: readonly OrtbEid[]) => {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
};

const isPlain = (o: unknown) =>
  Object.getPrototypeOf(o) === Object.prototype && !Object.prototype.hasOwnProperty.call(o, 'toJSON');
