// The budgets of the shapes of hostile input that cost more than their size (test/fuzz/shapes.ts), each measured
// side by side in one run at the worst case, and printed:
// - a 256 KB POST body whose ext is wide and deep costs at most twice a bare JSON.parse of it, plus 1 ms;
// - a server's heap after 20,000 GET calls with distinct consent strings in 15 KB URLs stays within the consent
//   caches' documented bound (32 MiB per kind);
// - report.add costs at most twice as much for network ids V8 hashes alike as for ordinary ones;
// - the in-memory cap store's heap stays within its documented byte bound (64 MiB) for 100,000 users of 2 KB.
import { afterAll, describe, expect, test } from 'vitest';
import fc from 'fast-check';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { fileURLToPath } from 'node:url';
import {
  MemoryFrequencyCapStore,
  createFrequencyCapper,
  createReport,
  defineFrequencyCap,
} from '../../src/adserver/index.js';
import type { AdCall } from '../../src/adserver/index.js';
// @ts-expect-error plain ESM helpers shared with the unit tests and the bench
import { collidingIds } from '../support/colliding-ids.mjs';
// @ts-expect-error plain ESM helpers shared with the benches
import { interleavedRounds, quantile } from '../bench/rounds.mjs';
import { heapAfterGc, mib } from '../support/heap.js';
import { PARTNERS, POLICY_CONFIG } from './entry-points.js';
import { describeInput, postExcess } from './harness.js';
import { idOfLength, networkCall, wideDeepBombs, wideDeepExtBody } from './shapes.js';

const SAMPLES = Number(process.env.EIDKIT_FUZZ_RUNS) || 60;
const SEED = Number(process.env.EIDKIT_FUZZ_SEED) || 20_232;
const MiB = 2 ** 20;
const dist = fileURLToPath(new URL('../../dist/node/adserver/index.js', import.meta.url));
const lines: string[] = [];
afterAll(() => console.log(lines.join('\n')));
const ms = (v: number) => `${v.toFixed(3)} ms`;

test('no 256 KB body with a wide-and-deep ext costs more than 2× a bare JSON.parse of it + 1 ms', () => {
  const bombs = wideDeepBombs().map((body) => ({ url: '/genericpost', method: 'POST', body }));
  const candidates = [...bombs, ...fc.sample(wideDeepExtBody, { numRuns: SAMPLES, seed: SEED })];
  for (let i = 0; i < 10; i++) postExcess(bombs[0], 1); // compiled before measuring
  const worst = candidates
    .map((input) => postExcess(input, 1))
    .sort((a, b) => b.over - a.over)
    .slice(0, 8)
    .map(({ input }) => postExcess(input, 7))
    .sort((a, b) => b.over - a.over)[0];
  const budget = 2 * worst.bare + 1;
  // The largest bodies on their own: their ratio to the bare parse, which the 1 ms no longer hides.
  const large = candidates
    .filter((c) => c.body.length > 200_000)
    .map((input) => postExcess(input, 5))
    .sort((a, b) => b.full / b.bare - a.full / a.bare)[0];
  lines.push(
    `acceptance wide-and-deep ext: ${candidates.length} bodies up to 256 KB, worst ${ms(worst.full)} CPU against a ` +
      `bare JSON.parse of ${ms(worst.bare)} (budget 2× + 1 ms = ${ms(budget)}): ${describeInput(worst.input)}; ` +
      `of the bodies over 200 KB, the dearest ${ms(large.full)} against ${ms(large.bare)} ` +
      `(${(large.full / large.bare).toFixed(2)}×): ${describeInput(large.input)}`,
  );
  expect(worst.over, describeInput(worst.input)).toBeLessThanOrEqual(0);
  expect(large.over, describeInput(large.input)).toBeLessThanOrEqual(0);
}, 120_000);

/** Starts a child node process on the built package that prints `{"port": N}` once listening. */
async function startServer(script: string, args: string[]) {
  if (!existsSync(dist)) throw new Error('build first: npm run build');
  const file = fileURLToPath(new URL(script, import.meta.url));
  const child = spawn(
    process.execPath,
    [...args.filter((a) => a.startsWith('--')), file, ...args.filter((a) => !a.startsWith('--'))],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.once('data', (d) => resolve((JSON.parse(String(d).split('\n')[0]) as { port: number }).port));
    child.once('exit', (code) => reject(new Error(`the server ended before listening (${code})`)));
  });
  const agent = new Agent({ keepAlive: true, maxSockets: 32 });
  /** One request; its status, text and time to answer. */
  const send = (path: string, body?: string) =>
    new Promise<{ status: number; text: string; ms: number }>((resolve, reject) => {
      const started = performance.now();
      const method = body === undefined ? 'GET' : 'POST';
      const headers = body === undefined ? {} : { 'content-type': 'application/json' };
      const req = request({ host: '127.0.0.1', port, path, method, headers, agent }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode!, text, ms: performance.now() - started }));
      });
      req.on('error', reject);
      req.end(body);
    });
  const stop = () => {
    agent.destroy();
    child.kill('SIGTERM');
  };
  return { send, stop };
}

