// The publisher snippet, taken from docs/tag.md (the tag guide) as written, in Chromium, Firefox and WebKit: the ad
// call goes out on a page without Prebid.js, and carries Prebid.js's eids on a page with it.
import { expect, test } from './support/engines/fixture';
import { readFileSync } from 'node:fs';
import { useTestServer } from './support/server';

const guide = readFileSync(new URL('../../docs/tag.md', import.meta.url), 'utf8');
/** The first html block of the tag guide's "The tag" section: the publisher snippet. */
const snippet = /## The tag[\s\S]*?```html\n([\s\S]*?)```/.exec(guide)![1];

const server = useTestServer();

/** The snippet pointed at the test server (tag and ad server), after `head` (e.g. a Prebid.js stand-in). */
function pageWith(head: string): string {
  const local = snippet
    .replace('https://cdn.example.com/tag/1234/sas.js', '/tag/1234/sas.js')
    .replace("'https://ads.example.com'", 'location.origin');
  return `<!doctype html><html><head><meta charset="utf-8">${head}${local}</head><body></body></html>`;
}

test('the publisher snippet of docs/tag.md sends its ad call on a page without Prebid.js', async ({ web: page }) => {
  expect(snippet).toContain("sas.call('std'");
  server().page('/no-prebid', pageWith(''));
  await page.goto(server().url + '/no-prebid');
  const [call] = await server().waitForAdCalls(1);
  expect(call.query).toMatchObject({ nwid: '1234', siteid: '1', pgid: '2', fmtid: '3' });
  expect(await page.errors()).toEqual([]);
});

test("the publisher snippet of docs/tag.md puts Prebid.js's eids on the ad call when Prebid.js is there", async ({
  web: page,
}) => {
  const eids = [{ source: 'id5-sync.com', uids: [{ id: 'ID5*readme', atype: 1 }] }];
  server().page(
    '/prebid',
    pageWith(`<script>window.pbjs = { getUserIdsAsEids: function () { return ${JSON.stringify(eids)}; } };</script>`),
  );
  await page.goto(server().url + '/prebid');
  const [call] = await server().waitForAdCalls(1);
  expect(call.eids).toEqual(eids);
});
