// Experiments (holdouts) end to end in Chromium, Firefox and WebKit: the operator's script for a network with an
// experiment (composeTag: the switch line, the core and the experiments add-on) on a publisher page that also runs
// the real prebid.js npm package with the eidkit adapter. A held-out browser never sends the held-out source, on GET,
// POST or the adapter's request; its arm survives reloads where storage is allowed; under a real TCF CMP that refuses
// storage, nothing is stored and the arms are per page view.
import { expect, test, type EnginePage } from './support/engines/fixture';
import { composeTag, parseNetworksConfig } from '../../dist/node/operator/index.js';
import { armOf } from '../../dist/node/core/index.js';
import { randomBytes } from 'node:crypto';
// @ts-expect-error: plain JS demo helpers
import { prebidNpmBundle } from '../../demo/prebid/npm-bundle.mjs';
import { tcfCmp } from './support/cmps';
import { useTestServer, type RecordedRequest } from './support/server';

const NETWORK = 5001;
const config = parseNetworksConfig({
  networks: { [NETWORK]: { modules: [], experiments: [{ id: 'id5', sources: ['id5-sync.com'], share: 50 }] } },
});

interface Entry {
  id: string;
  arm: 'h' | 'c';
  pct: number;
  src: string[];
  st: 0 | 1;
}

/** The page: the tag's three call types with the page's own eids, then a Prebid auction with the same ids. */
const page = (head = '') => `<!doctype html>
<html><head><meta charset="utf-8"><title>experiments</title>
${head}
<script>window.sas = window.sas || {}; sas.cmd = sas.cmd || []; window.pbjs = window.pbjs || { que: [] };</script>
<script async src="/tag/${NETWORK}/sas.js"></script>
<script async src="/prebid-npm.js"></script>
<script>
  var domain = location.origin;
  var ids = [
    { source: 'id5-sync.com', uids: [{ id: 'ID5-page', atype: 1 }] },
    { source: 'liveramp.com', uids: [{ id: 'LR-page', atype: 3 }] },
  ];
  sas.cmd.push(function () {
    sas.setup({ domain: domain, debug: true });
    sas.setEids(ids);
    var o = { siteId: 1, pageId: 2, formatId: 3 };
    Promise.all([sas.call('std', o), sas.call('generic', o), sas.call('onecall', o)]).then(function () {
      // The tag has decided this page's arms: the auction follows them.
      pbjs.que.push(function () {
        pbjs.setConfig({
          userSync: { userIds: [{ name: 'pubProvidedId', params: { eids: ids } }], syncDelay: 0, auctionDelay: 50 },
        });
        pbjs.requestBids({
          adUnits: [
            {
              code: 'top',
              mediaTypes: { banner: { sizes: [[300, 250]] } },
              bids: [{ bidder: 'eidkit', params: { networkId: ${NETWORK}, siteId: 1, pageId: 2, formatId: 3, domain: domain } }],
            },
          ],
          bidsBackHandler: function () { window.auctionDone = true; },
        });
      });
    });
  });
</script>
</head><body><div id="top"></div></body></html>`;

let cmp = '';
const server = useTestServer({
  tagScript: (nw, file) => composeTag(nw, config, { debug: file === 'sas.debug.js' }),
  routes: {
    '/prebid-npm.js': async () => ({ type: 'text/javascript', body: (await prebidNpmBundle()) as string }),
    'POST /prebid/v1': { type: 'application/json', body: { bids: [] } },
    '/cmp.js': () => ({ type: 'text/javascript', body: cmp }),
  },
  pages: {
    '/page.html': page(),
    '/refuse.html': page('<script src="/cmp.js" data-choice="refuse"></script>'),
    '/blank.html': '<!doctype html><title>blank</title>',
  },
});

test.beforeAll(async () => {
  test.setTimeout(180_000);
  cmp = await tcfCmp();
  await prebidNpmBundle();
});

/** A 32-hex-digit id whose arm in the experiment is `arm`. */
function xidIn(arm: 'h' | 'c'): string {
  for (;;) {
    const xid = randomBytes(16).toString('hex');
    if (armOf(xid, 'id5', 50) === arm) return xid;
  }
}

/** Stores `xid` as the tag stores it (a browser that already took part), on the page origin. */
async function seed(p: EnginePage, xid: string) {
  await p.goto(server().url + '/blank.html');
  await p.evaluate((v) => localStorage.setItem('_sas_xid', JSON.stringify({ v, e: Date.now() + 864e5 })), xid);
}

