// The demo works end to end in Chromium, Firefox and WebKit: the page loads the tag from /tag/1234/sas.js, sets
// eids, and each call type reaches the demo ad server, which answers with the decoded eids and their providers.
import { expect, test } from './support/engines/fixture';
import { startDemoBehindProxy, stopDemo, type DemoHandle } from './support/demo';

let demo: DemoHandle;
test.beforeAll(async () => {
  demo = await startDemoBehindProxy();
});
test.afterAll(() => stopDemo(demo));
test.beforeEach(() => demo.proxy.clear());

test('the demo page sends every call type with the eids it set, and the server names the providers', async ({
  web: page,
}) => {
  await page.goto(demo.url);
  await page.click('#set-array');
  await expect.poll(() => page.text('#eids')).toContain('id5-sync.com');
  for (const type of ['std', 'video', 'generic', 'onecall']) {
    await page.click(`[data-call="${type}"]`);
    await expect.poll(() => page.text('#answer')).toContain(`${type} → 200`);
    const answer = await page.text('#answer');
    const json = JSON.parse(answer!.slice(answer!.indexOf('{')));
    expect(json.providers.map((p: { provider: { id: number } }) => p.provider.id)).toEqual([2, 1, 4, 5, 0]);
    expect(json.uid).toBe('publisher-user-42');
  }
  await page.click('#set-base64');
  await expect.poll(() => page.text('#eids')).not.toContain('uidapi.com');
  expect(await page.text('#eids')).toContain('liveramp.com');
  expect(await page.errors()).toEqual([]);
});

test('/ links to the report and the modules page; no page of the demo gets a 404 (favicon included)', async ({
  web: page,
}) => {
  await page.goto(demo.url);
  await page.click('a[href="/report"]');
  await page.waitForFunction(() => location.pathname === '/report');
  await page.goto(demo.url);
  await page.click('a[href="/modules/page.html"]');
  await page.waitForFunction(() => document.querySelector('h1')?.textContent === 'Provider modules');
  const missing = demo.proxy.requests
    .filter((r) => r.response && r.response.status >= 400)
    .map((r) => `${r.response!.status} ${r.path}`);
  expect(missing).toEqual([]);
  // Some engines ask every origin for /favicon.ico by themselves, some do not: ask as they would.
  const icon = await fetch(new URL('favicon.ico', demo.url));
  expect(icon.status).toBe(200);
  expect(icon.headers.get('content-type')).toMatch(/^image\//);
  expect(await page.errors()).toEqual([]);
});

test('cmp=ui shows a consent banner whose buttons record the choice in the real TCF CMP', async ({ web: page }) => {
  // The CMP's first event after the banner showed, kept in the page (one command at a time over WebDriver: a
  // pending evaluate would hold the click back).
  const listen = () =>
    page.evaluate(() => {
      const w = window as unknown as { __tcfapi: (...args: unknown[]) => void; tcEvent?: unknown };
      w.tcEvent = undefined;
      w.__tcfapi(
        'addEventListener',
        2,
        (d: { eventStatus: string; purpose: { consents: Record<number, boolean> } }, ok: boolean) => {
          if (ok && d.eventStatus !== 'cmpuishown' && !w.tcEvent)
            w.tcEvent = { eventStatus: d.eventStatus, purposeOne: Boolean(d.purpose.consents[1]) };
        },
      );
    });
  const tcEvent = () => page.waitForFunction(() => (window as unknown as { tcEvent?: unknown }).tcEvent);
  /** Clicks the banner's button labelled `name`. */
  const press = (name: string) =>
    page.evaluate(
      (label) =>
        [...document.querySelectorAll<HTMLButtonElement>('#demo-cmp-banner button')]
          .find((b) => b.textContent === label)!
          .click(),
      name,
    );
  await page.goto(new URL('modules/page.html?cmp=ui', demo.url).href);
  await page.waitForFunction(() => document.querySelector('#demo-cmp-banner')?.getClientRects().length);
  await listen();
  await press('Accept all');
  await expect.poll(() => page.count('#demo-cmp-banner')).toBe(0);
  expect(await tcEvent()).toEqual({ eventStatus: 'useractioncomplete', purposeOne: true });

  await page.goto(new URL('modules/page.html?cmp=ui', demo.url).href);
  await page.waitForFunction(() => !!document.querySelector('#demo-cmp-banner'));
  await listen();
  await press('Reject all');
  expect(await tcEvent()).toEqual({ eventStatus: 'useractioncomplete', purposeOne: false });
});

test('npm run demo prints the page, the report and the modules page URLs on startup', async () => {
  const { spawn } = await import('node:child_process');
  const child = spawn(process.execPath, [new URL('../../demo/server.mjs', import.meta.url).pathname], {
    env: { ...process.env, PORT: '0' },
  });
  try {
    let out = '';
    await new Promise<void>((done, fail) => {
      child.stdout.on('data', (d) => (out += d) && out.includes('modules/page.html') && done());
      child.on('exit', () => fail(new Error(`the demo exited: ${out}`)));
    });
    const base = /open (http:\/\/127\.0\.0\.1:\d+\/)/.exec(out)![1];
    expect(out).toContain(`${base}report`);
    expect(out).toContain(`${base}modules/page.html`);
  } finally {
    child.kill();
  }
});
