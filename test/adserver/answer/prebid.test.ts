import { describe, expect, test } from 'vitest';
import { parseAdCall, prebidBidResponse } from '../../../src/adserver/index.js';
import { createSpec } from '../../../src/prebid/index.js';

const call = parseAdCall({
  url: '/prebid/v1',
  body: JSON.stringify({
    networkId: 1234,
    siteId: 1,
    pageId: 2,
    units: [
      { bidId: 'b1', adUnitCode: 'top', formatId: 3, banner: [[300, 250]] },
      {
        bidId: 'b2',
        adUnitCode: 'side',
        formatId: 4,
        banner: [
          [160, 600],
          [300, 600],
        ],
      },
      { bidId: 'b3', adUnitCode: 'player', formatId: 5, video: { context: 'instream' } },
    ],
  }),
});

describe('prebidBidResponse', () => {
  test("writes the body the adapter turns into Prebid bids, with the deal's dealId", () => {
    const body = prebidBidResponse(
      call,
      [
        {
          format: call.formats[0],
          cpm: 2.5,
          ad: '<div>Deal creative</div>',
          creativeId: 'c-1',
          dealId: 'DEAL-1',
          advertiserDomains: ['adv.example'],
        },
        { format: 'b2', cpm: 1, width: 300, height: 600, ad: '<i>x</i>', creativeId: 7, netRevenue: false },
        { format: 'b3', cpm: 4, vastXml: '<VAST version="4.0"/>', creativeId: 'v-1', ttl: 60 },
      ],
      { syncs: [{ type: 'image', url: 'https://ads.example/px' }] },
    );
    expect(body.syncs).toEqual([{ type: 'image', url: 'https://ads.example/px' }]);
    const bids = createSpec().interpretResponse({ body: JSON.parse(JSON.stringify(body)) });
    expect(bids).toEqual([
      {
        requestId: 'b1',
        cpm: 2.5,
        currency: 'EUR',
        width: 300,
        height: 250,
        ad: '<div>Deal creative</div>',
        ttl: 300,
        creativeId: 'c-1',
        netRevenue: true,
        dealId: 'DEAL-1',
        mediaType: 'banner',
        meta: { advertiserDomains: ['adv.example'] },
      },
      {
        requestId: 'b2',
        cpm: 1,
        currency: 'EUR',
        width: 300,
        height: 600,
        ad: '<i>x</i>',
        ttl: 300,
        creativeId: '7',
        netRevenue: false,
        mediaType: 'banner',
        meta: { advertiserDomains: [] },
      },
      {
        requestId: 'b3',
        cpm: 4,
        currency: 'EUR',
        vastXml: '<VAST version="4.0"/>',
        ttl: 60,
        creativeId: 'v-1',
        netRevenue: true,
        mediaType: 'video',
        meta: { advertiserDomains: [] },
      },
    ]);
  });

  test('no bids is an empty bids array', () => {
    expect(prebidBidResponse(call, [])).toEqual({ bids: [] });
  });

  test.each([
    ['an unknown placement', { format: 'nope' }, 'bids[0].format'],
    ['a format of another call', { format: { id: 3, impId: 'b1' } }, 'bids[0].format'],
    ['no price', { cpm: 0 }, 'bids[0].cpm'],
    ['both ad and vastXml', { vastXml: '<VAST/>' }, 'bids[0].ad'],
    ['no creative id', { creativeId: '' }, 'bids[0].creativeId'],
    ['an empty deal id', { dealId: '' }, 'bids[0].dealId'],
    ['no size for a placement with two', { format: 'b2' }, 'bids[0].width'],
  ])('refuses %s with a TypeError naming the field', (_name, over, path) => {
    const bid = { format: call.formats[0], cpm: 1, ad: '<b/>', creativeId: 'c', ...over };
    expect(() => prebidBidResponse(call, [bid as Parameters<typeof prebidBidResponse>[1][number]])).toThrow(
      new RegExp(`^prebidBidResponse: ${path.replace(/[[\]]/g, '\\$&')} `),
    );
  });

  test('refuses a call that did not come from the adapter (its formats have no impId)', () => {
    const get = parseAdCall({ url: '/ac?nwid=1&fmtid=3' });
    expect(() =>
      prebidBidResponse(get, [{ format: get.formats[0], cpm: 1, ad: '<b/>', width: 1, height: 1, creativeId: 'c' }]),
    ).toThrow(/has no impId/);
  });
});