test('eight 256 KB bodies with wide-and-deep exts in flight cost the server at most 2× what their JSON does', async () => {
  const server = await startServer('./bomb-server.mjs', [
    JSON.stringify({ policy: POLICY_CONFIG, partners: PARTNERS }),
  ]);
  try {
    const eids = Buffer.from(
      JSON.stringify(['id5-sync.com', 'uidapi.com', 'pubcid.org'].map((source) => ({ source, uids: [{ id: 'u1' }] }))),
    ).toString('base64url');
    const normal = `/ac?nwid=1234&siteid=1&pgid=2&fmtid=3&us_privacy=1YNN&eids=${eids}`;
    for (let i = 0; i < 100; i++) await server.send(normal); // the server's code compiled, as in production
    const cpu = async () => Number((await server.send('/__cpu')).text) / 1000;
    /** The server's CPU for eight bodies at once, and the slowest of 20 ordinary calls sent right behind them. */
    const round = async (bodies: string[]) => {
      const before = await cpu();
      const posted = Promise.all(bodies.map((b) => server.send('/genericpost', b)));
      const twenty = await Promise.all(Array.from({ length: 20 }, () => server.send(normal)));
      const answers = await posted;
      expect(answers.every((a) => a.status === 200)).toBe(true);
      expect(twenty.every((a) => a.status === 200)).toBe(true);
      return { cpu: (await cpu()) - before, p100: Math.max(...twenty.map((t) => t.ms)) };
    };
    const withExt = wideDeepBombs().flatMap((b) => [b, b]);
    const unread = wideDeepBombs(true).flatMap((b) => [b, b]);
    const ext = { cpu: Infinity, p100: Infinity };
    const floor = { cpu: Infinity, p100: Infinity };
    // Interleaved, each order in turn, the least of four each: both see the same machine.
    for (let i = 0; i < 4; i++) {
      for (const [bodies, best] of i % 2
        ? ([
            [withExt, ext],
            [unread, floor],
          ] as const)
        : ([
            [unread, floor],
            [withExt, ext],
          ] as const)) {
        const r = await round(bodies);
        best.cpu = Math.min(best.cpu, r.cpu);
        best.p100 = Math.min(best.p100, r.p100);
      }
    }
    lines.push(
      `acceptance wide-and-deep ext in flight: eight 256 KB bodies at once cost the server ${ext.cpu.toFixed(1)} ms ` +
        `of CPU, the same bodies with their ext in a field nobody reads ${floor.cpu.toFixed(1)} ms ` +
        `(${(ext.cpu / floor.cpu).toFixed(2)}×, budget 2×); the slowest of 20 ordinary calls sent right behind them ` +
        `${ext.p100.toFixed(1)} ms against ${floor.p100.toFixed(1)} ms`,
    );
    expect(ext.cpu).toBeLessThanOrEqual(2 * floor.cpu);
  } finally {
    server.stop();
  }
}, 120_000);

