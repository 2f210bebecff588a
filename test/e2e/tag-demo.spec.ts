// The demo works end to end: the page loads the tag from /tag/1234/sas.js, sets eids, and each call type reaches
// the demo ad server, which answers with the decoded eids and their providers.
import { expect, test } from '@playwright/test';
// @ts-expect-error: plain JS demo server
import { startDemo } from '../../demo/server.mjs';

let demo: { url: string; server: { close(cb: () => void): void; closeAllConnections(): void } };
test.beforeAll(async () => {
  demo = await startDemo(0, { quiet: true });
});
test.afterAll(async () => {
  demo.server.closeAllConnections();
  await new Promise<void>((r) => demo.server.close(() => r()));
});

test('the demo page sends every call type with the eids it set, and the server names the providers', async ({ page }) => {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(demo.url);
  await page.click('#set-array');
  await expect(page.locator('#eids')).toContainText('id5-sync.com');
  for (const type of ['std', 'video', 'generic', 'onecall']) {
    await page.click(`[data-call="${type}"]`);
    await expect(page.locator('#answer')).toContainText(`${type} → 200`);
    const answer = await page.locator('#answer').textContent();
    const json = JSON.parse(answer!.slice(answer!.indexOf('{')));
    expect(json.providers.map((p: { provider: { id: number } }) => p.provider.id)).toEqual([2, 1, 4, 5, 0]);
    expect(json.uid).toBe('publisher-user-42');
  }
  await page.click('#set-base64');
  await expect(page.locator('#eids')).not.toContainText('uidapi.com');
  await expect(page.locator('#eids')).toContainText('liveramp.com');
  expect(errors).toEqual([]);
});

test('/ links to the report and the modules page; no page of the demo gets a 404 (favicon included)', async ({ page }) => {
  const missing: string[] = [];
  const consoleErrors: string[] = [];
  page.on('response', (r) => r.status() >= 400 && missing.push(`${r.status()} ${r.url()}`));
  page.on('console', (m) => m.type() === 'error' && consoleErrors.push(m.text()));
  await page.goto(demo.url);
  await page.click('a[href="/report"]');
  await expect(page).toHaveURL(/\/report$/);
  await page.goto(demo.url);
  await page.click('a[href="/modules/page.html"]');
  await expect(page.locator('h1')).toHaveText('Provider modules');
  expect(missing).toEqual([]);
  // A headed browser asks every origin for /favicon.ico by itself (headless Chromium does not): ask as it would.
  const icon = await page.request.get(new URL('favicon.ico', demo.url).href);
  expect(icon.status()).toBe(200);
  expect(icon.headers()['content-type']).toMatch(/^image\//);
  expect(consoleErrors).toEqual([]);
});

test('cmp=ui shows a consent banner whose buttons record the choice in the real TCF CMP', async ({ page }) => {
  const tcData = () =>
    page.evaluate(
      () =>
        new Promise<{ eventStatus: string; purposeOne: boolean }>((resolve) =>
          (window as unknown as { __tcfapi: Function }).__tcfapi('addEventListener', 2, (d: { eventStatus: string; purpose: { consents: Record<number, boolean> } }, ok: boolean) => {
            if (ok && d.eventStatus !== 'cmpuishown') resolve({ eventStatus: d.eventStatus, purposeOne: Boolean(d.purpose.consents[1]) });
          }),
        ),
    );
  await page.goto(new URL('modules/page.html?cmp=ui', demo.url).href);
  const banner = page.locator('#demo-cmp-banner');
  await expect(banner).toBeVisible();
  const answered = tcData();
  await banner.getByRole('button', { name: 'Accept all' }).click();
  await expect(banner).toHaveCount(0);
  expect(await answered).toEqual({ eventStatus: 'useractioncomplete', purposeOne: true });

  await page.goto(new URL('modules/page.html?cmp=ui', demo.url).href);
  const refused = tcData();
  await page.locator('#demo-cmp-banner').getByRole('button', { name: 'Reject all' }).click();
  expect(await refused).toEqual({ eventStatus: 'useractioncomplete', purposeOne: false });
});

test('npm run demo prints the page, the report and the modules page URLs on startup', async () => {
  const { spawn } = await import('node:child_process');
  const child = spawn(process.execPath, [new URL('../../demo/server.mjs', import.meta.url).pathname], { env: { ...process.env, PORT: '0' } });
  try {
    let out = '';
    await new Promise<void>((done, fail) => {
      child.stdout.on('data', (d) => (out += d) && /modules\/page\.html/.test(out) && done());
      child.on('exit', () => fail(new Error(`the demo exited: ${out}`)));
    });
    const base = /open (http:\/\/127\.0\.0\.1:\d+\/)/.exec(out)![1];
    expect(out).toContain(`${base}report`);
    expect(out).toContain(`${base}modules/page.html`);
  } finally {
    child.kill();
  }
});
