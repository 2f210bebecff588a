// @vitest-environment happy-dom
// The adapter spec driven with Prebid-shaped bid requests (the e2e suite drives it with a real Prebid.js).
import { describe, expect, test, vi } from 'vitest';
import { createSpec, register, spec } from '../../src/prebid/index.js';
import type { PrebidBid, PrebidBidderRequest } from '../../src/prebid/index.js';

const params = { networkId: 1234, siteId: 1, pageId: 2, formatId: 3, domain: 'https://ads.example.com/' };
const eids = [
  { source: 'pubcid.org', uids: [{ id: 'c1', atype: 1 }] },
  {
    source: 'video.example',
    inserter: 'pub.example',
    matcher: 'm.example',
    mm: 3,
    uids: [{ id: 'v1', atype: 4, ext: { k: [1, { z: null }] } }],
    ext: { x: 'y' },
  },
];
const bid = (over: Partial<PrebidBid> = {}): PrebidBid => ({
  bidId: 'b1',
  adUnitCode: 'top',
  params,
  mediaTypes: { banner: { sizes: [[300, 250]] } },
  userIdAsEids: eids,
  ...over,
});
const bidderRequest = (over: Partial<PrebidBidderRequest> = {}): PrebidBidderRequest => ({
  ortb2: {
    site: { page: 'https://pub.example/a' },
    user: { keywords: 'k', ext: { eids, data: 1 } },
    source: { ext: { schain: { ver: '1.0', complete: 1, nodes: [] } } },
  },
  gdprConsent: { gdprApplies: true, consentString: 'CPX', addtlConsent: '1~2' },
  gppConsent: { gppString: 'DBA', applicableSections: [2, 7] },
  uspConsent: '1YNN',
  refererInfo: { page: 'https://pub.example/a' },
  timeout: 1500,
  ...over,
});

describe('isBidRequestValid', () => {
  test('accepts a bid with every param', () => {
    expect(spec.isBidRequestValid(bid())).toBe(true);
  });

  test('refuses a bid missing a param and names it in the log', () => {
    const log = vi.fn();
    const s = createSpec({ log });
    const { formatId: _f, ...rest } = params;
    expect(s.isBidRequestValid(bid({ params: rest as typeof params }))).toBe(false);
    expect(log).toHaveBeenCalledWith(expect.stringContaining('params.formatId'));
  });

  test('refuses a domain that is not an http(s) base URL', () => {
    const log = vi.fn();
    expect(createSpec({ log }).isBidRequestValid(bid({ params: { ...params, domain: 'ads.example.com' } }))).toBe(
      false,
    );
    expect(log).toHaveBeenCalledWith(expect.stringContaining('params.domain'));
  });
});

