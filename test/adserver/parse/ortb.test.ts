// The receiving side reads every body shape of docs/wire-format.md: the Prebid adapter's POST /prebid/v1 and
// OpenRTB-shaped bodies (the video plugin, Prebid Server, other SSPs) on any POST endpoint.
import { describe, expect, test } from 'vitest';
import { buildBidRequest, endpointOf, parseAdCall, parseAdCallRequest } from '../../../src/adserver/index.js';
import { ID5, UID2 } from '../fixtures.js';

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  parseAdCall({
    url: `https://ads.example${path}`,
    method: 'POST',
    headers,
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

// The video plugin documents atype 4 and 5 for device ids.
const DEVICE4 = { source: 'video-ids.example', uids: [{ id: 'dev-4', atype: 4 }], inserter: 'player.example', mm: 4 };
const DEVICE5 = {
  source: 'ctv-ids.example',
  uids: [{ id: 'dev-5', atype: 5, ext: { os: 'tizen' } }],
  matcher: 'm.example',
  ext: { seg: [1, 2] },
};

describe("the video plugin's OpenRTB POST", () => {
  const body = {
    id: 'req-1',
    imp: [
      {
        id: 'imp-1',
        tagid: '44',
        video: { mimes: ['video/mp4'], protocols: [2, 3], w: 640, h: 360 },
        bidfloor: 1.2,
        bidfloorcur: 'EUR',
      },
    ],
    site: { id: '12', page: 'https://pub.example/watch', keywords: 'sport', publisher: { id: '1234' } },
    device: { ua: 'Mozilla/5.0 (SmartTV)' },
    user: { eids: [DEVICE4, DEVICE5, ID5] },
    regs: { gdpr: 1, gpp: 'DBA', gpp_sid: [2] },
  };

  test('an OpenRTB request posted to /openrtb2/auction (as to Prebid Server) is the openrtb endpoint, no issue', () => {
    const call = post('/openrtb2/auction', body);
    expect(call.endpoint).toBe('openrtb');
    expect(call.issues.filter((i) => i.path === 'url')).toEqual([]);
    expect(call.eids).toEqual([DEVICE4, DEVICE5, ID5]);
  });

  test('keeps user.eids with atype 4 and 5, inserter, matcher, mm and ext exactly as sent', () => {
    const call = post('/genericpost', body);
    expect(call.eids).toEqual([DEVICE4, DEVICE5, ID5]);
    expect(call.issues.every((i) => i.message.includes('atype') && i.message.includes('kept as sent'))).toBe(true);
  });

  test('reads network, site, page URL, keywords, user agent, consent and the imp as a format', () => {
    const call = post('/genericpost', body, { 'user-agent': 'upstream-server/1.0' });
    expect(call).toMatchObject({
      endpoint: 'genericpost',
      networkId: 1234,
      siteId: 12,
      target: 'sport',
      referer: 'https://pub.example/watch',
      userAgent: 'Mozilla/5.0 (SmartTV)',
    });
    expect(call.consent).toEqual({ gdpr: 1, gpp: 'DBA', gppSid: [2] });
    expect(call.formats).toEqual([
      { id: 44, tagId: '44', impId: 'imp-1', video: body.imp[0].video, floor: { value: 1.2, currency: 'EUR' } },
    ]);
  });

  test('its eids reach a partner bid request unchanged', () => {
    const req = buildBidRequest(post('/call', body), { id: 'dsp' });
    expect(req.user?.eids).toEqual([DEVICE4, DEVICE5, ID5]);
  });
});

describe('OpenRTB 2.5 and 2.6 bodies', () => {
  test('reads user.ext.eids and the 2.5 consent places (regs.ext, user.ext.consent)', () => {
    const call = post('/genericpost', {
      imp: [
        {
          id: '1',
          banner: {
            format: [
              { w: 300, h: 250 },
              { w: 728, h: 90 },
            ],
          },
        },
      ],
      user: { ext: { eids: [ID5], consent: 'CPX' } },
      regs: { ext: { gdpr: 1, us_privacy: '1YNN' } },
    });
    expect(call.eids).toEqual([ID5]);
    expect(call.consent).toEqual({ gdpr: 1, gdprConsent: 'CPX', usPrivacy: '1YNN' });
    expect(call.formats).toEqual([
      {
        id: 0,
        impId: '1',
        sizes: [
          [300, 250],
          [728, 90],
        ],
      },
    ]);
    expect(call.issues).toEqual([]);
  });

  test('with both places present user.eids (2.6) wins and user.ext.eids is named as ignored', () => {
    const call = post('/genericpost', { user: { eids: [UID2], ext: { eids: [ID5] } } });
    expect(call.eids).toEqual([UID2]);
    expect(call.issues).toEqual([{ path: 'user.ext.eids', message: 'ignored: user.eids is present and wins' }]);
  });

  test('issues inside the eids are named at the place they were read from', () => {
    const call = post('/genericpost', { user: { eids: [ID5, { source: '', uids: [{ id: 'x' }] }] } });
    expect(call.eids).toEqual([ID5]);
    expect(call.issues.map((i) => i.path)).toEqual(['user.eids[1].source']);
  });

  test.each([
    ['imp is not an array', { imp: 'x', user: { eids: [ID5] } }, 'imp'],
    ['user.eids is not an array', { user: { eids: { a: 1 } } }, 'user.eids'],
    ['an imp is not an object', { imp: [3], user: { eids: [ID5] } }, 'imp[0]'],
    ['a floor is not a price', { imp: [{ id: '1', bidfloor: -1 }], user: { eids: [ID5] } }, 'imp[0].bidfloor'],
    [
      'banner sizes are broken',
      { imp: [{ id: '1', banner: { format: [{ w: 'a' }] } }], user: { eids: [ID5] } },
      'imp[0].banner.format',
    ],
    ['a consent string is not text', { regs: { gdpr: 'yes' }, user: { consent: 5 } }, 'regs.gdpr'],
    ['the network id is not an id', { site: { publisher: { id: 'abc' } }, user: {} }, 'site.publisher.id'],
    ['user is not an object', { imp: [{ id: '1' }], user: 'alice' }, 'user'],
    ['regs is not an object', { imp: [{ id: '1' }], regs: [1] }, 'regs'],
    ['site.publisher is not an object', { site: { publisher: 'p' }, user: {} }, 'site.publisher'],
    ['device is not an object', { user: {}, device: 'phone' }, 'device'],
    ['user.ext is not an object', { user: { ext: 'x' } }, 'user.ext'],
    ['an imp ext is not an object', { imp: [{ id: '1', ext: 7 }] }, 'imp[0].ext'],
  ])('a broken body (%s) never fails the call and the issue names the field', (_name, body, path) => {
    const call = post('/genericpost', body);
    expect(call.issues.map((i) => i.path)).toContain(path);
    expect(call.endpoint).toBe('genericpost');
  });
});

describe('POST /prebid/v1 (the Prebid.js adapter)', () => {
  const body = {
    networkId: 1234,
    siteId: 1,
    pageId: 2,
    units: [
      {
        bidId: 'b1',
        adUnitCode: 'top',
        formatId: 3,
        gpid: '/1/top',
        banner: [[300, 250]],
        floor: { value: 1.5, currency: 'EUR' },
      },
      {
        bidId: 'b2',
        adUnitCode: 'player',
        formatId: 4,
        video: { context: 'instream', mimes: ['video/mp4'], playerSize: [[640, 480]] },
      },
    ],
    eids: [ID5, DEVICE4],
    gdpr: 1,
    gdpr_consent: 'CPX',
    addtl_consent: '1~2.3',
    gpp: 'DBA',
    gpp_sid: [2, 7],
    us_privacy: '1YNN',
    page: 'https://pub.example/article',
    schain: { ver: '1.0', complete: 1, nodes: [] },
  };

  test('is the prebid endpoint', () => {
    expect(endpointOf('/prebid/v1')).toBe('prebid');
    expect(endpointOf('/x/prebid/v1/')).toBe('prebid');
    expect(endpointOf('/prebid/v1/timeout')).toBe('unknown');
  });

  test('reads one format per ad unit, the eids, every consent field and the page', async () => {
    const call = await parseAdCallRequest(
      new Request('https://ads.example/prebid/v1', {
        method: 'POST',
        body: JSON.stringify(body),
        headers: { referer: 'https://pub.example/' },
      }),
    );
    expect(call).toMatchObject({
      endpoint: 'prebid',
      networkId: 1234,
      siteId: 1,
      pageId: '2',
      referer: 'https://pub.example/article',
    });
    expect(call.formats).toEqual([
      { id: 3, tagId: 'top', impId: 'b1', gpid: '/1/top', sizes: [[300, 250]], floor: { value: 1.5, currency: 'EUR' } },
      { id: 4, tagId: 'player', impId: 'b2', video: body.units[1].video },
    ]);
    expect(call.eids).toEqual([ID5, DEVICE4]);
    expect(call.consent).toEqual({
      gdpr: 1,
      gdprConsent: 'CPX',
      addtlConsent: '1~2.3',
      gpp: 'DBA',
      gppSid: [2, 7],
      usPrivacy: '1YNN',
    });
  });

  test('a unit without a format id is dropped with an issue; the others stay', () => {
    const call = post('/prebid/v1', { ...body, units: [{ bidId: 'b0', adUnitCode: 'x' }, body.units[0]] });
    expect(call.formats.map((f) => f.impId)).toEqual(['b1']);
    expect(call.issues).toContainEqual({ path: 'units[0].formatId', message: 'missing' });
  });

  test.each([
    ['user', { user: 'alice' }, 'user: must be an object; ignored'],
    ['site', { site: 42 }, 'site: must be an object; ignored'],
    ['schain', { schain: ['x'] }, 'schain: must be an object; ignored'],
    ['tmax', { tmax: 'soon' }, 'tmax: must be a positive integer of milliseconds; ignored'],
    ['a floor', { units: [{ ...body.units[0], floor: 1.5 }] }, 'units[0].floor: must be an object; ignored'],
  ])('a body whose %s is of the wrong kind is named, and the rest is read', (_name, broken, issue) => {
    const call = post('/prebid/v1', { ...body, ...broken });
    // DEVICE4's atype 4 is noted as kept: the only issue of the body as the adapter sends it.
    const others = call.issues.filter((i) => !i.path.startsWith('eids'));
    expect(others.map((i) => `${i.path}: ${i.message}`)).toEqual([issue]);
    expect(call).toMatchObject({ endpoint: 'prebid', networkId: 1234, eids: [ID5, DEVICE4] });
    expect(call.formats.length).toBeGreaterThanOrEqual(1);
  });

  test('first-party data, the supply chain and a timeout of the right kind bring no issue', () => {
    const call = post('/prebid/v1', { ...body, user: { keywords: 'a' }, site: { page: 'x' }, tmax: 800 });
    expect(call.issues.filter((i) => !i.path.startsWith('eids'))).toEqual([]);
  });

  test('a unit field the adapter never sends is named in an issue, not dropped in silence; the unit stays', () => {
    const unit = { bidId: 'b1', adUnitCode: 'top', formatId: 3, sizes: [[300, 250]] };
    const call = post('/prebid/v1', { ...body, units: [unit] });
    expect(call.formats).toEqual([{ id: 3, tagId: 'top', impId: 'b1' }]);
    expect(call.issues).toContainEqual({
      path: 'units[0].sizes',
      message:
        'unknown field; ignored (a unit has bidId, adUnitCode, formatId, siteId, pageId, gpid, banner, video, floor)',
    });
    const many = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`x${i}`, i]));
    const flood = post('/prebid/v1', { ...body, units: [{ ...unit, ...many }] });
    expect(flood.issues.filter((i) => i.path.startsWith('units[0]'))).toHaveLength(6);
    expect(flood.issues).toContainEqual({ path: 'units[0]', message: '36 more unknown fields ignored' });
  });

  test('a body that is not JSON is named and the call still parses', () => {
    const call = post('/prebid/v1', '{"units": [');
    expect(call).toMatchObject({ endpoint: 'prebid', formats: [], eids: [] });
    expect(call.issues).toEqual([{ path: 'body', message: 'not valid JSON; body ignored' }]);
  });
});
