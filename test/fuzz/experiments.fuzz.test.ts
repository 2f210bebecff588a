// Fuzz: the holdout experiments of ad calls (`xp`) and the report that counts them. The decode keeps its caps on any
// input and costs no more than the JSON it reads (a 256 KB body of 3,500 entries or of one entry of 17,000 sources
// costs at most 2× a bare JSON.parse + 1 ms: only the first 8 entries and 10 sources are read); a GET parameter is
// refused by its length before decoding; the report keeps at most `maxExperimentsPerNetwork` experiments however
// many names calls make up.
import { afterAll, describe, expect, test } from 'vitest';
import fc from 'fast-check';
import { createReport, parseAdCall } from '../../src/adserver/index.js';
import { readExperiments } from '../../src/adserver/parse/index.js';
import { hostileXp } from './arbitraries.js';
import { checkCall } from './entry-points.js';
import { cpuMs, leastOf, mark, postExcess } from './harness.js';

const RUNS = Number(process.env.EIDKIT_FUZZ_RUNS) || 100;
const SEED = Number(process.env.EIDKIT_FUZZ_SEED) || 37;
const lines: string[] = [];
afterAll(() => console.log(lines.join('\n')));
const b64 = (v: unknown) => Buffer.from(JSON.stringify(v) ?? 'null').toString('base64url');

describe('xp: bounded and linear', () => {
  test('any xp value, on GET and POST: never throws, keeps the caps, within 25 ms + 0.1 ms per KB', () => {
    let worst = 0;
    fc.assert(
      fc.property(hostileXp, fc.constantFrom('get', 'post', 'prebid'), (xp, how) => {
        const input =
          how === 'get'
            ? { url: `/ac?nwid=1&xp=${b64(xp)}` }
            : { url: how === 'post' ? '/genericpost' : '/prebid/v1', body: JSON.stringify({ xp }) };
        const call = parseAdCall(input);
        checkCall(call);
        // The least of 3 parses: one measure alone also holds whatever GC the cases before it left (a loaded CI run
        // read one over the bound).
        const ms = leastOf(3, () => {
          const t = mark();
          parseAdCall(input);
          return cpuMs(t);
        });
        worst = Math.max(worst, ms);
        expect(ms).toBeLessThanOrEqual(25 + (JSON.stringify(xp)?.length ?? 0) / 10_240);
        const direct = readExperiments(xp);
        expect(direct.value.length).toBeLessThanOrEqual(8);
        expect(direct.issues.length).toBeLessThanOrEqual(9);
      }),
      { numRuns: RUNS, seed: SEED },
    );
    lines.push(`xp fuzz: ${RUNS} hostile values (seed ${SEED}), worst ${worst.toFixed(2)} ms CPU`);
  }, 60_000);

  test('a 256 KB body of thousands of entries, or of one entry of 17,000 sources, costs ≤ 2× a bare JSON.parse + 1 ms', () => {
    const entry = { id: 'id5-q3', arm: 'h', pct: 10, src: ['id5-sync.com'], st: 1 };
    const bodies = [
      JSON.stringify({ networkId: 1, xp: Array(3_500).fill(entry) }),
      JSON.stringify({ networkId: 1, xp: [{ ...entry, src: Array(17_000).fill('id5-sync.com') }] }),
      JSON.stringify({ networkId: 1, xp: Array(3_500).fill({ ...entry, pct: 'x' }) }),
    ];
    for (const body of bodies) {
      expect(body.length).toBeLessThanOrEqual(262_144);
      const input = { url: '/genericpost', method: 'POST', body };
      for (let i = 0; i < 5; i++) postExcess(input, 1); // compiled before measuring
      const m = postExcess(input, 7);
      lines.push(
        `xp body of ${body.length} characters: ${m.full.toFixed(3)} ms against a bare JSON.parse of ${m.bare.toFixed(3)} ms`,
      );
      expect(m.over).toBeLessThanOrEqual(0);
    }
  });

  test('a GET xp parameter past 16,384 characters is refused before it is decoded', () => {
    const call = parseAdCall({ url: `/ac?xp=${'A'.repeat(300_000)}` });
    expect(call.issues).toEqual([{ path: 'xp', message: 'parameter longer than 16384 characters; ignored' }]);
  });
});

describe('the report under made-up experiment names', () => {
  test('at most maxExperimentsPerNetwork experiments per network and day, whatever the calls name', () => {
    fc.assert(
      fc.property(fc.array(hostileXp, { minLength: 1, maxLength: 8 }), (xps) => {
        const report = createReport({ maxExperimentsPerNetwork: 5 });
        for (const xp of xps) {
          const call = parseAdCall({ url: '/genericpost', body: JSON.stringify({ networkId: 1, xp }) });
          report.add(call);
          report.addOutcome(call, { impression: true, revenue: 0.001 });
        }
        for (const row of report.toJSON().rows) {
          expect(row.experiments?.length ?? 0).toBeLessThanOrEqual(5);
          // The providers held out come from the registry: bounded whatever sources the calls name.
          for (const x of row.experiments ?? []) expect(x.providers.length).toBeLessThanOrEqual(64);
        }
      }),
      { numRuns: Math.ceil(RUNS / 5), seed: SEED },
    );
  }, 60_000);
});
