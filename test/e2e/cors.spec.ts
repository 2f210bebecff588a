// The demo ad server's CORS answer in Chromium, Firefox and WebKit: its own page (as localhost, a second origin of
// the same server) reads an ad-call answer sent with credentials; a page of another origin, and a sandboxed frame
// (origin `null`), send the same call and the browser refuses them the answer.
import { expect, test } from './support/engines/fixture';
import { useFreshDemo } from './support/demo';
import { startTestServer, type TestServer } from './support/server';

const demo = useFreshDemo();
let foreign: TestServer;
test.beforeEach(async () => {
  foreign = await startTestServer({ pages: { '/': '<!doctype html><title>another site</title><p>another site</p>' } });
});
test.afterEach(async () => {
  await foreign.close();
});

/** In the page: an ad call with the visitor's cookies; what the script could read, or the kind of error it got. */
function readAnswer(target: string): Promise<string> {
  return fetch(target, { credentials: 'include' }).then(
    (r) => r.text().then((t) => `read ${r.status}: ${t.slice(0, 40)}`),
    (e: unknown) => `blocked: ${(e as Error).name}`,
  );
}

test('the demo page, served as localhost, reads the answer of the ad server on 127.0.0.1', async ({ web }) => {
  const adServer = demo().url; // http://127.0.0.1:<port>/
  await web.goto(demo().proxy.altUrl + '/');
  expect(await web.evaluate(readAnswer, `${adServer}ac?nwid=1234`)).toMatch(/^read 200: \{"kind":"get"/);
});

test('a page of another origin sends the ad call but cannot read its answer', async ({ web }) => {
  const adServer = demo().url;
  await web.goto(`${foreign.url}/`);
  expect(await web.evaluate(readAnswer, `${adServer}ac?nwid=1234`)).toBe('blocked: TypeError');
  // The call itself reached the server (CORS guards the answer, not the request).
  expect(demo().proxy.requests.some((r) => r.path === '/ac')).toBe(true);
});

test('a sandboxed frame (origin null) cannot read the answer', async ({ web }) => {
  const adServer = demo().url;
  await web.goto(`${foreign.url}/`);
  const result = await web.evaluate((target: string) => {
    return new Promise<string>((resolve) => {
      addEventListener('message', (e) => resolve(String(e.data)));
      const frame = document.createElement('iframe');
      frame.sandbox.add('allow-scripts');
      frame.srcdoc = `<script>fetch(${JSON.stringify(target)}, { credentials: 'include' }).then(
        (r) => r.text().then((t) => parent.postMessage('read ' + r.status, '*')),
        (e) => parent.postMessage('blocked: ' + e.name, '*'));</script>`;
      document.body.append(frame);
    });
  }, `${adServer}ac?nwid=1234`);
  expect(result).toBe('blocked: TypeError');
});
