/**
 * WebKit (the engine of Safari) through classic WebDriver: Debian's webkit2gtk-driver (`WebKitWebDriver`) on a free
 * loopback port drives the MiniBrowser, on an Xvfb display of its own when there is no DISPLAY. One driver per
 * worker, a fresh automation session (an ephemeral profile) per test. Classic WebDriver has no error events: errors
 * come from the probe the test servers put first in every page (server.ts `PROBE`), top document only.
 */
import { existsSync, readdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { remote } from 'webdriverio';
import { EnginePage, type Driver, type PageFunction } from './page';
import type { Launcher } from './launcher';
import { descendants, guarded, inspectorPortOf, inspectorPortTaken, type Guarded } from './processes';

// Frames are switched with the classic protocol command (switchToFrame): webdriverio's newer switchFrame needs
// BiDi, which WebKitWebDriver does not speak. Its deprecation notice would repeat on every frame switch.
process.env.DISABLE_WEBDRIVERIO_DEPRECATION_WARNINGS = 'true';

/** The WebDriver binary: WEBKIT_DRIVER_PATH, else Debian's. */
export const WEBKIT_DRIVER_PATH = process.env.WEBKIT_DRIVER_PATH || '/usr/bin/WebKitWebDriver';

/** The MiniBrowser of the installed WebKitGTK (WEBKIT_MINIBROWSER overrides), or undefined. */
export function findMiniBrowser(): string | undefined {
  if (process.env.WEBKIT_MINIBROWSER) return process.env.WEBKIT_MINIBROWSER;
  const libs = existsSync('/usr/lib') ? readdirSync('/usr/lib').filter((d) => d.endsWith('-linux-gnu')) : [];
  for (const lib of libs) {
    for (const api of ['webkitgtk-6.0', 'webkit2gtk-4.1', 'webkit2gtk-4.0']) {
      const path = `/usr/lib/${lib}/${api}/MiniBrowser`;
      if (existsSync(path)) return path;
    }
  }
  return undefined;
}

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });

/** Starts Xvfb on the first free display (it writes the number it took to stdout), guarded. */
function startXvfb(): Promise<{ display: string; guard: Guarded }> {
  const guard = guarded('Xvfb', ['-displayfd', '1', '-nolisten', 'tcp', '-screen', '0', '1280x1024x24']);
  return new Promise((resolve, reject) => {
    let out = '';
    guard.proc.stdout!.on('data', (d) => {
      out += d;
      if (out.includes('\n')) resolve({ display: `:${out.trim()}`, guard });
    });
    guard.proc.once('exit', (code) => reject(new Error(`Xvfb exited (${code})`)));
  });
}

/**
 * True once WebKitWebDriver answers `GET /status` on `port` as a WebDriver does; false when it exited first (the
 * port was taken between choosing it and the driver binding it): then another port is tried.
 */
