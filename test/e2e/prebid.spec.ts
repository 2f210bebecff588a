// Header bidding end to end in Chromium, Firefox and WebKit: demo/prebid/page.html runs the real prebid.js npm package
// (userId, SharedID, publisher-provided ids, the real TCF CMP) with the eidkit adapter, against the demo ad server,
// which parses the call with eidkit/adserver and answers through prebidBidResponse with a deal of the simulator.
import { expect, test, type EnginePage } from './support/engines/fixture';
// @ts-expect-error: plain JS demo helpers
import { demoDeal } from '../../demo/prebid/routes.mjs';
import { useFreshDemo } from './support/demo.js';
// @ts-expect-error: plain JS demo helpers
import { prebidNpmBundle } from '../../demo/prebid/npm-bundle.mjs';

interface Eid {
  source: string;
  uids: { id: string; atype?: number; ext?: Record<string, unknown> }[];
  inserter?: string;
  mm?: number;
  ext?: Record<string, unknown>;
}
interface Winner {
  adUnit: string;
  bidder?: string;
  cpm?: number;
  dealId?: string | null;
  mediaType?: string;
}

const demo = useFreshDemo(); // a fresh server per test: the report starts empty

// Bundling Prebid from its npm modules takes seconds (more on a loaded machine): do it once, before any page waits.
test.beforeAll(async () => {
  test.setTimeout(180_000);
  await prebidNpmBundle();
});

const deal = demoDeal() as { dealId: string; price: number };

/** Opens the page, waits for the auction to be rendered; returns the ad-server requests, winners and page errors. */
async function auction(page: EnginePage, query: string) {
  await page.goto(new URL('prebid/page.html' + query, demo().url).href);
  await page.waitForFunction(() => (window as unknown as { demoDone?: unknown }).demoDone, null, { timeout: 45_000 });
  const winners = (await page.evaluate(() => (window as unknown as { demoDone: unknown }).demoDone)) as Winner[];
  const prebidEids = (await page.evaluate(() =>
    (window as unknown as { pbjs: { getUserIdsAsEids(): unknown } }).pbjs.getUserIdsAsEids(),
  )) as Eid[];
  const requests = demo().proxy.requests;
  // Nothing left the loopback demo: every request the page made came through the recording proxy.
  const calls = requests.filter((r) => r.method === 'POST' && r.path === '/prebid/v1');
  const beacons = () => requests.filter((r) => r.path.startsWith('/prebid/v1/'));
  return { calls, beacons, winners, prebidEids, errors: await page.errors() };
}

/** The text of the creative rendered in `slot` (Prebid renders it two same-origin frames down). */
const creative = (page: EnginePage, slot: string) =>
  page.evaluate((id) => {
    const outer = document.querySelector<HTMLIFrameElement>(`#${id} iframe`);
    const inner = outer?.contentDocument?.querySelector('iframe') as HTMLIFrameElement | null;
    const el = inner?.contentDocument?.querySelector('#creative') as HTMLElement | null;
    return el ? { text: el.textContent ?? '', visible: el.getClientRects().length > 0 } : null;
  }, slot);

async function reportJson(): Promise<{
  rows: {
    calls: number;
    callsWithoutEids: number;
    extendedIds: { providerId: number; calls: number }[];
    hasDmpId?: Record<string, { with: number; without: number }>;
  }[];
  lastCalls: {
    endpoint: string;
    formats: { id: number; impId?: string }[];
    providerIds: number[];
    eids: { source: string; uids: unknown[] }[];
    bidRequests: { partner: { id: string }; request: { user?: { eids?: unknown } } }[];
  }[];
}> {
  return (await fetch(new URL('report.json', demo().url))).json();
}

