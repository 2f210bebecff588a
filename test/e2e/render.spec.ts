// End-to-end in Chromium, Firefox and WebKit: the render add-on (dist/addons/render.js) beside the BUILT
// dist/sas.js: a one-call answer's ads go into friendly iframes in their tagId elements.
import { expect, test } from './support/engines/fixture';
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
          html:
            `<div id="creative">Ad for ${req.kind}</div><script>document.getElementById('creative').dataset.ran = ` +
            `String(parent.location.host === location.host);</script>`,
        },
        { tagId: 'missing', html: '<b>nowhere</b>' },
      ],
    },
  }),
});

test('sas.call(...).then(sas.render) shows each ad of the answer in a friendly iframe in its tagId element', async ({
  web,
}) => {
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
  await web.goto(server().url + '/render');
  await web.waitForFunction(() => (window as unknown as { outcomes?: unknown }).outcomes !== undefined);
  expect(await web.evaluate(() => (window as unknown as { outcomes: unknown }).outcomes)).toEqual([
    { tagId: 'banner', ok: true },
    { tagId: 'missing', ok: false, reason: 'no element with id "missing" on the page' },
  ]);
  const seen = await web.evaluate(() => {
    const frame = document.querySelector('#banner iframe')!;
    const box = frame.getBoundingClientRect();
    const creative = frame.contentDocument!.getElementById('creative')!;
    return {
      frames: document.querySelectorAll('#banner iframe').length,
      size: [box.width, box.height],
      text: creative.textContent,
      ran: creative.dataset.ran,
      placeholder: document.getElementById('banner')!.textContent.includes('placeholder'),
    };
  });
  expect(seen).toEqual({ frames: 1, size: [300, 250], text: 'Ad for onecall', ran: 'true', placeholder: false });
  expect(await web.errors()).toEqual([]);
});