async function driverReady(port: number, driver: Guarded): Promise<boolean> {
  for (let i = 0; i < 400; i++) {
    if (driver.exited()) return false;
    try {
      const r = await fetch(`http://127.0.0.1:${port}/status`);
      const body = (await r.json().catch(() => undefined)) as { value?: { ready?: unknown } } | undefined;
      // Another server that took the port would not answer this: ours, then.
      if (r.ok && typeof body?.value?.ready === 'boolean') return !driver.exited();
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('WebKitWebDriver did not answer in 20 s');
}

/** WebKitWebDriver on a free loopback port, guarded. */
async function startDriver(display: string | undefined): Promise<{ port: number; guard: Guarded }> {
  const env = { ...process.env, ...(display ? { DISPLAY: display } : {}) };
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const guard = guarded(WEBKIT_DRIVER_PATH, [`--port=${port}`], env);
    if (await driverReady(port, guard)) return { port, guard };
    await guard.stop();
  }
  throw new Error('WebKitWebDriver could not listen on a free port three times');
}

/** How long a new session may take before the browser's inspector port is looked at, and how often after. */
const INSPECTOR_CHECK_AFTER_MS = 5_000;
const INSPECTOR_CHECK_EVERY_MS = 1_000;
/** A new session that is not there after this long fails with what was seen (the page fixture allows 90 s). */
const SESSION_START_LIMIT_MS = 75_000;
/**
 * A driver that has launched no browser process this long after a session was asked for never will (seen once in
 * about 200 sessions, waiting out the whole limit): it is replaced, as a driver whose port was taken is. A browser
 * normally appears within a second, under load within a few.
 */
const NO_BROWSER_LIMIT_MS = 20_000;

/** Runs in the page: calls the serialised function with its argument and reports its result or error. */
const RUNNER = `var done = arguments[arguments.length - 1];
try {
  Promise.resolve((0, eval)('(' + arguments[0] + ')')(arguments[1])).then(
    function (v) { done(v === undefined ? { ok: true, undef: true } : { ok: true, v: v }); },
    function (e) { done({ ok: false, e: String((e && e.stack) || e) }); });
} catch (e) { done({ ok: false, e: String((e && e.stack) || e) }); }`;

/**
 * Starts WebKitWebDriver (and Xvfb when there is no display). A new session whose browser cannot get the inspector
 * port the driver chose for it (processes.ts), or whose driver launches no browser at all, would never start: the
 * driver is then replaced (another port) and the session asked again, at most twice, each time said on stderr.
 */
export async function launchWebKit(): Promise<Launcher> {
  const binary = findMiniBrowser();
  if (!binary) throw new Error('no WebKitGTK MiniBrowser found (Debian package webkit2gtk-driver)');
  const xvfb = process.env.DISPLAY ? undefined : await startXvfb();
  let wd = await startDriver(xvfb?.display);

  /** A new session on the current driver, or why it cannot come. */
  async function newSession(): Promise<WebdriverIO.Browser | { stuck: string }> {
    const session = remote({
      hostname: '127.0.0.1',
      port: wd.port,
      // Failures come as exceptions; an abandoned request (below) would only add noise.
      logLevel: 'silent',
      // A session request the driver never answers is watched below, not retried by webdriverio.
      connectionRetryCount: 0,
      connectionRetryTimeout: SESSION_START_LIMIT_MS,
      capabilities: {
        browserName: 'MiniBrowser',
        'wdio:enforceWebDriverClassic': true,
        'webkitgtk:browserOptions': { binary, args: ['--automation'] },
      } as WebdriverIO.Capabilities,
    });
    const started = Date.now();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const watch = new Promise<{ stuck: string }>((resolve) => {
      const check = () => {
        const waited = Date.now() - started;
        const browser = descendants(wd.guard.proc.pid!).find((pid) => inspectorPortOf(pid) !== undefined);
        const port = browser === undefined ? undefined : inspectorPortTaken(browser);
        if (port?.taken) {
          resolve({ stuck: `inspector port ${port.port} taken by another socket after ${waited} ms` });
        } else if (browser === undefined && waited > NO_BROWSER_LIMIT_MS) {
          resolve({ stuck: `no browser process after ${waited} ms` });
        } else if (waited > SESSION_START_LIMIT_MS) {
          const seen =
            browser === undefined ? 'no browser process' : `browser ${browser}, inspector port ${port?.port}`;
          resolve({ stuck: `no session after ${waited} ms (${seen})` });
        } else timer = setTimeout(check, INSPECTOR_CHECK_EVERY_MS);
      };
      timer = setTimeout(check, INSPECTOR_CHECK_AFTER_MS);
    });
    try {
      const outcome = await Promise.race([session, watch]);
      // An abandoned request fails once its driver is gone: nothing to report then.
      if ('stuck' in outcome) session.catch(() => undefined);
      return outcome;
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    async newPage() {
      let started: WebdriverIO.Browser | undefined;
      for (let attempt = 1; !started; attempt++) {
        const outcome = await newSession();
        if (!('stuck' in outcome)) started = outcome;
        else if (attempt === 3 || !/^(inspector port|no browser process)/.test(outcome.stuck)) {
          throw new Error(`WebKit session did not start: ${outcome.stuck}`);
        } else {
          console.error(`WebKitWebDriver: ${outcome.stuck}; starting another driver (attempt ${attempt + 1} of 3)`);
          await wd.guard.stop();
          wd = await startDriver(xvfb?.display);
        }
      }
      const b = started;
      await b.setTimeout({ script: 30_000, pageLoad: 30_000 });
      let inFrame = false;
      async function run<A, R>(fn: PageFunction<A, R>, arg: A, frame?: unknown): Promise<R> {
        if (frame) {
          await b.switchToFrame(frame);
          inFrame = true;
        } else if (inFrame) {
          await b.switchToFrame(null);
          inFrame = false;
        }
        interface Outcome {
          ok: boolean;
          v?: R;
          undef?: boolean;
          e?: string;
        }
        const r = await b.executeAsync<Outcome, unknown[]>(RUNNER, String(fn), arg === undefined ? null : arg);
        if (frame) {
          await b.switchToFrame(null);
          inFrame = false;
        }
        if (!r.ok) throw new Error(`evaluate failed in WebKit: ${r.e}`);
        return (r.undef ? undefined : r.v) as R;
      }
      const driver: Driver = {
        async goto(url) {
          if (inFrame) await b.switchToFrame(null);
          inFrame = false;
          await b.url(url);
        },
        evaluate: run,
        async frames() {
          if (inFrame) await b.switchToFrame(null);
          inFrame = false;
          const out = [];
          for (const el of await b.findElements('css selector', 'iframe')) {
            try {
              await b.switchToFrame(el);
              out.push({ url: String(await b.executeScript('return location.href', [])), handle: el });
            } catch {
              // a frame being replaced
            }
            await b.switchToFrame(null);
          }
          return out;
        },
        errors: async () => undefined, // classic WebDriver has no error events: the probe's record is used
        screenshot: async (path) => {
          await b.saveScreenshot(path);
        },
        close: () => b.deleteSession(),
      };
      return new EnginePage('webkit', driver);
    },
    async close() {
      await wd.guard.stop();
      await xvfb?.guard.stop();
    },
  };
}
