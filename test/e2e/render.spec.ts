// End-to-end: the render add-on (dist/addons/render.js) beside the BUILT dist/sas.js: a one-call answer's ads go
// into friendly iframes in their tagId elements, in real Chromium, against the recording server.
import { expect, test } from '@playwright/test';
import { publisherPage, useTestServer } from './support/server';

const server = useTestServer({
  adResponse: (req) => ({
    body: {
      ads: [
        {
          tagId: 'banner',
          formatId: 3,
          width: 300,
          height: 250,
          // The creative's own script runs in the iframe and reaches its parent, as friendly-iframe creatives do.
          html: `<div id="creative">Ad for ${req.kind}</div><script>document.getElementById('creative').dataset.ran = String(parent.location.host === location.host);</script>`,
        },
        { tagId: 'missing', html: '<b>nowhere</b>' },
      ],
    },
  }),
});

test('sas.call(...).then(sas.render) shows each ad of the answer in a friendly iframe in its tagId element', async ({ page }) => {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  server().page(
    '/render',
    publisherPage({
      head: '<script src="/dist/addons/render.js"></script>',
      body: '<div id="banner">placeholder</div>',
      commands: `sas.setup({ domain: location.origin });
        sas.call('onecall', { siteId: 1, pageId: 2, formats: [{ id: 3, tagId: 'banner' }] })
          .then(function (r) { window.outcomes = sas.render(r); });`,
    }),
  );
  await page.goto(server().url + '/render');
  await page.waitForFunction(() => (window as unknown as { outcomes?: unknown }).outcomes !== undefined);
  expect(await page.evaluate(() => (window as unknown as { outcomes: unknown }).outcomes)).toEqual([
    { tagId: 'banner', ok: true },
    { tagId: 'missing', ok: false, reason: 'no element with id "missing" on the page' },
  ]);
  const frame = page.locator('#banner iframe');
  await expect(frame).toHaveCount(1);
  expect(await frame.evaluate((f: HTMLIFrameElement) => [f.getBoundingClientRect().width, f.getBoundingClientRect().height])).toEqual([300, 250]);
  const creative = page.frameLocator('#banner iframe').locator('#creative');
  await expect(creative).toHaveText('Ad for onecall');
  await expect(creative).toHaveAttribute('data-ran', 'true');
  await expect(page.locator('#banner')).not.toContainText('placeholder');
  expect(errors).toEqual([]);
});
