/** Chromium through Playwright: Debian's /usr/bin/chromium, one browser per worker, a fresh context per test. */
import { chromium, type Frame, type LaunchOptions } from '@playwright/test';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EnginePage, type Driver } from './page';
import type { Launcher, PageOptions } from './launcher';

/** Launches Chromium with the project's launch options. */
export async function launchChromium(options: LaunchOptions): Promise<Launcher> {
  const browser = await chromium.launch(options);
  return {
    async newPage({ thirdPartyStorage }: PageOptions) {
      // Playwright's contexts are incognito-like and deny a cross-site frame any storage; a regular profile that
      // allows third-party cookies behaves as Chrome does by default.
      let dir = '';
      let context;
      if (thirdPartyStorage) {
        dir = mkdtempSync(join(tmpdir(), 'eidkit-profile-'));
        mkdirSync(join(dir, 'Default'));
        const prefs = { profile: { cookie_controls_mode: 0, block_third_party_cookies: false } };
        writeFileSync(join(dir, 'Default', 'Preferences'), JSON.stringify(prefs));
        context = await chromium.launchPersistentContext(dir, options);
      } else {
        context = await browser.newContext();
      }
      const page = context.pages()[0] ?? (await context.newPage());
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(String(e)));
      const driver: Driver = {
        goto: async (url) => {
          await page.goto(url);
        },
        evaluate: (fn, arg, frame) => ((frame as Frame | undefined) ?? page).evaluate(fn, arg),
        frames: async () =>
          page
            .frames()
            .filter((f) => f !== page.mainFrame())
            .map((f) => ({ url: f.url(), handle: f })),
        errors: async () => [...errors],
        screenshot: async (path) => {
          await page.screenshot({ path, fullPage: true });
        },
        close: async () => {
          await context.close();
          if (dir) rmSync(dir, { recursive: true, force: true });
        },
      };
      return new EnginePage('chromium', driver);
    },
    close: () => browser.close(),
  };
}
