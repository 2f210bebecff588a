// End-to-end: the BUILT dist/sas.js, served at /tag/1234/sas.js, in Chromium, Firefox and WebKit, against a local
// server that records every request.
import { expect, test, type EnginePage } from './support/engines/fixture';
import { publisherPage, useTestServer } from './support/server';

const server = useTestServer();

/** Loads a publisher page whose queued commands run `commands` after `sas.setup({ domain })`. */
async function open(page: EnginePage, commands: string, opts: { path?: string; head?: string; query?: string } = {}) {
  const path = opts.path ?? `/p${Math.random().toString(36).slice(2)}`;
  server().page(
    path,
    publisherPage({ head: opts.head, commands: `sas.setup({ domain: location.origin });\n${commands}` }),
  );
  await page.goto(server().url + path + (opts.query ?? ''));
  await page.waitForFunction(() => (window as unknown as { sas: { version?: string } }).sas.version !== undefined);
}

const EIDS = [
  { source: 'id5-sync.com', uids: [{ id: 'ID5*abc', atype: 1, ext: { linkType: 2, abTestingControlGroup: false } }] },
  { source: 'liveramp.com', uids: [{ id: 'XY1000bIVBVah9ium', atype: 3 }] },
  { source: 'example.org', uids: [{ id: 'ünïcödé ✓' }] },
];

test('runs commands queued before load in order, then a push after load at once', async ({ web: page }) => {
  server().page(
    '/order',
    publisherPage({
      head: `<script>window.order = []; sas.cmd.push(function () { order.push(1) }); sas.cmd.push(function () { order.push(2) });</script>`,
      commands: 'order.push(3)',
    }),
  );
  await page.goto(server().url + '/order');
  await page.waitForFunction(() => (window as unknown as { order: number[] }).order.length === 3);
  expect(await page.evaluate(() => (window as unknown as { order: number[] }).order)).toEqual([1, 2, 3]);
  const after = await page.evaluate(() => {
    const w = window as unknown as { order: number[]; sas: { cmd: { push(f: () => void): number } } };
    const count = w.sas.cmd.push(() => w.order.push(4));
    return { sync: w.order.slice(), count };
  });
  expect(after).toEqual({ sync: [1, 2, 3, 4], count: 4 });
  expect(await page.errors()).toEqual([]);
});

test('a throwing command does not stop the next one and raises no pageerror', async ({ web: page }) => {
  await open(page, `sas.call('std', { siteId: 1, pageId: 2, formatId: 3 });`, {
    head: `<script>sas.cmd.push(function () { throw new Error('publisher bug') }); sas.cmd.push(async function () { throw new Error('async bug') }); sas.cmd.push(42);</script>`,
  });
  await server().waitForAdCalls(1);
  await new Promise((r) => setTimeout(r, 100));
  expect(await page.errors()).toEqual([]);
});

test('GET std and video calls carry eids that decode to sas.getEids()', async ({ web: page }) => {
  await open(
    page,
    `sas.setup({ uid: 'publisher-7' });
     sas.setEids(${JSON.stringify(EIDS)});
     sas.call('std', { siteId: 11, pageId: 22, formatId: 33, target: 'a=1' });
     sas.call('video', { siteId: 11, pageId: 22, formatId: 44 });`,
  );
  const calls = await server().waitForAdCalls(2);
  const expected = await page.evaluate(() => (window as unknown as { sas: { getEids(): unknown } }).sas.getEids());
  expect(expected).toEqual(EIDS);
  for (const c of calls) {
    expect(c.method).toBe('GET');
    expect(c.path).toBe('/ac');
    expect(c.query).toMatchObject({ nwid: '1234', siteid: '11', pgid: '22', uid: 'publisher-7' });
    expect(c.query.eids).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(c.eids).toEqual(expected);
  }
  // Two requests in flight race to the server (each on its own connection): one of each, in either order.
  expect(calls.map((c) => c.query.fmtid).sort()).toEqual(['33', '44']);
  expect(await page.errors()).toEqual([]);
});

