/** The demo server (demo/server.mjs) for e2e suites: a fresh one per test, so its report starts empty. */
import { test } from '@playwright/test';
// @ts-expect-error: plain JS demo server
import { startDemo } from '../../../demo/server.mjs';

/** A running demo server. */
export interface DemoHandle {
  url: string;
  server: { close(cb: () => void): void; closeAllConnections(): void };
}

/**
 * Starts a demo server before each test of the calling file and stops it after; returns a getter for it.
 * @example const demo = useFreshDemo(); test('…', async ({ page }) => { await page.goto(demo().url); });
 */
export function useFreshDemo(): () => DemoHandle {
  let demo: DemoHandle;
  test.beforeEach(async () => {
    demo = await startDemo(0, { quiet: true });
  });
  test.afterEach(async () => {
    demo.server.closeAllConnections();
    await new Promise<void>((r) => demo.server.close(() => r()));
  });
  return () => demo;
}
