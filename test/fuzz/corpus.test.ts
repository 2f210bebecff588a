// Replays every case saved in test/fuzz/corpus/: the known bombs, and each failure `npm run fuzz` found. Each must
// now keep its entry point's invariants within its CPU budget (test/fuzz/entry-points.ts).
import { afterAll, describe, expect, test } from 'vitest';
import { ENTRY_POINTS } from './entry-points.js';
import { loadCorpus, runCase, worstSummary } from './harness.js';

const cases = loadCorpus();
afterAll(() => console.log(worstSummary()));

describe('the fuzz corpus', () => {
  test('holds cases, each naming an entry point the suite drives', () => {
    expect(cases.length).toBeGreaterThan(0);
    for (const c of cases) expect(Object.keys(ENTRY_POINTS), c.file).toContain(c.entry);
  });
  test.each(cases.map((c) => [c.file, c] as const))(
    '%s passes again',
    async (_file, c) => {
      await runCase(c.entry, c.input);
    },
    60_000,
  );
});
