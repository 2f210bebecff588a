// The demo ad server (demo/server.mjs) prints each call's issues as the parser worded them: a note on an eid that
// was kept (an unusual atype) is not announced as dropped. Over real HTTP, on the built package.
import { afterAll, beforeAll, expect, test, vi } from 'vitest';

let url = '';
let server: { close(cb: () => void): void; closeAllConnections(): void };
const lines: string[] = [];

beforeAll(async () => {
  vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => void lines.push(args.join(' ')));
  // @ts-expect-error: plain JS demo server
  const { startDemo } = await import('../../../demo/server.mjs');
  ({ url, server } = await startDemo(0));
});
afterAll(async () => {
  vi.restoreAllMocks();
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

test('an issue on an eid the call kept is printed as an issue, not as dropped', async () => {
  const eids = [{ source: 'example.org', uids: [{ id: 'kept', atype: 7 }] }];
  const res = await fetch(new URL('/genericpost', url), {
    method: 'POST',
    body: JSON.stringify({ networkId: 1234, siteId: 1, pageId: 2, formatId: 3, eids }),
  });
  expect(res.status).toBe(200);
  const answer = (await res.json()) as { eids: unknown[] };
  expect(answer.eids).toHaveLength(1);
  const issueLines = lines.filter((l) => l.includes('eids[0].uids[0].atype'));
  expect(issueLines).toEqual(['  issue eids[0].uids[0].atype: atype 7 is not 1, 2, 3 or >= 500 (AdCOM); kept as sent']);
});
