// bidRequestsJson: the text of every partner's request is exactly JSON.stringify of it, the shared eids written once.
import { describe, expect, test } from 'vitest';
import fc from 'fast-check';
import { bidRequestsJson, buildBidRequest, createForwardingPolicy, parseAdCall } from '../../src/adserver/index.js';
import type { DemandPartner, OrtbBidRequest } from '../../src/adserver/index.js';
import { EUID, HEM, ID5, RAMP, UID2, UNKNOWN, b64url } from './fixtures.js';

const call = parseAdCall(
  { url: `/ac?nwid=1&siteid=2&pgid=3&fmtid=4&gdpr=1&gdpr_consent=CPtcf&eids=${b64url([ID5, UNKNOWN, UID2, HEM, EUID])}`, headers: { cookie: 'pid=p1', referer: 'https://news.example/a' } },
  { ip: '198.51.100.7' },
);
const PARTNERS: DemandPartner[] = [{ id: 'a' }, { id: 'b', openrtb: '2.5' }, { id: 'c', openrtb: 'both' }, { id: 'dmp', kind: 'dmp', preferredProvider: 4 }];

describe('bidRequestsJson', () => {
  test('each text is JSON.stringify of its request, for every version, a DMP, a policy and extra eids', () => {
    const policy = createForwardingPolicy({ permissions: [{ source: 'id5-sync.com', partners: ['a'] }], consent: { enforce: false } });
    for (const options of [{}, { policy }, { extraEids: [RAMP] }]) {
      const requests = PARTNERS.map((p) => buildBidRequest(call, p, { id: 'r', ...options }));
      expect(bidRequestsJson(requests)).toEqual(requests.map((r) => JSON.stringify(r)));
    }
  });

  test('the eids the requests share are serialized once for the batch', () => {
    const requests = PARTNERS.slice(0, 3).map((p) => buildBidRequest(call, p, { id: 'r' }));
    let reads = 0;
    // A getter counts how often JSON reads the first eid's source: once for the whole batch, not once per place.
    const first = requests[0].user && 'eids' in requests[0].user ? requests[0].user.eids![0] : undefined;
    const source = first!.source;
    Object.defineProperty(first, 'source', { enumerable: true, get: () => {
        reads++;
        return source;
      },
    });
    const texts = bidRequestsJson(requests);
    expect(reads).toBe(1); // 2.6, 2.5 and both (two places): four lists of the same eids, one serialization
    expect(texts.map((t) => JSON.parse(t))).toEqual(requests.map((r) => JSON.parse(JSON.stringify(r))));
  });

  test('what JSON.stringify does with odd values, it does too: inherited keys, toJSON (with its key), boxed values, arrays', () => {
    const inherited = Object.assign(Object.create({ inh: 1 }), { id: 'r' });
    const keyed = { toJSON: (key: string) => `key:${key}` };
    const gone = { toJSON: () => undefined };
    const odd = [
      inherited,
      { id: 'r', user: Object.assign(Object.create({ inh: 1 }), { id: 'u' }) },
      { id: 'r', user: { id: 'u', ext: keyed, x: gone, eids: [] }, site: keyed, device: gone, at: () => 1 },
      { id: 'r', user: { ext: { eids: [keyed, gone], y: gone } } },
      { id: 'r', user: new String('u') },
      { id: 'r', user: { eids: Object.assign([1], { toJSON: (key: string) => key }) } },
      [1, 2],
      { id: 'r', imp: [{ id: '1', when: new Date(0) }], user: { id: new Date(0) } },
      { toJSON: () => ({ id: 'whole' }) },
    ];
    const list = odd as unknown as OrtbBidRequest[];
    expect(bidRequestsJson(list)).toEqual(list.map((r) => JSON.stringify(r)));
  });

  test('any request-shaped values: the same text as JSON.stringify', () => {
    const json = fc.jsonValue({ maxDepth: 3 });
    const eids = fc.array(fc.record({ source: fc.string(), uids: fc.array(fc.record({ id: fc.string() }), { maxLength: 2 }) }), { maxLength: 3 });
    const user = fc.dictionary(fc.constantFrom('id', 'consent', 'eids', 'ext', 'x'), fc.oneof(json, eids, fc.dictionary(fc.constantFrom('eids', 'consent', 'y'), fc.oneof(json, eids))));
    const request = fc.dictionary(fc.constantFrom('id', 'imp', 'user', 'regs', 'site', 'z'), fc.oneof(json, user, fc.constant(undefined)));
    fc.assert(
      fc.property(fc.array(request, { maxLength: 4 }), (requests) => {
        const list = requests as unknown as OrtbBidRequest[];
        expect(bidRequestsJson(list)).toEqual(list.map((r) => JSON.stringify(r)));
      }),
      { numRuns: 500 },
    );
  });
});
