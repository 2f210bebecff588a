/**
 * Firefox through WebDriver BiDi (puppeteer-core with Debian's firefox-esr; no driver to download): one browser
 * per worker, a fresh BiDi user context (its own cookies and storage) per test.
 */
import puppeteer, { type Frame } from 'puppeteer-core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EnginePage, type Driver } from './page';
import type { Launcher } from './launcher';

/** The Firefox binary: FIREFOX_PATH, else Debian's firefox-esr. */
export const FIREFOX_PATH = process.env.FIREFOX_PATH || '/usr/bin/firefox-esr';

/** Launches Firefox with its default privacy settings. */
export async function launchFirefox(): Promise<Launcher> {
  const profile = mkdtempSync(join(tmpdir(), 'eidkit-firefox-'));
  const browser = await puppeteer.launch({
    browser: 'firefox',
    executablePath: FIREFOX_PATH,
    headless: true,
    userDataDir: profile,
    // puppeteer's profile accepts every cookie (cookieBehavior 0); users have Total Cookie Protection (5):
    // third-party cookies and storage partitioned by top-level site.
    extraPrefsFirefox: {
      'browser.contentblocking.features.standard': '-tp,tpPrivate,cookieBehavior5,-cryptoTP,-fp',
      'network.cookie.cookieBehavior': 5,
    },
  });
  return {
    async newPage() {
      const context = await browser.createBrowserContext();
      const page = await context.newPage();
      const driver: Driver = {
        goto: async (url) => {
          await page.goto(url, { waitUntil: 'load' });
        },
        evaluate: (fn, arg, frame) => ((frame as Frame | undefined) ?? page.mainFrame()).evaluate(fn as never, arg),
        frames: async () =>
          page
            .frames()
            .filter((f) => f !== page.mainFrame())
            .map((f) => ({ url: f.url(), handle: f })),
        // Over BiDi, puppeteer reports the browser's own console errors (a cookie refused) as page errors: the
        // probe's record of uncaught exceptions is used instead.
        errors: async () => undefined,
        screenshot: async (path) => {
          await page.screenshot({ path, fullPage: true });
        },
        close: () => context.close(),
      };
      return new EnginePage('firefox', driver);
    },
    async close() {
      await browser.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
