// Property: random valid eids (any atype, random ext, inserter, matcher, mm) sent through every
// integration (docs/wire-format.md) come out of parseAdCallRequest, and into a partner's OpenRTB bid request,
// unchanged: the tag's GET and POST calls, the Prebid.js adapter, and OpenRTB 2.5 and 2.6 bodies. The strings hold
// no email: the Prebid adapter leaves out any value that does (test/prebid/spec.test.ts).
import { expect, test } from 'vitest';
import fc from 'fast-check';
import { hasEmail, type Eid } from '../../src/core/index.js';
import { buildBidRequest, parseAdCallRequest } from '../../src/adserver/index.js';
import { buildRequest } from '../../src/tag/request.js';
import { createSpec } from '../../src/prebid/index.js';

/** Text that holds no email (core/pii.ts). */
const text = (c: fc.StringConstraints) => fc.string(c).filter((t) => !hasEmail(t));
const key = text({ minLength: 1, maxLength: 8 }).filter((k) => k !== '__proto__');
// JSON values that survive a JSON round trip as they are (no -0, no undefined, no NaN).
const json = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', maxDepth: 3 },
    text({ maxLength: 12 }),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }).filter((d) => !Object.is(d, -0)),
    fc.boolean(),
    fc.constant(null),
    tie('array'),
    tie('object'),
  ),
  array: fc.array(tie('value'), { maxLength: 3 }),
  object: fc.dictionary(key, tie('value'), { maxKeys: 3 }),
})).object;

const uid = fc.record(
  { id: text({ minLength: 1, maxLength: 40 }), atype: fc.integer(), ext: json },
  { requiredKeys: ['id'] },
);
const eid = fc.record(
  {
    source: fc.stringMatching(/^[a-z0-9][a-z0-9.-]{0,24}$/),
    uids: fc.uniqueArray(uid, { minLength: 1, maxLength: 3, selector: (u) => u.id }),
    inserter: text({ minLength: 1, maxLength: 20 }),
    matcher: text({ minLength: 1, maxLength: 20 }),
    mm: fc.nat(),
    ext: json,
  },
  { requiredKeys: ['source', 'uids'] },
);
const eidsArb = fc.uniqueArray(eid, { minLength: 1, maxLength: 5, selector: (e) => e.source }) as fc.Arbitrary<Eid[]>;

const ORIGIN = 'https://ads.example';
const post = (path: string, body: string) => new Request(ORIGIN + path, { method: 'POST', body });

/** Each integration: the request it sends to the ad server for these eids. */
const integrations: [string, (eids: Eid[]) => Request][] = [
  [
    'tag GET',
    (eids) =>
      new Request(
        buildRequest(
          'std',
          { siteId: 1, pageId: 2, formatId: 3 },
          { domain: ORIGIN, networkId: 1234, eids, params: {}, now: 1 },
        ).url,
      ),
  ],
  [
    'tag POST',
    (eids) =>
      post(
        '/genericpost',
        buildRequest(
          'generic',
          { siteId: 1, pageId: 2, formatId: 3 },
          { domain: ORIGIN, networkId: 1234, eids, params: {}, now: 1 },
        ).body!,
      ),
  ],
  [
    'Prebid adapter',
    (eids) => {
      const bid = {
        bidId: 'b1',
        adUnitCode: 'top',
        params: { networkId: 1234, siteId: 1, pageId: 2, formatId: 3, domain: ORIGIN },
        mediaTypes: { banner: { sizes: [[300, 250]] as [number, number][] } },
        userIdAsEids: eids,
      };
      const [r] = createSpec().buildRequests([bid], { ortb2: { user: { ext: { eids } } } });
      return post(new URL(r.url).pathname, r.data);
    },
  ],
  [
    'OpenRTB 2.5 body',
    (eids) =>
      post('/genericpost', JSON.stringify({ id: 'r', imp: [{ id: '1', tagid: '3' }], user: { ext: { eids } } })),
  ],
  [
    'OpenRTB 2.6 body',
    (eids) => post('/call', JSON.stringify({ id: 'r', imp: [{ id: '1', tagid: '3' }], user: { eids } })),
  ],
];

test.each(integrations)(
  'eids sent through the %s reach the parsed call and the partner bid request unchanged',
  async (_name, send) => {
    await fc.assert(
      fc.asyncProperty(eidsArb, async (eids) => {
        const call = await parseAdCallRequest(send(eids));
        expect(call.eids).toEqual(eids);
        // Any issue is only the note on an atype AdCOM does not list: nothing was dropped.
        expect(call.issues.filter((i) => !i.message.includes('kept as sent'))).toEqual([]);
        expect(buildBidRequest(call, { id: 'dsp' }).user?.eids).toEqual(eids);
        expect(buildBidRequest(call, { id: 'dsp25', openrtb: '2.5' }).user?.ext?.eids).toEqual(eids);
      }),
      { numRuns: 150 },
    );
  },
);
