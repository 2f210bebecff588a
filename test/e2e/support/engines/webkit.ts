/**
 * WebKit (the engine of Safari) through classic WebDriver: Debian's webkit2gtk-driver (`WebKitWebDriver`) on a free
 * loopback port drives the MiniBrowser, on an Xvfb display of its own when there is no DISPLAY. One driver per
 * worker, a fresh automation session (an ephemeral profile) per test. Classic WebDriver has no error events: errors
 * come from the probe the test servers put first in every page (server.ts `PROBE`), top document only.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { remote } from 'webdriverio';
import { EnginePage, type Driver, type PageFunction } from './page';
import type { Launcher } from './launcher';

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

/** Starts Xvfb on the first free display (it writes the number it took to fd 3). */
function startXvfb(): Promise<{ display: string; proc: ChildProcess }> {
  const proc = spawn('Xvfb', ['-displayfd', '3', '-nolisten', 'tcp', '-screen', '0', '1280x1024x24'], {
    stdio: ['ignore', 'ignore', 'ignore', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    proc.stdio[3]!.on('data', (d) => {
      out += d;
      if (out.includes('\n')) resolve({ display: `:${out.trim()}`, proc });
    });
    proc.on('error', reject);
    proc.on('exit', (code) => reject(new Error(`Xvfb exited (${code})`)));
  });
}

async function waitForDriver(port: number): Promise<void> {
  for (let i = 0; i < 200; i++) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/status`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('WebKitWebDriver did not start');
}

/** Runs in the page: calls the serialised function with its argument and reports its result or error. */
const RUNNER = `var done = arguments[arguments.length - 1];
try {
  Promise.resolve((0, eval)('(' + arguments[0] + ')')(arguments[1])).then(
    function (v) { done(v === undefined ? { ok: true, undef: true } : { ok: true, v: v }); },
    function (e) { done({ ok: false, e: String((e && e.stack) || e) }); });
} catch (e) { done({ ok: false, e: String((e && e.stack) || e) }); }`;

/** Starts WebKitWebDriver (and Xvfb when there is no display). */
export async function launchWebKit(): Promise<Launcher> {
  const binary = findMiniBrowser();
  if (!binary) throw new Error('no WebKitGTK MiniBrowser found (Debian package webkit2gtk-driver)');
  const xvfb = process.env.DISPLAY ? undefined : await startXvfb();
  const port = await freePort();
  const driverProc = spawn(WEBKIT_DRIVER_PATH, [`--port=${port}`], {
    stdio: 'ignore',
    env: { ...process.env, ...(xvfb ? { DISPLAY: xvfb.display } : {}) },
  });
  await waitForDriver(port);
  return {
    async newPage() {
      const b = await remote({
        hostname: '127.0.0.1',
        port,
        logLevel: 'error',
        capabilities: {
          browserName: 'MiniBrowser',
          'wdio:enforceWebDriverClassic': true,
          'webkitgtk:browserOptions': { binary, args: ['--automation'] },
        } as WebdriverIO.Capabilities,
      });
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
      driverProc.kill();
      xvfb?.proc.kill();
    },
  };
}