describe('a server receiving 20,000 GET calls with distinct consent strings in 15 KB URLs', () => {
  test('keeps its heap within the consent caches’ bound of 32 MiB per kind', async () => {
    if (!existsSync(dist)) throw new Error('build first: npm run build');
    const script = fileURLToPath(new URL('./heap-server.mjs', import.meta.url));
    const server = spawn(process.execPath, ['--expose-gc', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    const agent = new Agent({ keepAlive: true, maxSockets: 16 });
    try {
      const port = await new Promise<number>((resolve, reject) => {
        server.stdout.once('data', (d) => resolve((JSON.parse(String(d).split('\n')[0]) as { port: number }).port));
        server.once('exit', (code) => reject(new Error(`the server ended before listening (${code})`)));
      });
      const get = (path: string) =>
        new Promise<string>((resolve, reject) => {
          const req = request({ host: '127.0.0.1', port, path, agent }, (res) => {
            let text = '';
            res.setEncoding('utf8');
            res.on('data', (d: string) => (text += d));
            res.on('end', () => (res.statusCode === 200 ? resolve(text) : reject(new Error(`${res.statusCode}`))));
          });
          req.on('error', reject);
          req.end();
        });
      const pad = 'p'.repeat(15_000);
      const call = (i: number) => {
        const n = String(i).padStart(15, '0');
        return `/ac?nwid=1&gdpr=1&gdpr_consent=C${n}&gpp=D${n}&pgid=P${n}&pad=${pad}`;
      };
      const send = async (from: number, count: number) => {
        let next = from;
        const worker = async () => {
          while (next < from + count) await get(call(next++));
        };
        await Promise.all(Array.from({ length: 16 }, worker));
      };
      interface HeapAnswer {
        heap: number;
        consent: { tcf: { entries: number; bytes: number }; gpp: { entries: number; bytes: number } };
      }
      await send(0, 500); // compiled, and the caches' first entries made, before the baseline
      const before = JSON.parse(await get('/__heap')) as HeapAnswer;
      const started = performance.now();
      await send(1_000_000, 20_000);
      const took = performance.now() - started;
      const after = JSON.parse(await get('/__heap')) as HeapAnswer;
      const grown = after.heap - before.heap;
      const { tcf, gpp } = after.consent;
      lines.push(
        `acceptance sliced keys: 20,000 GETs with distinct consent strings in 15 KB URLs (${(took / 1000).toFixed(1)} s), ` +
          `heap +${mib(grown)} after full collections (bound 32 MiB per kind, TC and GPP; the caches estimate ` +
          `${mib(tcf.bytes)} for ${tcf.entries} TC strings and ${mib(gpp.bytes)} for ${gpp.entries} GPP strings)`,
      );
      expect(grown).toBeLessThan(32 * MiB);
    } finally {
      agent.destroy();
      server.kill('SIGTERM');
    }
  }, 180_000);
});

test('report.add costs no more than 2× for 20,000 network ids V8 hashes alike as for 20,000 ordinary ones', () => {
  const started = performance.now();
  const colliding = collidingIds(20_000) as number[];
  const searchMs = performance.now() - started;
  const at = new Date('2025-03-01T10:00:00Z');
  const adding = (ids: number[]) => {
    const calls = ids.map(networkCall);
    const report = createReport();
    let i = 0;
    return () => report.add(calls[i++ % calls.length], at);
  };
  const ordinary = Array.from({ length: 20_000 }, (_, i) => 100_000 + i);
  const { perOp, ratios } = interleavedRounds(
    { ordinary: adding(ordinary), colliding: adding(colliding) },
    { rounds: 11, iterations: 20_000, warmup: 40_000, cpu: true },
  );
  const ratio = quantile(ratios.colliding, 0.5);
  const us = (k: 'ordinary' | 'colliding') => (quantile(perOp[k], 0.5) / 1000).toFixed(2);
  lines.push(
    `acceptance colliding integers: report.add ${us('colliding')} µs per call with 20,000 network ids V8 hashes ` +
      `alike (found in ${(searchMs / 1000).toFixed(1)} s) vs ${us('ordinary')} µs with ordinary ids: ` +
      `${ratio.toFixed(2)}× (budget 2×; quartiles ${quantile(ratios.colliding, 0.25).toFixed(2)}–` +
      `${quantile(ratios.colliding, 0.75).toFixed(2)}×)`,
  );
  expect(ratio).toBeLessThanOrEqual(2);
}, 120_000);

test('the in-memory cap store keeps 100,000 users of 2,048-character alternative ids within its 64 MiB', async () => {
  const store = new MemoryFrequencyCapStore();
  const capper = createFrequencyCapper({ store, alternativeIds: { 1: 'id5-sync.com' } });
  const cap = defineFrequencyCap({ item: 'deal:1', max: 3, per: 'day' });
  const before = heapAfterGc();
  for (let i = 0; i < 100_000; i++) {
    // An id as a body's JSON.parse makes it: a flat string of its own.
    const id = JSON.parse(`"${idOfLength(i, 2_048)}"`) as string;
    const call: AdCall = {
      endpoint: 'ac',
      networkId: 1,
      formats: [],
      eids: [{ source: 'id5-sync.com', uids: [{ id }] }],
      consent: {},
      issues: [],
    };
    await capper.take(call, cap);
  }
  const grown = heapAfterGc() - before;
  lines.push(
    `acceptance long keys: 100,000 users of 2,048-character alternative ids through the capper: heap +${mib(grown)} ` +
      `after full collections, ${store.size} users kept (estimated ${mib(store.bytes)}; bound 64 MiB)`,
  );
  expect(store.bytes).toBeLessThanOrEqual(64 * MiB);
  expect(grown).toBeLessThanOrEqual(64 * MiB);
}, 120_000);