/** Loads `path`, waits for the three ad calls and the adapter's request of this page view; returns them. */
async function pageView(p: EnginePage, path: string, withBid = true) {
  server().clear();
  await p.goto(server().url + path);
  await p.waitForFunction(() => (window as unknown as { auctionDone?: boolean }).auctionDone, undefined, {
    timeout: 45_000,
  });
  const calls = await server().waitForAdCalls(3, 10_000);
  const bid = withBid
    ? await server().waitFor((r) => r.method === 'POST' && r.path === '/prebid/v1', 10_000)
    : undefined;
  return { calls, bid: bid! };
}

/** Every eid source a request carried, lowercased, and its `xp`. */
function carried(r: RecordedRequest): { sources: string[]; xp: Entry[] | undefined } {
  const eids = (r.path === '/prebid/v1' ? (r.json as { eids?: unknown }).eids : r.eids) as
    { source: string }[] | undefined;
  const xp =
    r.method === 'GET'
      ? r.query.xp === undefined
        ? undefined
        : (JSON.parse(Buffer.from(r.query.xp, 'base64url').toString('utf8')) as Entry[])
      : (r.json as { xp?: Entry[] }).xp;
  return { sources: (eids ?? []).map((e) => e.source.toLowerCase()).sort(), xp };
}

const storedXid = (p: EnginePage) =>
  p.evaluate(() => {
    const raw = localStorage.getItem('_sas_xid');
    return raw ? (JSON.parse(raw) as { v: string }).v : null;
  });

test('a held-out browser never sends the source: GET, POST and the Prebid adapter, on every page view', async ({
  page,
}) => {
  const xid = xidIn('h');
  await seed(page, xid);
  for (let view = 0; view < 2; view++) {
    const { calls, bid } = await pageView(page, '/page.html');
    expect(calls.map((c) => c.kind).sort()).toEqual(['generic', 'onecall', 'std/video']);
    for (const r of [...calls, bid]) {
      const { sources, xp } = carried(r);
      expect(sources, `${r.method} ${r.path}`).toEqual(['liveramp.com']);
      expect(xp).toEqual([{ id: 'id5', arm: 'h', pct: 50, src: ['id5-sync.com'], st: 1 }]);
    }
    // Kept: the same id after a reload.
    expect(await storedXid(page)).toBe(xid);
  }
});

test('a control browser sends the source, and says so', async ({ page }) => {
  await seed(page, xidIn('c'));
  const { calls, bid } = await pageView(page, '/page.html');
  for (const r of [...calls, bid]) {
    const { sources, xp } = carried(r);
    expect(sources, `${r.method} ${r.path}`).toEqual(['id5-sync.com', 'liveramp.com']);
    expect(xp).toEqual([{ id: 'id5', arm: 'c', pct: 50, src: ['id5-sync.com'], st: 1 }]);
  }
});

test('a new browser is assigned once, where storage is allowed: its arm survives reloads', async ({ page }) => {
  const first = await pageView(page, '/page.html');
  const xid = await storedXid(page);
  expect(xid).toMatch(/^[0-9a-f]{32}$/);
  const arm = armOf(xid!, 'id5', 50);
  for (const r of [...first.calls, first.bid]) expect(carried(r).xp).toEqual([expect.objectContaining({ arm, st: 1 })]);
  const again = await pageView(page, '/page.html');
  expect(await storedXid(page)).toBe(xid);
  for (const r of [...again.calls, again.bid]) {
    const { sources, xp } = carried(r);
    expect(xp).toEqual([expect.objectContaining({ arm, st: 1 })]);
    expect(sources.includes('id5-sync.com')).toBe(arm === 'c');
  }
});

test('without storage consent (a real TCF CMP, refused) nothing is stored, an old id is deleted, arms are per page view', async ({
  page,
}) => {
  await seed(page, xidIn('h'));
  // (Prebid's own TCF enforcement keeps its bidder's request away under a refusal: only the tag's calls are read.)
  const { calls } = await pageView(page, '/refuse.html', false);
  for (const r of calls) {
    const { sources, xp } = carried(r);
    // No legal basis: no eids at all; the arm still goes, marked as this page view's only.
    expect(sources).toEqual([]);
    expect(xp).toEqual([expect.objectContaining({ id: 'id5', st: 0 })]);
  }
  const storage = await page.evaluate(() => ({
    local: Object.keys(localStorage).filter((k) => k.startsWith('_sas')),
    cookie: document.cookie.includes('_sas_xid'),
  }));
  expect(storage).toEqual({ local: [], cookie: false });
});