for (const [form, query] of [
  ['the standalone adapter script', '?cmp=consent'],
  ['Prebid built from npm modules with eidkit/prebid', '?cmp=consent&build=npm'],
] as const) {
  test(`with ${form}, one request carries the three ad units and exactly Prebid's eids; the deal bid wins and renders`, async ({
    web: page,
  }) => {
    test.setTimeout(90_000);
    const { calls, beacons, winners, prebidEids, errors } = await auction(page, query);
    expect(calls).toHaveLength(1);
    const body = calls[0].json as any;
    expect(body.units.map((u: { adUnitCode: string }) => u.adUnitCode)).toEqual(['top', 'side', 'player']);
    expect(body.units[2].video).toMatchObject({ context: 'instream', mimes: ['video/mp4'], protocols: [2, 3, 5, 6] });
    expect(body.units[0].gpid).toBe('/1234/home/top');

    // The eids that reach the ad server are what Prebid's user id module built, every field.
    expect(prebidEids.map((e) => e.source)).toEqual(['pubcid.org', 'pub-device.example', 'crwdcntrl.net']);
    expect(body.eids).toEqual(prebidEids);
    const device = body.eids.find((e: Eid) => e.source === 'pub-device.example');
    expect(device).toEqual({
      source: 'pub-device.example',
      inserter: 'publisher.example',
      mm: 4,
      ext: { stype: 'ppuid' },
      uids: [{ id: 'device-7f3a', atype: 4, ext: { provider: 'publisher.example' } }],
    });
    expect(body.gdpr).toBe(1);
    expect(body.gdpr_consent).toMatch(/^C/);

    // The deal's bid wins its slot and its creative is what the slot shows.
    const top = winners.find((w) => w.adUnit === 'top')!;
    expect(top).toMatchObject({ bidder: 'eidkit', dealId: deal.dealId, cpm: deal.price, mediaType: 'banner' });
    await expect
      .poll(async () => (await creative(page, 'top'))?.text)
      .toMatch(new RegExp(`^eidkit demo creative: deal ${deal.dealId} .* in top$`));
    expect((await creative(page, 'top'))!.visible).toBe(true);
    await expect.poll(async () => (await creative(page, 'side'))?.text).toContain(deal.dealId);
    await expect.poll(() => page.text('#winners')).toContain(deal.dealId);

    // The receiving side parsed the same call: one prebid call, its providers counted.
    const report = await reportJson();
    expect(report.lastCalls).toHaveLength(1);
    const call = report.lastCalls[0];
    expect(call.endpoint).toBe('prebid');
    expect(call.formats.map((f) => f.id)).toEqual([11, 12, 13]);
    expect(call.providerIds).toEqual([0, 7, 17]);
    expect(call.eids.map((e) => e.source)).toEqual(['pubcid.org', 'pub-device.example', 'crwdcntrl.net']);
    expect(report.rows[0].calls).toBe(1);
    expect(report.rows[0].extendedIds.map((p) => [p.providerId, p.calls])).toEqual([
      [0, 1],
      [7, 1],
      [17, 1],
    ]);
    expect(report.rows[0].hasDmpId).toEqual({
      'dmp-uid2': { with: 0, without: 1 },
      'dmp-sharedid': { with: 1, without: 0 },
    });
    // …and forwarded them to the partners unchanged.
    expect(call.bidRequests.find((b) => b.partner.id === 'dsp-ortb26')!.request.user!.eids).toEqual(prebidEids);

    // The adapter's win notices reach the ad server with the price.
    await expect
      .poll(() => beacons().filter((b) => b.path.startsWith('/prebid/v1/won')).length)
      .toBeGreaterThanOrEqual(2);
    expect(beacons().find((b) => b.path.startsWith('/prebid/v1/won'))!.search).toContain(`price=${deal.price}`);
    expect(errors).toEqual([]);
  });
}

test('with the real TCF CMP refusing consent, no eids reach the ad server and nothing is stored', async ({
  web: page,
}) => {
  const { calls, winners, prebidEids, errors } = await auction(page, '?cmp=refuse');
  expect(prebidEids).toEqual([]);
  expect(calls).toHaveLength(1);
  const body = calls[0].json as any;
  expect(body.eids ?? []).toEqual([]);
  expect(calls[0].body).not.toMatch(/pubcid|device-7f3a|lotame-demo/);
  expect(body.gdpr).toBe(1);
  // The publisher let the bidder bid without consent (basicAds vendorException): the auction still runs.
  expect(winners.find((w) => w.adUnit === 'top')!.dealId).toBe(deal.dealId);
  expect(await page.evaluate(() => document.cookie)).not.toContain('_pubcid');
  const report = await reportJson();
  expect(report.lastCalls[0].eids).toEqual([]);
  expect(report.rows[0].callsWithoutEids).toBe(1);
  expect(errors).toEqual([]);
});

test('from a page on another origin, the credentialed cross-origin request is answered and the deal still wins', async ({
  web: page,
}) => {
  // localhost and 127.0.0.1 are two origins of the same demo server.
  const adServer = new URL(demo().url).origin;
  const pageUrl = new URL(demo().url);
  pageUrl.hostname = 'localhost';
  await page.goto(new URL('prebid/page.html?domain=' + encodeURIComponent(adServer), pageUrl).href);
  await page.waitForFunction(() => (window as unknown as { demoDone?: unknown }).demoDone, null, { timeout: 45_000 });
  const call = demo().proxy.requests.find((r) => r.method === 'POST' && r.path === '/prebid/v1')!;
  expect(call.headers.host).toBe(new URL(adServer).host);
  expect(call.headers.origin).toBe(pageUrl.origin);
  expect((call.json as { units: unknown[] }).units).toHaveLength(3);
  await expect.poll(async () => (await creative(page, 'top'))?.text).toContain(deal.dealId);
  expect(await page.errors()).toEqual([]);
});
