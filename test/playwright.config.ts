import { defineConfig } from '@playwright/test';

// End-to-end tests in three engines, from the same specs (test/e2e/support/engines): Debian's Chromium through
// Playwright, Debian's firefox-esr through WebDriver BiDi, WebKitGTK's MiniBrowser through WebKitWebDriver. Never
// a downloaded browser or driver: that fails on this machine. EIDKIT_ENGINES=chromium,webkit runs a subset.
const engines = (process.env.EIDKIT_ENGINES || 'chromium,firefox,webkit').split(',');

export default defineConfig({
  testDir: './e2e',
  timeout: 30_000,
  workers: 2,
  retries: 0,
  reporter: process.env.EIDKIT_PW_JSON ? [['list'], ['json', { outputFile: process.env.EIDKIT_PW_JSON }]] : 'list',
  projects: ['chromium', 'firefox', 'webkit']
    .filter((name) => engines.includes(name))
    .map((name) => ({
      name,
      use: {
        engine: name as 'chromium' | 'firefox' | 'webkit',
        launchOptions: {
          executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
          headless: true,
          args: [
            '--no-sandbox',
            '--disable-gpu',
            '--disable-quic',
            '--disable-background-networking',
            '--disable-component-update',
            '--disable-sync',
            '--no-first-run',
          ],
        },
      },
    })),
});
