import { defineConfig } from '@playwright/test';

// End-to-end tests in Debian's Chromium (never a downloaded browser: that fails on this machine).
export default defineConfig({
  testDir: './e2e',
  timeout: 30_000,
  workers: 2,
  retries: 0,
  reporter: process.env.EIDKIT_PW_JSON ? [['list'], ['json', { outputFile: process.env.EIDKIT_PW_JSON }]] : 'list',
  use: {
    browserName: 'chromium',
    headless: true,
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
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
});
