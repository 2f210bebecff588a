// The header-bidding demo, mounted by demo/server.mjs on its hono app:
//   /prebid/page.html           a publisher page running a real Prebid.js with the eidkit adapter
//   /prebid/prebid.js           Prebid.js from the npm package: userId + SharedID + publisher-provided ids + TCF
//   /prebid/eidkit-adapter.js   the built standalone adapter (dist/prebid/, `npm run build` first)
// /prebid/prebid-npm.js       Prebid.js built from its npm modules with `register` from eidkit/prebid
// (page.html?build=npm)
//   POST /prebid/v1             the ad server: parsed and recorded by eidkit/adserver (report, providers, bid
//                               requests), answered through prebidBidResponse with a deal from the deal API simulator
//   POST /prebid/v1/timeout, /prebid/v1/won, /prebid/v1/sync   the adapter's beacons and user sync
import { readFile } from 'node:fs/promises';
import { prebidBidResponse } from '../../dist/node/adserver/index.js';
import { createDealApiSimulator } from '../../dist/node/simulator/index.js';
import { prebidBundle } from '../modules/prebid-bundle.mjs';
import { prebidNpmBundle } from './npm-bundle.mjs';

const dir = new URL('./', import.meta.url);
const dist = new URL('../../dist/prebid/', import.meta.url);

/** The Prebid.js modules the demo page runs. */
export const PREBID_MODULES = ['userId', 'sharedIdSystem', 'pubProvidedIdSystem', 'consentManagementTcf', 'tcfControl'];

/**
 * The deal the demo ad server bids with: the first active, priced deal of the simulator's seeded company (EUR
 * first), so the auction shows where the deal API's cross-platform `dealId` meets Prebid.
 */
export function demoDeal() {
  const deals = createDealApiSimulator({ seed: { deals: 12, seed: 7 } }).deals();
  const priced = deals.filter((d) => d.isActive && d.price > 0);
  return priced.find((d) => d.currency === 'EUR') ?? priced[0];
}

/** What the demo ad server bids for each placement of a Prebid call: the deal on banners, an open bid on video. */
function bidsFor(call, deal, origin) {
  return call.formats.map((f) => {
    if (f.video) {
      return {
        format: f,
        cpm: 1.1,
        currency: 'EUR',
        vastXml: `<VAST version="4.0"><Ad id="demo"><InLine><AdSystem>eidkit demo</AdSystem><AdTitle>Demo video</AdTitle><Creatives></Creatives></InLine></Ad></VAST>`,
        creativeId: 'demo-video',
        advertiserDomains: ['advertiser.example'],
      };
    }
    const [w, h] = f.sizes?.[0] ?? [300, 250];
    const ad = `<!doctype html><body style="margin:0;font:14px sans-serif"><div id="creative" style="width:${w - 12}px;height:${h - 12}px;padding:6px;background:#e8f0fe;border:0">eidkit demo creative: deal ${deal.dealId} (${escapeHtml(deal.name)}) in ${escapeHtml(f.tagId ?? '')}</div></body>`;
    return {
      format: f,
      cpm: deal.price,
      currency: deal.currency,
      width: w,
      height: h,
      ad,
      creativeId: `demo-${f.tagId}`,
      dealId: deal.dealId,
      advertiserDomains: ['advertiser.example'],
      nurl: `${origin}/prebid/v1/won?deal=${encodeURIComponent(deal.dealId)}&price=\${AUCTION_PRICE}`,
    };
  });
}

const escapeHtml = (s) => String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * Adds the header-bidding routes to the demo's hono `app`; `adserver` is the demo's receiving side
 * (demo/report.mjs), so Prebid calls land in the same report as the tag's. `beacons` collects the adapter's
 * win and timeout beacons (the e2e tests read them).
 */
export function mountPrebidDemo(app, adserver, { print = () => {}, beacons = [] } = {}) {
  const deal = demoDeal();
  const js = () => ({ 'Content-Type': 'text/javascript; charset=utf-8', 'Cache-Control': 'no-store' });
  app.get('/prebid/page.html', async (c) => c.html(await readFile(new URL('page.html', dir), 'utf8')));
  app.get('/prebid/prebid.js', (c) => c.body(prebidBundle(PREBID_MODULES), 200, js()));
  app.get('/prebid/prebid-npm.js', async (c) => c.body(await prebidNpmBundle(), 200, js()));
  app.get('/prebid/:file{eidkit-adapter(\\.debug)?\\.js}', async (c) =>
    c.body(await readFile(new URL(c.req.param('file'), dist), 'utf8'), 200, js()),
  );
  app.post('/prebid/v1', async (c) => {
    const request = c.req.raw;
    const { call, entry, setCookie } = await adserver.recordAdCall(request, {
      ip: c.env?.incoming?.socket?.remoteAddress,
    });
    print(
      `POST /prebid/v1 network ${call.networkId ?? '?'}: ${call.formats.length} ad units, ${call.eids.length} eids (${entry.eids.map((e) => e.source).join(', ') || 'none'})`,
    );
    const origin = new URL(request.url).origin;
    const body = prebidBidResponse(call, bidsFor(call, deal, origin), {
      syncs: [{ type: 'image', url: `${origin}/prebid/v1/sync` }],
    });
    // CORS: the demo's allow-list policy (corsMiddleware on /prebid/v1 in demo/server.mjs).
    const headers = { 'Cache-Control': 'no-store' };
    if (setCookie) headers['Set-Cookie'] = setCookie;
    return c.json(body, 200, headers);
  });
  for (const kind of ['won', 'timeout', 'sync']) {
    app.on(['GET', 'POST'], `/prebid/v1/${kind}`, async (c) => {
      beacons.push({ kind, url: c.req.url, body: c.req.method === 'POST' ? await c.req.text() : undefined });
      return c.body(null, 204);
    });
  }
  return { deal, beacons };
}
