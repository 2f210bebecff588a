/**
 * The demo server (demo/server.mjs) for e2e suites: a fresh one per test, so its report starts empty, behind a
 * recording test server (support/server.ts `upstream`) so a spec reads every request its page sent, in any engine.
 */
import { test } from '@playwright/test';
// @ts-expect-error: plain JS demo server
import { startDemo } from '../../../demo/server.mjs';
import { startTestServer, type TestServer } from './server';

/** A running demo server behind its recording proxy. */
export interface DemoHandle {
  /** The proxy's `http://127.0.0.1:<port>/`: pages, tag and ad calls all go through it. */
  url: string;
  /** The recording proxy (`proxy.altUrl` is the same demo as a second origin, on localhost). */
  proxy: TestServer;
  server: { close(cb: () => void): void; closeAllConnections(): void };
}

/** Starts a demo server and its proxy; `pages` are served by the proxy on the demo's origin. */
export async function startDemoBehindProxy(pages: Record<string, string> = {}): Promise<DemoHandle> {
  // The proxy first: its two origins are the pages the demo's CORS allow-list must name (the upstream is read per
  // request, so it can be set once the demo listens).
  const options: { upstream?: string; pages: Record<string, string> } = { pages };
  const proxy = await startTestServer(options);
  const demo = (await startDemo(0, { quiet: true, origins: [proxy.url, proxy.altUrl] })) as {
    url: string;
    server: DemoHandle['server'];
  };
  options.upstream = new URL(demo.url).origin;
  return { url: `${proxy.url}/`, proxy, server: demo.server };
}

/** Stops both. */
export async function stopDemo(demo: DemoHandle): Promise<void> {
  await demo.proxy.close();
  demo.server.closeAllConnections();
  await new Promise<void>((r) => demo.server.close(() => r()));
}

/**
 * Starts a demo server before each test of the calling file and stops it after; returns a getter for it.
 * @example const demo = useFreshDemo(); test('…', async ({ web }) => { await web.goto(demo().url); });
 */
export function useFreshDemo(pages: Record<string, string> = {}): () => DemoHandle {
  let demo: DemoHandle;
  test.beforeEach(async () => {
    demo = await startDemoBehindProxy(pages);
  });
  test.afterEach(async () => {
    await stopDemo(demo);
  });
  return () => demo;
}