describe('buildRequests', () => {
  test('sends one POST to {domain}/prebid/v1 for every ad unit, with the eids exactly as Prebid gave them', () => {
    const video = { context: 'instream', mimes: ['video/mp4'], protocols: [2, 3], playerSize: [[640, 480]] };
    const floor = vi.fn(() => ({ floor: 1.5, currency: 'EUR' }));
    const reqs = spec.buildRequests(
      [
        bid({ ortb2Imp: { ext: { gpid: '/1/top' } }, getFloor: floor }),
        bid({ bidId: 'b2', adUnitCode: 'side' }),
        bid({ bidId: 'b3', adUnitCode: 'player', mediaTypes: { video } }),
      ],
      bidderRequest(),
    );
    expect(reqs).toHaveLength(1);
    expect(reqs[0].url).toBe('https://ads.example.com/prebid/v1');
    expect(reqs[0].options.withCredentials).toBe(true);
    const body = JSON.parse(reqs[0].data);
    expect(body.eids).toEqual(eids);
    expect(reqs[0].data).toContain(JSON.stringify(eids));
    expect(body.units.map((u: { bidId: string }) => u.bidId)).toEqual(['b1', 'b2', 'b3']);
    expect(body.units[0]).toMatchObject({
      adUnitCode: 'top',
      formatId: 3,
      gpid: '/1/top',
      banner: [[300, 250]],
      floor: { value: 1.5, currency: 'EUR' },
    });
    expect(floor).toHaveBeenCalledWith({ currency: 'EUR', mediaType: '*', size: '*' });
    expect(body.units[2].video).toEqual(video);
    expect(body).toMatchObject({
      networkId: 1234,
      siteId: 1,
      pageId: 2,
      gdpr: 1,
      gdpr_consent: 'CPX',
      addtl_consent: '1~2',
      gpp: 'DBA',
      gpp_sid: [2, 7],
      us_privacy: '1YNN',
      tmax: 1500,
    });
    expect(body.schain).toEqual({ ver: '1.0', complete: 1, nodes: [] });
    // First-party user data goes without the eids (they are sent once, as `eids`); Prebid's object is untouched.
    expect(body.user).toEqual({ keywords: 'k', ext: { data: 1 } });
    expect(bidderRequest().ortb2!.user!.ext!.eids).toBe(eids);
  });

  test('reads userIdAsEids when ortb2 has no eids, and sends none when Prebid gives none', () => {
    const [r] = spec.buildRequests([bid()], bidderRequest({ ortb2: {} }));
    expect(JSON.parse(r.data).eids).toEqual(eids);
    const [r2] = spec.buildRequests([bid({ userIdAsEids: undefined })], { ortb2: {} });
    expect(JSON.parse(r2.data).eids).toBeUndefined();
  });

  test("follows the eidkit tag's experiments: held-out sources leave the eids (ortb2 or userIdAsEids), the arms go as xp", () => {
    const xp = [
      { id: 'pubcid', arm: 'h', pct: 10, src: ['pubcid.org'], st: 1 },
      { id: 'other', arm: 'c', pct: 5, src: ['video.example'], st: 1 },
    ];
    const g = window as { __sasxp?: unknown };
    try {
      g.__sasxp = { out: ['pubcid.org'], xp };
      for (const br of [bidderRequest(), bidderRequest({ ortb2: {} })]) {
        const body = JSON.parse(
          spec.buildRequests([bid({ userIdAsEids: [{ ...eids[0], source: 'PubCID.org' }, eids[1]] })], br)[0].data,
        );
        expect(body.eids.map((e: { source: string }) => e.source)).toEqual(['video.example']);
        expect(body.xp).toEqual(xp);
        expect(body.user?.ext?.eids).toBeUndefined();
      }
      // Arms not known yet (consent still being read): every declared source stays out, no xp.
      g.__sasxp = { out: ['pubcid.org', 'video.example'] };
      const body = JSON.parse(spec.buildRequests([bid()], bidderRequest())[0].data);
      expect(body.eids).toEqual([]);
      expect(body).not.toHaveProperty('xp');
    } finally {
      delete g.__sasxp;
    }
    // No tag on the page: the eids as Prebid gave them, no xp.
    const body = JSON.parse(spec.buildRequests([bid()], bidderRequest())[0].data);
    expect(body.eids).toEqual(eids);
    expect(body).not.toHaveProperty('xp');
  });

  test('leaves out every value holding a raw email: the page URL, the referrer, a keyword, an id', () => {
    const email = 'Jane.Doe%40Example.com';
    const [r] = spec.buildRequests(
      [bid({ userIdAsEids: [{ source: 'x.example', uids: [{ id: 'jane@example.com' }, { id: 'ok' }] }] })],
      bidderRequest({
        ortb2: {
          site: {
            page: `https://pub.example/welcome?email=${email}`,
            ref: 'https://mail.example/u/jane%2540example.com',
            domain: 'pub.example',
            keywords: 'news,jane.doe@example.com',
          },
        },
        refererInfo: { page: `https://pub.example/welcome?email=${email}` },
      }),
    );
    expect(r.data.toLowerCase()).not.toMatch(/jane(\.doe)?(@|%40|%2540)/);
    const body = JSON.parse(r.data);
    expect(body.page).toBeUndefined();
    expect(body.site).toEqual({ domain: 'pub.example' });
    expect(body.eids).toEqual([{ source: 'x.example', uids: [{}, { id: 'ok' }] }]);
    // Everything else as before.
    expect(body).toMatchObject({ networkId: 1234, gdpr_consent: 'CPX' });
  });

  test('sends the page URL and the first-party data as Prebid gave them when they hold no email', () => {
    const [r] = spec.buildRequests([bid()], bidderRequest());
    expect(JSON.parse(r.data)).toMatchObject({
      page: 'https://pub.example/a',
      site: { page: 'https://pub.example/a' },
    });
  });

  test('a floors module that throws costs the floor, not the request', () => {
    const [r] = spec.buildRequests(
      [
        bid({
          getFloor: () => {
            throw new Error('x');
          },
        }),
      ],
      bidderRequest(),
    );
    expect(JSON.parse(r.data).units[0].floor).toBeUndefined();
  });

  test('bids for two ad servers make two requests', () => {
    const reqs = spec.buildRequests(
      [bid(), bid({ bidId: 'b2', params: { ...params, domain: 'https://other.example' } })],
      bidderRequest(),
    );
    expect(reqs.map((r) => r.url)).toEqual(['https://ads.example.com/prebid/v1', 'https://other.example/prebid/v1']);
  });
});

