// Fuzz: a property per shape of hostile input that cost more than its size (test/fuzz/shapes.ts). Each keeps its
// invariant for every case drawn; the budgets at the worst case are measured by acceptance-shapes.test.ts.
import { afterAll, describe, expect, test } from 'vitest';
import fc from 'fast-check';
import {
  MemoryFrequencyCapStore,
  createFrequencyCapper,
  createForwardingPolicy,
  createReport,
  defineFrequencyCap,
  logProviders,
  memoryLogSink,
  parseAdCall,
  buildBidRequest,
} from '../../src/adserver/index.js';
import type { AdCall } from '../../src/adserver/index.js';
import { jsonTerminalSafe, terminalSafe } from '../../src/core/terminal.js';
// @ts-expect-error plain ESM helper shared with the unit tests and the bench
import { collidingIds } from '../support/colliding-ids.mjs';
import { heapAfterGc, mib } from '../support/heap.js';
import { fuzz, worstSummary } from './harness.js';
import { idOfLength, networkCall, invisibleText, slicedKeysBatch, wideDeepExtBody } from './shapes.js';

afterAll(() => console.log(worstSummary()));

const RUNS = Number(process.env.EIDKIT_FUZZ_RUNS) || 0;
/** What must never reach a terminal raw (but the newline). */
const RAW = /(?!\n)[\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}\p{Zl}\p{Zp}\p{Cs}]/u;

describe('wide-and-deep ext', () => {
  test(
    'a 256 KB body whose ext nests to the depth cap and far past the length cap keeps every cap, in budget',
    () => fuzz('parseAdCall', 'wide-deep-ext', wideDeepExtBody, 40),
    60_000,
  );
  test(
    'the same bodies streamed into parseIncomingMessage',
    () => fuzz('parseIncomingMessage', 'wide-deep-ext', wideDeepExtBody, 20),
    60_000,
  );
});

describe('sliced keys', () => {
  /**
   * The heap a server keeps after the calls of `batch` (consent caches, cap keys, log records), each URL padded by
   * its `pad` characters times `padBy`: the same calls with the same strings, only their URLs longer or shorter.
   */
  function keptAfter(batch: Batch, padBy: number, offset: number): { grown: number; holders: unknown[] } {
    const policy = createForwardingPolicy({});
    const capper = createFrequencyCapper();
    const cap = defineFrequencyCap({ item: 'deal:1', max: 3, per: 'day' });
    const log = memoryLogSink(1_000);
    const eids = Buffer.from(JSON.stringify([{ source: 'unknown.example', uids: [{ id: 'x' }] }])).toString(
      'base64url',
    );
    const before = heapAfterGc();
    batch.forEach(({ pad, lengths, pidInCookie }, i) => {
      const [tc, gpp, uid, pgid, tgt, pid] = lengths.map((n, k) => idOfLength(offset + i * 6 + k, n));
      const padding = 'p'.repeat(pad * padBy);
      const query = `nwid=1&gdpr=1&gdpr_consent=${tc}&gpp=${gpp}&pgid=${pgid}&tgt=${tgt}&eids=${eids}`;
      const url = `/ac?${query}${pidInCookie ? '' : `&uid=${uid}`}&pad=${padding}`;
      const call: AdCall = parseAdCall({ url, headers: pidInCookie ? { cookie: `a=${padding}; pid=${pid}` } : {} });
      buildBidRequest(call, { id: 'dsp', gvlVendorId: 45 }, { policy });
      logProviders(call, log);
      void capper.take(call, cap);
    });
    // What keeps the strings is returned with the measure, so it is alive when measured.
    return { grown: heapAfterGc() - before, holders: [policy, capper, log] };
  }
  type Batch = typeof slicedKeysBatch extends fc.Arbitrary<infer T> ? T : never;

  test('what a server keeps of GET calls holds their strings, never their URLs: 4–15 KB more of URL, no more heap', () => {
    let offset = 0;
    fc.assert(
      fc.property(slicedKeysBatch, (batch) => {
        keptAfter(batch.slice(0, 50), 1, (offset += 10_000)); // the code paths compiled before measuring
        // Interleaved, the least of two each: a collection or a compile in one measure is not blamed on the URLs.
        const measure = (padBy: number) => keptAfter(batch, padBy, (offset += 10_000)).grown;
        const [short1, padded1, short2, padded2] = [measure(0), measure(1), measure(0), measure(1)];
        const short = Math.min(short1, short2);
        const padded = Math.min(padded1, padded2);
        const padding = batch.reduce((n, c) => n + c.pad * (c.pidInCookie ? 2 : 1), 0);
        // Sliced, each call's strings would keep its URL (and Cookie header): `padding` bytes more in all, at least.
        // Beside a collection's own noise (half a MiB either way), a quarter of that is far from it.
        const slack = 512 * 1024 + padding / 4;
        expect(padded - short, `${mib(padded)} against ${mib(short)}, URLs ${mib(padding)} longer`).toBeLessThan(slack);
      }),
      { numRuns: RUNS ? Math.max(3, RUNS >> 4) : 3, seed: 20_32_1, endOnFailure: true },
    );
  }, 120_000);
});

