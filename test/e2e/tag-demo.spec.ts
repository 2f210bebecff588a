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
