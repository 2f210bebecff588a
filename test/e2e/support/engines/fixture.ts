/**
 * The e2e suites' `test`: Playwright's runner with one project per engine (test/playwright.config.ts) and a `web`
 * fixture, the engine-neutral page (page.ts). A spec imports `test` and `expect` from here and never names an
 * engine, except to skip a scenario that cannot run in one, with the reason (`skipIn`).
 */
import { test as base, expect } from '@playwright/test';
import { launchChromium } from './chromium';
import { launchFirefox } from './firefox';
import { launchWebKit } from './webkit';
import type { Launcher } from './launcher';
import type { EngineName, EnginePage } from './page';

export { expect };
export type { EngineFrame, EngineName, EnginePage } from './page';

interface TestFixtures {
  web: EnginePage;
  thirdPartyStorage: boolean;
}
interface WorkerFixtures {
  engine: EngineName;
  launcher: Launcher;
}

/** The suites' test function: `web` is a fresh page (and profile) in the project's engine. */
export const test = base.extend<TestFixtures, WorkerFixtures>({
  engine: ['chromium', { scope: 'worker', option: true }],
  thirdPartyStorage: [false, { option: true }],
  launcher: [
    async ({ engine }, use, workerInfo) => {
      const launcher =
        engine === 'firefox'
          ? await launchFirefox()
          : engine === 'webkit'
            ? await launchWebKit()
            : await launchChromium(workerInfo.project.use.launchOptions ?? {});
      await use(launcher);
      await launcher.close();
    },
    { scope: 'worker', timeout: 120_000 },
  ],
  // A page is a new browser session (WebKit: a new MiniBrowser through WebKitWebDriver), which a loaded machine can
  // take many seconds to start: its own timeout, so starting it never eats the test's 30 s.
  web: [
    async ({ launcher, thirdPartyStorage }, use) => {
      const page = await launcher.newPage({ thirdPartyStorage });
      await use(page);
      await page.close();
    },
    { timeout: 90_000 },
  ],
});

/**
 * Skips the calling test in `engines` with `reason`, which the list reporter and the summary of `npm test` print:
 * a scenario that cannot run in an engine is never skipped silently.
 */
export function skipIn(engine: EngineName, engines: EngineName[], reason: string): void {
  test.skip(engines.includes(engine), `${engine}: ${reason}`);
}
