// The guides' server examples that a browser calls, run as written (test/support/doc-example.ts) and called from real
// pages in Chromium, Firefox and WebKit: the tag's ad calls against the receiving path of docs/ad-server.md, a real
// Prebid.js with the eidkit adapter against the /prebid/v1 ad server of docs/tag.md. Both send the visitor's cookies,
// so the browser hands the page the answer only when the example's CORS policy names its origin.
import { expect, test, type EnginePage } from './support/engines/fixture';
import { publisherPage, startTestServer, type TestServer } from './support/server';
import { useFreshDemo } from './support/demo';
import { exampleAfter, startExample, type RunningExample } from '../support/doc-example';

/** What `sas.call` resolved to, as the page saw it. */
interface Result {
  ok: boolean;
  status: number;
  response?: string;
}

test.describe('docs/ad-server.md, the whole receiving path', () => {
  let example: RunningExample;
  let pages: TestServer;
  test.beforeEach(async () => {
    test.setTimeout(60_000);
    // The page's three ad calls, made once the tag has loaded; the results land in window.results.
    const page = () =>
      publisherPage({
        commands: `sas.setup({ domain: ${JSON.stringify(example.url)}, uid: 'user-1' });
sas.setEids([{ source: 'id5-sync.com', uids: [{ id: 'ID5*e2e', atype: 1 }] }]);
Promise.all([
  sas.call('std', { siteId: 1, pageId: 2, formatId: 3 }),
  sas.call('generic', { siteId: 1, pageId: 2, formatId: 3 }),
  sas.call('onecall', { siteId: 1, pageId: 2, formats: [{ id: 3, tagId: 'top' }] }),
]).then(function (r) { window.results = r; });`,
      });
    pages = await startTestServer({ routes: { '/page.html': page } });
    // Only the page's 127.0.0.1 origin is allowed; the same server as localhost is another origin.
    example = await startExample(exampleAfter('ad-server.md', 'The whole receiving path as one program'), {
      PAGE_ORIGINS: pages.url,
    });
  });
  test.afterEach(async () => {
    await example.stop();
    await pages.close();
  });

  const results = async (web: EnginePage, origin: string) => {
    await web.goto(`${origin}/page.html`);
    const found = await web.waitForFunction(() => (window as unknown as { results?: Result[] }).results, undefined, {
      timeout: 20_000,
    });
    return found ?? [];
  };

  test('an allowed page reads the answer of every ad call type', async ({ web }) => {
    const r = await results(web, pages.url);
    expect(r.map((x) => [x.ok, x.status])).toEqual([
      [true, 200],
      [true, 200],
      [true, 200],
    ]);
    for (const x of r) expect(JSON.parse(x.response!)).toEqual({ ads: [], deal: expect.any(Boolean), eids: 1 });
  });

  test('a page of another origin sends the calls but cannot read the answers', async ({ web }) => {
    const r = await results(web, pages.altUrl);
    expect(r.map((x) => [x.ok, x.status])).toEqual([
      [false, 0],
      [false, 0],
      [false, 0],
    ]);
    // The calls reached the example all the same: it logged one line per call.
    await expect.poll(() => example.stdout().split('\n').filter(Boolean).length).toBe(3);
  });
});

test.describe('docs/tag.md, the /prebid/v1 ad server', () => {
  const demo = useFreshDemo(); // the Prebid.js page and its scripts; the ad server is the guide's example
  let example: RunningExample;
  test.beforeEach(async () => {
    test.setTimeout(90_000);
    example = await startExample(exampleAfter('tag.md', 'The ad server side'), {
      PAGE_ORIGINS: new URL(demo().url).origin,
    });
  });
  test.afterEach(async () => {
    await example.stop();
  });

  /** The demo's Prebid.js page with the example as the bidder's `domain`: the winning bid of each ad unit. */
  const auction = async (web: EnginePage, pageOrigin: string) => {
    await web.goto(`${pageOrigin}/prebid/page.html?domain=${encodeURIComponent(example.url)}`);
    const found = await web.waitForFunction(
      () =>
        (window as unknown as { demoDone?: { adUnit: string; bidder?: string; dealId?: string | null }[] }).demoDone,
      undefined,
      { timeout: 45_000 },
    );
    return found ?? [];
  };

  test("an allowed page's Prebid.js gets the example's bids; the deal wins both banner slots", async ({ web }) => {
    const winners = await auction(web, new URL(demo().url).origin);
    expect(winners.filter((w) => w.bidder === 'eidkit').map((w) => [w.adUnit, w.dealId])).toEqual([
      ['top', 'EDK-1-016R2P2'],
      ['side', 'EDK-1-016R2P2'],
    ]);
  });

  test('a page of another origin gets no bid: the browser keeps the answer from Prebid.js', async ({ web }) => {
    const winners = await auction(web, demo().proxy.altUrl);
    expect(winners.filter((w) => w.bidder)).toEqual([]);
  });
});
