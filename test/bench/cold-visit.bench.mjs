#!/usr/bin/env node
// How soon the first ad call goes, in the three engines the e2e suites run (their launchers, reused:
// test/e2e/support/engines): Debian's Chromium through Playwright, firefox-esr through WebDriver BiDi, WebKitGTK
// through WebKitWebDriver (on an Xvfb display of its own). Unthrottled: wall clock on this machine.
// Each visit opens a fresh profile and loads the tag's page with every module (the full tag composed for a network
// with every module on, set up as the demo's modules page does), then loads it again in the same profile:
//   no ids      the first visit: nothing stored, so the id-linking module waits for its answer before the call
//   cached ids  the second: every module finds its ids stored
//   floor       a fresh profile, the same page with a one-line async script that makes the ad call itself
// Measured per visit: navigation start -> the ad call received by the local server (the page's
// performance.timeOrigin and the server's clock: one machine), and the page's queued `sas.call` -> the fetch
// starting (performance.now() before the call, the ad call's resource timing entry).
// Medians over VISITS visits (default 9), engines in turn.
// Acceptance (exit 1 when it fails): with cached ids, the queued call reaches fetch within 20 ms (median) in every
// engine.
import { createJiti } from 'jiti';
import { startPagesServer } from './tag-pages.mjs';

const VISITS = Number(process.env.VISITS ?? 9);
const ENGINES = (process.env.EIDKIT_ENGINES || 'chromium,firefox,webkit').split(',');
const BUDGET = 20;
const jiti = createJiti(import.meta.url);
const engines = {
  chromium: async () => {
    const { launchChromium } = await jiti.import('../e2e/support/engines/chromium.ts');
    return launchChromium({
      executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-sync', '--no-first-run'],
    });
  },
  firefox: async () => (await jiti.import('../e2e/support/engines/firefox.ts')).launchFirefox(),
  webkit: async () => (await jiti.import('../e2e/support/engines/webkit.ts')).launchWebKit(),
};

let arrivals = [];
const server = await startPagesServer({ onAdCall: () => arrivals.push(Date.now()) });
const EMAIL = 'bench.user@example.com';
const url = (name) => `${server.origin}/${name}?email=${encodeURIComponent(EMAIL)}`;

/** Loads `name` in `page` and waits for its ad call: navigation -> call received, queued call -> fetch start. */
async function load(page, name) {
  arrivals = [];
  await page.goto(url(name));
  const end = Date.now() + 15_000;
  while (!arrivals.length) {
    if (Date.now() > end) throw new Error(`${page.engine} ${name}: no ad call within 15 s`);
    await new Promise((r) => setTimeout(r, 10));
  }
  const received = arrivals[0];
  const marks = await page.waitForFunction(() => {
    const ac = performance.getEntriesByType('resource').find((e) => /\/ac\?/.test(e.name));
    return ac && { origin: performance.timeOrigin, call: globalThis.benchCall, fetch: ac.startTime };
  });
  return {
    navToCall: received - marks.origin,
    callToFetch: marks.call === undefined ? undefined : marks.fetch - marks.call,
  };
}

const median = (xs) => {
  const v = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  return v.length ? v[Math.floor((v.length - 1) / 2)] : NaN;
};
const f0 = (v) => (Number.isFinite(v) ? v.toFixed(1) : '-');
const rows = [];
for (const engine of ENGINES) {
  const launcher = await engines[engine]();
  const r = { none: [], cached: [], floor: [] };
  try {
    // One visit first, not counted: the browser's own start (its network service, its first page) is not the tag's.
    const warm = await launcher.newPage({ thirdPartyStorage: false });
    await load(warm, 'floor-call');
    await warm.close();
    for (let i = 0; i < VISITS; i++) {
      const page = await launcher.newPage({ thirdPartyStorage: false });
      r.none.push(await load(page, 'full'));
      r.cached.push(await load(page, 'full'));
      await page.close();
      const floor = await launcher.newPage({ thirdPartyStorage: false });
      r.floor.push(await load(floor, 'floor-call'));
      await floor.close();
    }
  } finally {
    await launcher.close();
  }
  const row = {
    engine,
    navCached: median(r.cached.map((x) => x.navToCall)),
    navNone: median(r.none.map((x) => x.navToCall)),
    navFloor: median(r.floor.map((x) => x.navToCall)),
    callCached: median(r.cached.map((x) => x.callToFetch)),
    callCachedMax: Math.max(...r.cached.map((x) => x.callToFetch)),
    callNone: median(r.none.map((x) => x.callToFetch)),
  };
  rows.push(row);
}
await server.close();

console.log(`Cold visits, the full tag on a page with every module, ${VISITS} visits per engine, medians in ms:`);
console.log(
  'engine   | navigation -> call received: cached ids / no ids / floor | queued sas.call -> fetch: cached ids (max) / no ids',
);
for (const x of rows)
  console.log(
    `${x.engine.padEnd(8)} | ${f0(x.navCached)} / ${f0(x.navNone)} / ${f0(x.navFloor)} | ${f0(x.callCached)} (${f0(x.callCachedMax)}) / ${f0(x.callNone)}`,
  );
console.log('\nAcceptance:');
let failed = false;
for (const x of rows) {
  const ok = x.callCached <= BUDGET;
  failed ||= !ok;
  console.log(
    `  ${ok ? 'ok  ' : 'FAIL'} ${x.engine}: cached ids, queued call -> fetch <= ${BUDGET} ms  ${f0(x.callCached)} ms`,
  );
}
if (failed) process.exitCode = 1;
