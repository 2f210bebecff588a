// Shared fixtures of the adserver tests: realistic eids and ad-call builders.
import type { Eid } from '../../src/core/index.js';
import { parseAdCall } from '../../src/adserver/index.js';
import type { AdCall } from '../../src/adserver/index.js';

export const ID5: Eid = {
  source: 'id5-sync.com',
  uids: [{ id: 'ID5*abc', atype: 1, ext: { linkType: 2, abTestingControlGroup: false } }],
};
export const UID2: Eid = { source: 'uidapi.com', uids: [{ id: 'A4AAAABk-uid2-token', atype: 3 }] };
export const EUID: Eid = { source: 'euid.eu', uids: [{ id: 'euid-token', atype: 3 }] };
export const HEM: Eid = { source: 'hemsha256', uids: [{ id: 'a'.repeat(64), atype: 3 }] };
export const IP: Eid = { source: 'ip', uids: [{ id: '203.0.113.7', atype: 1 }] };
export const UNKNOWN: Eid = { source: 'example.org', uids: [{ id: 'xyz', atype: 571187 }], ext: { vendor: true } };
export const RAMP: Eid = {
  source: 'liveramp.com',
  uids: [{ id: 'XY1000bIVBVah9ium-sZ3ykhPiXQbEcUpn4GjCtxrrw2BRDGM', atype: 3 }],
};

/** Standard Base64 (with `+`, `/` and padding) of the JSON. */
export const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64');
/** URL-safe Base64 without padding, what the tag sends. */
export const b64url = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

/** A GET /ac call as the tag sends it. */
export function getCall(params: Record<string, string | number | undefined>, cookie?: string): AdCall {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) q.set(k, String(v));
  return parseAdCall({ url: `https://ads.example/ac?${q}`, headers: cookie ? { cookie } : {} });
}

/** An ad call with the given user ids and eids (network 1234). */
export function callWith(opts: { uid?: string; pid?: string; eids?: Eid[]; networkId?: number }): AdCall {
  const call: AdCall = {
    endpoint: 'ac',
    networkId: opts.networkId ?? 1234,
    formats: [{ id: 7 }],
    eids: opts.eids ?? [],
    consent: {},
    issues: [],
  };
  if (opts.uid) call.uid = opts.uid;
  if (opts.pid) call.pid = opts.pid;
  return call;
}
