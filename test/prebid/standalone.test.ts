// @vitest-environment happy-dom
// The built standalone script (dist/prebid/eidkit-adapter.js; `npm run build` first) registers the bidder whether
// it loads before Prebid or after it, and before the page's own queued auction.
import { beforeEach, expect, test } from 'vitest';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// happy-dom replaces the global URL, so build the path from this file's path.
const code = readFileSync(join(dirname(fileURLToPath(import.meta.url)), '../../dist/prebid/eidkit-adapter.js'), 'utf8');
const run = () => new Function(code)();
interface Pbjs {
  que?: (() => void)[];
  libLoaded?: boolean;
  registerBidAdapter?: (a: null, c: string, s: { code: string; gvlid: number }) => void;
}
const w = window as unknown as { pbjs?: Pbjs };
const registered: [string, number][] = [];
const registerBidAdapter = (_a: null, c: string, s: { gvlid: number }) => void registered.push([c, s.gvlid]);

beforeEach(() => {
  delete w.pbjs;
  registered.length = 0;
});

test('loaded before Prebid, it queues its registration ahead of the auction the page already queued', () => {
  const order: string[] = [];
  w.pbjs = { que: [() => order.push('page: requestBids')] };
  run();
  // Prebid arriving later runs the queue in order.
  w.pbjs.registerBidAdapter = (...a) => {
    registerBidAdapter(...a);
    order.push('register');
  };
  for (const fn of w.pbjs.que!) fn();
  expect(order).toEqual(['register', 'page: requestBids']);
  expect(registered).toEqual([['eidkit', 45]]);
});

test('loaded with no pbjs yet, it creates the queue', () => {
  run();
  expect(w.pbjs!.que).toHaveLength(1);
});

test('loaded after Prebid, it registers at once', () => {
  w.pbjs = { que: [], libLoaded: true, registerBidAdapter };
  run();
  expect(registered).toEqual([['eidkit', 45]]);
});