test('generic and onecall POST bodies carry the same eids array', async ({ web: page }) => {
  await open(
    page,
    `sas.setEids(${JSON.stringify(EIDS)});
     sas.call('generic', { siteId: 1, pageId: 2, formatId: 3, target: { sport: 'ski' } });
     sas.call('onecall', { siteId: 1, pageId: 2, formats: [{ id: 3, tagId: 'top' }, { id: 4, tagId: 'side' }] });`,
  );
  // The two calls race: pick each by kind, not by arrival order.
  const calls = await server().waitForAdCalls(2);
  const generic = calls.find((c) => c.kind === 'generic')!;
  const onecall = calls.find((c) => c.kind === 'onecall')!;
  const expected = await page.evaluate(() => (window as unknown as { sas: { getEids(): unknown } }).sas.getEids());
  expect(generic).toMatchObject({ method: 'POST', path: '/genericpost' });
  expect(generic.json).toMatchObject({
    networkId: 1234,
    siteId: 1,
    pageId: 2,
    formatId: 3,
    target: 'sport=ski',
    eids: expected,
  });
  expect(onecall).toMatchObject({ method: 'POST', path: '/call' });
  expect(onecall.json).toMatchObject({
    networkId: 1234,
    formats: [
      { id: 3, tagId: 'top' },
      { id: 4, tagId: 'side' },
    ],
    eids: expected,
  });
  // A CORS-simple request: no preflight before the ad call.
  expect(server().requests.filter((r) => r.method === 'OPTIONS')).toEqual([]);
});

test('malformed inputs raise no pageerror and the calls still go out valid', async ({ web: page }) => {
  await open(
    page,
    `var cyclic = { source: 'criteo.com' }; cyclic.uids = [{ id: 'c', ext: cyclic }];
     var trap = {}; Object.defineProperty(trap, 'source', { get: function () { throw new Error('getter') } });
     var many = []; for (var i = 0; i < 10000; i++) many.push({ source: 's' + i + '.example', uids: [{ id: 'id-' + i }] });
     [null, undefined, 0, 42, NaN, 'x', '%%%not-base64%%%', {}, [null, 7], [cyclic], [trap], many].forEach(function (v) { sas.setEids(v) });
     sas.setup(null); sas.setup(trap); sas.call(null); sas.call('nope', 5);
     sas.setEids([trap, cyclic, { source: 'pubcid.org', uids: [{ id: 'p1' }] }, 12]);
     sas.call('std', { siteId: {}, pageId: [], formatId: null, target: cyclic });
     sas.call('generic', trap);`,
  );
  const calls = await server().waitForAdCalls(2);
  // The two calls race: pick each by kind, not by arrival order (under load the POST can arrive first).
  const get = calls.find((c) => c.kind === 'std/video')!;
  const post = calls.find((c) => c.kind === 'generic')!;
  expect(get.eids).toEqual([{ source: 'pubcid.org', uids: [{ id: 'p1' }] }]);
  expect((post.json as { eids: unknown }).eids).toEqual([{ source: 'pubcid.org', uids: [{ id: 'p1' }] }]);
  // 10,000 eids: validation keeps 1,000; the GET above still went out (with what fits).
  await page.evaluate(() => {
    const w = window as unknown as { sas: { setEids(v: unknown): void; call(t: string, o: object): Promise<unknown> } };
    const many = Array.from({ length: 10000 }, (_, i) => ({ source: `s${i}.example`, uids: [{ id: `id-${i}` }] }));
    w.sas.setEids(many);
    return w.sas.call('std', {});
  });
  const [, , big] = await server().waitForAdCalls(3);
  expect(server().url.length + big.path.length + big.search.length + 1).toBeLessThan(8000);
  expect((big.eids as unknown[]).length).toBeGreaterThan(10);
  expect(await page.errors()).toEqual([]);
});