describe('interpretResponse', () => {
  test('turns the answer into Prebid bids with the deal id', () => {
    const bids = spec.interpretResponse({
      body: {
        bids: [
          {
            requestId: 'b1',
            cpm: 2.5,
            width: 300,
            height: 250,
            ad: '<b>ad</b>',
            creativeId: 'c1',
            dealId: 'D-1',
            mediaType: 'banner',
            meta: { advertiserDomains: ['adv.example'] },
          },
        ],
      },
    });
    expect(bids).toEqual([
      {
        requestId: 'b1',
        cpm: 2.5,
        currency: 'EUR',
        width: 300,
        height: 250,
        ad: '<b>ad</b>',
        ttl: 300,
        creativeId: 'c1',
        netRevenue: true,
        dealId: 'D-1',
        mediaType: 'banner',
        meta: { advertiserDomains: ['adv.example'] },
      },
    ]);
  });

  test('an empty or broken answer gives no bid and a log line, never an exception', () => {
    const log = vi.fn();
    const s = createSpec({ log });
    for (const body of [
      undefined,
      '',
      'not json',
      { bids: 'x' },
      { bids: [null, 3, { requestId: 'b1', cpm: 0, ad: 'x' }, { cpm: 1, ad: 'x' }] },
    ]) {
      expect(s.interpretResponse({ body })).toEqual([]);
    }
    expect(s.interpretResponse(undefined)).toEqual([]);
    expect(log).toHaveBeenCalledTimes(9);
  });
});

describe('getUserSyncs', () => {
  const responses = [
    {
      body: {
        bids: [],
        syncs: [
          { type: 'iframe', url: 'https://ads.example.com/sync' },
          { type: 'image', url: 'https://ads.example.com/px?a=1' },
        ],
      },
    },
  ];
  test('returns the enabled syncs with the consent parameters', () => {
    const syncs = spec.getUserSyncs(
      { iframeEnabled: true, pixelEnabled: false },
      responses,
      { gdprApplies: true, consentString: 'CPX' },
      '1YNN',
      { gppString: 'DBA', applicableSections: [2] },
    );
    expect(syncs).toEqual([
      { type: 'iframe', url: 'https://ads.example.com/sync?gdpr=1&gdpr_consent=CPX&gpp=DBA&gpp_sid=2&us_privacy=1YNN' },
    ]);
    const px = spec.getUserSyncs(
      { iframeEnabled: false, pixelEnabled: true },
      responses,
      undefined,
      undefined,
      undefined,
    );
    expect(px).toEqual([{ type: 'image', url: 'https://ads.example.com/px?a=1' }]);
  });
});

describe('beacons', () => {
  test('onBidWon fires the win notice with the price; onTimeout tells the ad server which bids timed out', () => {
    const sent: [string, unknown][] = [];
    Object.defineProperty(navigator, 'sendBeacon', {
      configurable: true,
      value: (u: string, b?: unknown) => {
        sent.push([u, b]);
        return true;
      },
    });
    spec.onBidWon({ nurl: 'https://ads.example.com/won?p=${AUCTION_PRICE}', cpm: 2.5 });
    spec.onTimeout([{ bidId: 'b1', adUnitCode: 'top', timeout: 1000, params: [params] }]);
    expect(sent[0]).toEqual(['https://ads.example.com/won?p=2.5', undefined]);
    expect(sent[1][0]).toBe('https://ads.example.com/prebid/v1/timeout');
    expect(JSON.parse(sent[1][1] as string)).toEqual({ bidId: 'b1', adUnitCode: 'top', timeout: 1000 });
  });
});

describe('register', () => {
  test('registers the spec under its code with GVL id 45 unless another is given', () => {
    const calls: unknown[][] = [];
    const pbjs = { registerBidAdapter: (...a: unknown[]) => calls.push(a), getConfig: () => true };
    const s = register(pbjs);
    expect(calls[0]).toEqual([null, 'eidkit', s]);
    expect(s.gvlid).toBe(45);
    expect(register(pbjs, { code: 'eidkit2', gvlid: 999 }).gvlid).toBe(999);
    expect(calls[1][1]).toBe('eidkit2');
  });

  test("logs through the console only in Prebid's debug mode", () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    let debug = false;
    const s = register({ registerBidAdapter: () => {}, getConfig: () => debug });
    s.interpretResponse({ body: '' });
    expect(warn).not.toHaveBeenCalled();
    debug = true;
    s.interpretResponse({ body: '' });
    expect(warn).toHaveBeenCalledWith(expect.stringMatching(/^WARNING: eidkit: /));
    warn.mockRestore();
  });
});
