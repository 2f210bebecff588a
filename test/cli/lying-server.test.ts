// `eidkit deals list` against a deal API that lies about its pages: a huge total, a `next` link to the same page, a
// page that never advances, a `next` that goes back, pages without end. Each ends the command with exit 5 and a
// message naming what was wrong, within seconds, with the deals listed so far printed whole (a closed JSON array,
// every CSV row); none crashes it.
import { afterEach, describe, expect, test } from 'vitest';
// @ts-expect-error plain ESM helper shared with the fuzz suite
import { startLyingDealApi } from '../support/lying-deal-api.mjs';
import { eidkit } from './helpers.js';

interface LyingApi {
  url: string;
  requests: () => number;
  close: () => Promise<void>;
}
let api: LyingApi | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

async function list(mode: string, args: string[] = []) {
  api = (await startLyingDealApi(mode)) as LyingApi;
  const env = {
    EIDKIT_BASE_URL: `${api.url}/current/`,
    EIDKIT_AUTH_URL: api.url,
    EIDKIT_AUDIENCE: 'https://deal-api.eidkit.test',
    EIDKIT_CLIENT_ID: 'client',
    EIDKIT_CLIENT_SECRET: 'secret',
    EIDKIT_USERNAME: 'user@example.com',
    EIDKIT_PASSWORD: 'password',
    EIDKIT_TOKEN_FILE: '/dev/null/none',
  };
  const started = performance.now();
  const run = await eidkit(['deals', 'list', '--no-cache', ...args], env);
  return { ...run, ms: performance.now() - started, requests: api.requests() };
}

describe('deals list against a lying deal API exits 5 with a clear message, keeping what it listed', () => {
  test.each([
    ['huge-total', [], 'the service reports 1,000,000,000,000 items, more than the 100,000 one listing may hold'],
    ['self-next', ['--concurrency', '1'], "the service's next link leads back to a page already fetched"],
    ['same-page', [], "the service's pages are not advancing: the page at offset 0 holds only items already listed"],
    ['back-next', [], "the service's next link does not advance (offset 100, then 0)"],
  ])(
    '%s: stopped at once, the first deals printed as a valid JSON array',
    async (mode, args, message) => {
      const r = await list(mode, [...args, '--json']);
      expect(r.code, r.stderr).toBe(5);
      expect(r.stderr).toContain(message);
      expect(r.stderr).toMatch(/listing stopped after (100|200) items/);
      const deals = JSON.parse(r.stdout) as { id: number }[];
      expect(deals.length).toBeGreaterThanOrEqual(100);
      expect(new Set(deals.map((d) => d.id)).size).toBe(deals.length);
      expect(r.requests).toBeLessThanOrEqual(3);
      expect(r.ms).toBeLessThan(10_000);
    },
    15_000,
  );

  test('endless pages stop at --max-items, every deal listed kept in the CSV', async () => {
    const r = await list('endless', ['--csv', '--columns', 'id,name', '--max-items', '1000']);
    expect(r.code, r.stderr).toBe(5);
    expect(r.stderr).toContain('listing stopped after 1000 items: more than 1,000 items (maxItems)');
    expect(r.stdout.trimEnd().split('\r\n')).toHaveLength(1 + 1000);
    expect(r.ms).toBeLessThan(10_000);
  }, 15_000);

  test('endless pages stop at --max-pages, the table of what was listed printed first', async () => {
    const r = await list('endless', ['--max-pages', '50', '--columns', 'id']);
    expect(r.code, r.stderr).toBe(5);
    expect(r.stderr).toContain('more than 50 pages to request (maxPages)');
    expect(r.stderr).toContain('5000 deals printed before the listing stopped');
    expect(r.stdout.trimEnd().split('\n')).toHaveLength(2 + 5000);
    expect(r.requests).toBe(50);
  }, 15_000);
});
