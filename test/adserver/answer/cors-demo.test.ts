// The demo ad server (demo/server.mjs) answers its own page origins with credentials and nobody else: neither a
// foreign site nor the `null` origin of a sandboxed frame or a file can read a visitor's answer, and the answer
// never repeats the HttpOnly `pid` cookie. Over real HTTP, on the built package (`npm run build` first).
import { afterAll, beforeAll, describe, expect, test } from 'vitest';

let url = '';
let port = 0;
let server: { close(cb: () => void): void; closeAllConnections(): void };

beforeAll(async () => {
  // @ts-expect-error: plain JS demo server
  const { startDemo } = await import('../../../demo/server.mjs');
  ({ url, server } = await startDemo(0, { quiet: true }));
  port = Number(new URL(url).port);
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

const PID = 'visitor-pid-0123456789';

/** An ad call to `path` (GET for /ac, else POST `{}`) with these headers. */
function call(path: string, headers: Record<string, string>): Promise<Response> {
  const get = path.startsWith('/ac');
  return fetch(new URL(path, url), { method: get ? 'GET' : 'POST', body: get ? undefined : '{}', headers });
}

describe('the demo ad server CORS answer', () => {
  const paths = ['/ac?nwid=1234', '/genericpost', '/call', '/prebid/v1'];
  test.each(paths)('%s: its own page origins may read, with credentials', async (path) => {
    for (const origin of [`http://127.0.0.1:${port}`, `http://localhost:${port}`]) {
      const res = await call(path, { origin });
      expect(res.status).toBe(200);
      expect(res.headers.get('access-control-allow-origin')).toBe(origin);
      expect(res.headers.get('access-control-allow-credentials')).toBe('true');
      expect(res.headers.get('vary')).toMatch(/Origin/);
    }
  });

  const foreign = ['null', 'https://evil.test', 'http://127.0.0.1:1', 'http://127.0.0.1.evil.test'];
  test.each(foreign)('origin %s gets no Access-Control-Allow header', async (origin) => {
    for (const path of ['/ac?nwid=1234', '/genericpost', '/prebid/v1']) {
      const res = await call(path, { origin });
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
      expect(res.headers.get('access-control-allow-credentials')).toBeNull();
      expect(res.headers.get('vary')).toMatch(/Origin/);
    }
  });

  test('a preflight from its own page is answered; from a foreign or null origin it is refused', async () => {
    const ask = (origin: string) =>
      fetch(new URL('/genericpost', url), {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
      });
    const own = await ask(`http://localhost:${port}`);
    expect(own.status).toBe(204);
    expect(own.headers.get('access-control-allow-origin')).toBe(`http://localhost:${port}`);
    expect(own.headers.get('access-control-allow-methods')).toBe('GET, POST');
    for (const origin of ['null', 'https://evil.test']) {
      const refused = await ask(origin);
      expect(refused.status).toBe(403);
      expect(refused.headers.get('access-control-allow-origin')).toBeNull();
    }
  });

  test('the answer never repeats the HttpOnly pid cookie', async () => {
    for (const [path, init] of [
      ['/ac?nwid=1234', {}],
      ['/genericpost', { method: 'POST', body: JSON.stringify({ nwid: 1234 }) }],
      ['/call', { method: 'POST', body: JSON.stringify({ nwid: 1234 }) }],
    ] as const) {
      const headers = { origin: `http://127.0.0.1:${port}`, cookie: `pid=${PID}` };
      const res = await fetch(new URL(path, url), { ...init, headers });
      const text = await res.text();
      expect(text).not.toContain(PID);
      expect(JSON.parse(text).hasPid).toBe(true);
    }
  });
});
