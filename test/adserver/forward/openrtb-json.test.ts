// bidRequestsJson: the text of every partner's request is exactly JSON.stringify of it, the eids lists the requests
// share being written once.
import { describe, expect, test } from 'vitest';
import { bidRequestsJson, buildBidRequest, createForwardingPolicy, parseAdCall } from '../../../src/adserver/index.js';
import type { DemandPartner } from '../../../src/adserver/index.js';
import { EUID, HEM, ID5, RAMP, UID2, UNKNOWN, b64url } from '../fixtures.js';

const call = parseAdCall(
  {
    url: `/ac?nwid=1&siteid=2&pgid=3&fmtid=4&gdpr=1&gdpr_consent=CPtcf&eids=${b64url([ID5, UNKNOWN, UID2, HEM, EUID])}`,
    headers: { cookie: 'pid=p1', referer: 'https://news.example/a' },
  },
  { ip: '198.51.100.7' },
);
const PARTNERS: DemandPartner[] = [
  { id: 'a' },
  { id: 'b', openrtb: '2.5' },
  { id: 'c', openrtb: 'both' },
  { id: 'dmp', kind: 'dmp', preferredProvider: 4 },
];

describe('bidRequestsJson', () => {
  test('each text is JSON.stringify of its request, in order, for every version, a DMP, a policy and extra eids', () => {
    const policy = createForwardingPolicy({
      permissions: [{ source: 'id5-sync.com', partners: ['a'] }],
      consent: { enforce: false },
    });
    for (const options of [{}, { policy }, { extraEids: [RAMP] }]) {
      const requests = PARTNERS.map((p) => buildBidRequest(call, p, { id: 'r', ...options }));
      expect(bidRequestsJson(requests)).toEqual(requests.map((r) => JSON.stringify(r)));
    }
  });

  test('requests built or edited by hand: still exactly JSON.stringify of each', () => {
    const [a, b, c] = PARTNERS.map((p) => buildBidRequest(call, p, { id: 'r' }));
    const edited = structuredClone(c) as typeof c & { user: { ext: { eids: unknown[] } } };
    edited.user.ext.eids = [...edited.user.ext.eids].reverse(); // a `both` request with two different lists
    class Wrapped {
      constructor(readonly inner: object) {}
      toJSON() {
        return { wrapped: this.inner };
      }
    }
    const withToJSON = { ...a, user: { ...a.user, toJSON: () => 'custom' } };
    const quoted = { ...a, site: { ...a.site, keywords: '"eidkit-eids-0123" \u0000 \\"x\\"' } };
    const requests = [a, b, edited, new Wrapped(a), withToJSON, quoted, a, { id: 'none', imp: [] }] as never[];
    expect(bidRequestsJson(requests)).toEqual(requests.map((r) => JSON.stringify(r)));
    expect(bidRequestsJson([a])).toEqual([JSON.stringify(a)]);
  });
});