describe('colliding integers', () => {
  const colliding = collidingIds(6_000, 13) as number[];
  test('any mix of network ids V8 hashes alike and ordinary ones is counted exactly, at a flat cost', () => {
    const at = new Date('2025-03-01T10:00:00Z');
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.constantFrom(...colliding), fc.integer({ min: 1, max: 2 ** 31 - 1 })), {
          minLength: 3_000,
          maxLength: 6_000,
        }),
        (ids) => {
          // The same calls with ordinary ids in place of each distinct id: the same networks, repeated alike.
          const rename = new Map<number, number>();
          const ordinary = ids.map((id) => {
            if (!rename.has(id)) rename.set(id, 1_000_000 + rename.size);
            return rename.get(id)!;
          });
          // Each network's counters made first (untimed), then the adds that find them timed: where a flood costs.
          const cpuOf = (list: number[]) => {
            const report = createReport();
            const calls = list.map(networkCall);
            for (const c of calls) report.add(c, at);
            const t0 = process.cpuUsage();
            for (let pass = 0; pass < 4; pass++) for (const c of calls) report.add(c, at);
            const t = process.cpuUsage(t0);
            return { report, us: t.user + t.system };
          };
          const report = createReport();
          for (const id of ids) report.add(networkCall(id), at);
          const model = new Map<string, number>();
          for (const id of ids) model.set(`#${id}`, (model.get(`#${id}`) ?? 0) + 1);
          const rows = report.toJSON().rows;
          expect(rows).toHaveLength(model.size);
          for (const r of rows) expect(r.calls).toBe(model.get(`#${r.networkId}`));
          // Side by side in 7 rounds, the order alternating, and the median of the per-round ratios: a load spike of
          // the machine lands on one round of one side, not on the median. Colliding ids cost no more than 3×
          // ordinary ones (35× before).
          const rounds: [number, number][] = [];
          for (let i = 0; i < 7; i++) {
            const [first, second] = i % 2 ? [ordinary, ids] : [ids, ordinary];
            const a = cpuOf(first).us;
            const b = cpuOf(second).us;
            rounds.push(i % 2 ? [b, a] : [a, b]);
          }
          const ratios = rounds.map(([c, p]) => (c + 1) / (p + 1)).sort((x, y) => x - y);
          const shown = rounds.map(([c, p]) => `${c}/${p}`).join(', ');
          expect(ratios[3], `${ids.length} adds, colliding / ordinary µs per round: ${shown}`).toBeLessThan(3);
        },
      ),
      { numRuns: RUNS ? Math.max(10, RUNS >> 3) : 10, seed: 20_32_2, endOnFailure: true },
    );
  }, 120_000);
});

describe('long keys', () => {
  test('any users, up to 2,048 characters, keep the in-memory cap store within its bytes and keys', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({ length: fc.integer({ min: 1, max: 2_048 }), impressions: fc.integer({ min: 1, max: 4 }) }),
          {
            maxLength: 400,
          },
        ),
        fc.integer({ min: 20_000, max: 400_000 }),
        (users, maxBytes) => {
          const store = new MemoryFrequencyCapStore({ maxBytes, maxKeys: 200 });
          users.forEach(({ length, impressions }, i) => {
            const key = `alt:2:${idOfLength(i, length)}|deal:1`;
            for (let t = 0; t < impressions; t++) store.record(key, 1_000 + t, 86_400_000);
            expect(store.bytes).toBeLessThanOrEqual(maxBytes);
            expect(store.size).toBeLessThanOrEqual(200);
            // The user just counted is the most recent: kept whole, unless alone over the bound.
            if (2 * key.length + 320 + 16 * impressions <= maxBytes) expect(store.count(key, 0)).toBe(impressions);
          });
        },
      ),
      { numRuns: RUNS || 200, seed: 20_32_3 },
    );
  });
});

describe('invisible characters', () => {
  test('terminalSafe leaves none raw; JSON for a terminal leaves none raw and reads back the same value', () => {
    fc.assert(
      fc.property(invisibleText, (text) => {
        expect(terminalSafe(text)).not.toMatch(RAW);
        expect(terminalSafe(text).includes('\n')).toBe(false);
        const lines = terminalSafe(text, { keepNewlines: true });
        expect(lines).not.toMatch(RAW);
        expect(lines.split('\n')).toHaveLength(text.split('\n').length);
        const json = jsonTerminalSafe(JSON.stringify({ text }, null, 2));
        expect(json).not.toMatch(RAW);
        expect((JSON.parse(json) as { text: string }).text).toBe(text);
      }),
      { numRuns: RUNS || 2_000, seed: 20_32_4 },
    );
  });
  const decodeInput = fc.record({
    text: fc
      .array(
        invisibleText.filter((t) => t.length > 0),
        { minLength: 1, maxLength: 4 },
      )
      .map((ids) => JSON.stringify([{ source: 'a.example', inserter: ids[0], uids: ids.map((id) => ({ id })) }])),
    json: fc.boolean(),
    partners: fc.constant(false),
  });
  test(
    'eidkit decode prints eids hiding text escaped, and --json (not a terminal here) exact',
    () => fuzz('decode', 'invisible', decodeInput, 60),
    60_000,
  );
});