test('a GET URL stays under 8,000 characters: unknown sources go first, then the largest, with a debug warning', async ({
  web: page,
}) => {
  const big = (source: string, n: number) => ({ source, uids: [{ id: 'x'.repeat(n) }] });
  await open(
    page,
    `sas.setEids(${JSON.stringify([big('criteo.com', 3000), big('unknown.example', 1000), big('id5-sync.com', 3500), big('pubcid.org', 500)])});
     sas.call('std', { siteId: 1, pageId: 2, formatId: 3 });`,
    { query: '?sas_debug=1' },
  );
  const [call] = await server().waitForAdCalls(1);
  const url = `${server().url}${call.path}?${call.search}`;
  expect(url.length).toBeLessThan(8000);
  expect((call.eids as { source: string }[]).map((e) => e.source)).toEqual(['criteo.com', 'pubcid.org']);
  expect((await page.consoleLines()).join('\n')).toMatch(/\[sas\].*left out eids of.*unknown\.example.*id5-sync\.com/);
});

test('loading the script twice is harmless: commands run once, one call per request', async ({ web: page }) => {
  await open(
    page,
    `window.runs = (window.runs || 0) + 1; sas.setEids(${JSON.stringify(EIDS)}); sas.call('std', { siteId: 1 });`,
    {
      head: '<script async src="/tag/1234/sas.js?copy=2"></script>',
    },
  );
  await new Promise((r) => setTimeout(r, 300));
  expect(await page.evaluate(() => (window as unknown as { runs: number }).runs)).toBe(1);
  expect(server().adCalls()).toHaveLength(1);
  expect(server().requests.filter((r) => r.path === '/tag/1234/sas.js')).toHaveLength(2);
  expect(server().adCalls()[0].eids).toEqual(EIDS);
  // A second copy that re-initialised would have forgotten the page's eids.
  await page.evaluate(() =>
    (window as unknown as { sas: { call(t: string, o: object): Promise<unknown> } }).sas.call('std', {}),
  );
  expect(server().adCalls()[1].eids).toEqual(EIDS);
  expect(await page.errors()).toEqual([]);
});

test('ad calls carry the ad server cookie, also from another origin', async ({ web: page }) => {
  await open(page, `sas.call('std', {}).then(function () { sas.call('generic', {}) });`);
  const [first, second] = await server().waitForAdCalls(2);
  expect(first.cookies.pid).toBeUndefined();
  expect(second.cookies.pid).toMatch(/^test-pid-/);

  // Cross-origin: page on localhost, ad server on 127.0.0.1; CORS with credentials lets the page read the answer.
  server().page(
    '/cross',
    publisherPage({
      commands: `sas.setup({ domain: ${JSON.stringify(server().url)} }); sas.call('onecall', { formats: [{ id: 1 }] }).then(function (r) { window.result = r })`,
    }),
  );
  await page.goto(server().altUrl + '/cross');
  const result = await page.waitForFunction(() => (window as unknown as { result?: unknown }).result);
  expect(result).toMatchObject({ ok: true, status: 200 });
  const cross = server().adCalls().at(-1)!;
  expect(cross.headers.origin).toBe(server().altUrl);
});

test('is silent without debug mode and logs with a [sas] prefix with ?sas_debug=1', async ({ web: page }) => {
  await open(page, `sas.setEids([{ source: '', uids: [] }]); sas.call('std', {});`);
  await server().waitForAdCalls(1);
  expect(await page.consoleLines()).toEqual([]);
  await open(page, `sas.setEids([{ source: '', uids: [] }]); sas.call('std', {});`, { query: '?sas_debug=1' });
  await server().waitForAdCalls(2);
  const lines = await page.consoleLines();
  expect(lines.length).toBeGreaterThan(0);
  expect(lines.every((l) => l.startsWith('[sas]'))).toBe(true);
  expect((await page.consoleLines()).join('\n')).toMatch(/source must be a non-empty string/);
});
