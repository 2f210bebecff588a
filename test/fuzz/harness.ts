// The fuzz suite's driver: runs a property over an entry point (test/fuzz/entry-points.ts), times every case,
// keeps the worst CPU per entry point, prints seeds and worst cases, and (under `npm run fuzz`) saves a failing
// case to test/fuzz/corpus/ so that every later `npm test` replays it. Settings come from the environment:
//   EIDKIT_FUZZ_RUNS     cases per property (default: each property's own, sized for `npm test`)
//   EIDKIT_FUZZ_SECONDS  run each property for this long instead (npm run fuzz)
//   EIDKIT_FUZZ_SEED     the seed of every property (default: fixed per property; `random` for a new one each run)
//   EIDKIT_FUZZ_SAVE     1: save failing cases to the corpus (npm run fuzz)
//   EIDKIT_FUZZ_REPORT   file to append one JSON line per property to (npm run fuzz's summary)
import fc from 'fast-check';
import { appendFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { buildBidRequest, parseAdCall } from '../../src/adserver/index.js';
import { ENTRY_POINTS, PARTNERS, adCallInput, newPolicy } from './entry-points.js';
import type { RequestInput } from './arbitraries.js';
import type { ForwardingPolicy } from '../../src/adserver/index.js';
import type { EntryName } from './entry-points.js';

export const CORPUS_DIR = fileURLToPath(new URL('./corpus/', import.meta.url));

const env = process.env;
const seconds = Number(env.EIDKIT_FUZZ_SECONDS) || 0;
/** True under `npm run fuzz`: long runs, shrinking, failures saved. */
export const LONG_RUN = seconds > 0;

/** The CPU a piece of work cost, in ms: the process's CPU time, and never more than the wall time (so the
 * compiler and GC threads working beside it do not count beyond the time it took). */
export function cpuMs(start: { cpu: NodeJS.CpuUsage; wall: number }): number {
  const c = process.cpuUsage(start.cpu);
  return Math.min((c.user + c.system) / 1000, performance.now() - start.wall);
}

/** A start mark for {@link cpuMs}. */
export const mark = () => ({ cpu: process.cpuUsage(), wall: performance.now() });

/** Runs `fn` and returns what it returned with its CPU time in ms. */
export async function timed<T>(fn: () => T | Promise<T>): Promise<{ value: T; ms: number }> {
  const m = mark();
  const value = await fn();
  return { value, ms: cpuMs(m) };
}

/** CPU of parse + forwarding policy + a bid request per partner, with a fresh policy (no string decoded before). */
export function pathCpu(input: RequestInput, fresh: () => ForwardingPolicy = newPolicy): number {
  const policy = fresh();
  const parseInput = adCallInput(input);
  const m = mark();
  const call = parseAdCall(parseInput);
  for (const p of PARTNERS) buildBidRequest(call, p, { policy });
  return cpuMs(m);
}

/** CPU of a bare `JSON.parse` of `text` (failing or not): the floor a POST body's cost is held to. */
export function bareParseCpu(text: string): number {
  const m = mark();
  try {
    JSON.parse(text);
  } catch {
    // a body that is not JSON: the bare parse fails too
  }
  return cpuMs(m);
}

/** A request's body as the text a server reads: bytes decoded as UTF-8 as the parser does (a leading BOM dropped). */
export function textOf(body: RequestInput['body']): string {
  if (typeof body === 'string') return body;
  return body && 'base64' in body ? new TextDecoder().decode(Buffer.from(body.base64, 'base64')) : '';
}

/** The least of `n` measures: a GC pause or a compile is not blamed on the case. */
export const leastOf = (n: number, f: () => number) => Math.min(...Array.from({ length: n }, f));

/**
 * How much a POST body costs over its budget: the whole path against twice a bare JSON.parse of it plus 1 ms, each
 * the least of `n` interleaved measures, so that both see the same machine.
 */
export function postExcess(input: RequestInput, n: number, factor = 2, extraMs = 1) {
  const text = textOf(input.body);
  let full = Infinity;
  let bare = Infinity;
  for (let i = 0; i < n; i++) {
    bare = Math.min(bare, bareParseCpu(text));
    full = Math.min(full, pathCpu(input));
  }
  return { input, full, bare, over: full - (factor * bare + extraMs) };
}

/** The worst case seen per entry point in this process. */
export interface Worst {
  entry: EntryName;
  cases: number;
  worstMs: number;
  /** The worst case's input, cut for printing. */
  worstInput: string;
  seeds: { property: string; seed: number; runs: number }[];
}
const worst = new Map<EntryName, Worst>();

/** A short printable description of an input (lengths instead of long strings, no raw control characters). */
export function describeInput(input: unknown): string {
  const cut = (_k: string, v: unknown) =>
    typeof v === 'string' && v.length > 60 ? `${v.slice(0, 40)}…(${v.length} chars)` : v;
  const text = JSON.stringify(input, cut) ?? String(input);
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}

function record(entry: EntryName, ms: number, input: unknown): void {
  const w = worst.get(entry) ?? { entry, cases: 0, worstMs: 0, worstInput: '', seeds: [] };
  w.cases++;
  if (ms > w.worstMs) {
    w.worstMs = ms;
    w.worstInput = describeInput(input);
  }
  worst.set(entry, w);
}

/** Runs one case of an entry point: timed (re-measured up to twice when over budget, the least counting), checked. */
export async function runCase(entry: EntryName, input: unknown): Promise<number> {
  const ep = ENTRY_POINTS[entry];
  const budget = ep.budgetMs(input as never);
  let best = Infinity;
  let output: unknown;
  // A case far over budget is a bomb, not noise: it is not run again.
  for (let attempt = 0; attempt < 3 && best > budget && (attempt === 0 || best < 10 * budget); attempt++) {
    const ctx = await ep.prepare?.(input as never);
    const { value, ms } = await timed(() => ep.run(input as never, ctx as never));
    output = value;
    best = Math.min(best, ms);
  }
  record(entry, best, input);
  ep.check(input as never, output as never);
  if (best > budget) throw new Error(`${entry}: ${best.toFixed(2)} ms of CPU, over its ${budget.toFixed(2)} ms budget`);
  return best;
}

function seedOf(property: string): number {
  if (env.EIDKIT_FUZZ_SEED === 'random' || (LONG_RUN && !env.EIDKIT_FUZZ_SEED)) return (Math.random() * 2 ** 31) | 0;
  if (env.EIDKIT_FUZZ_SEED) return Number(env.EIDKIT_FUZZ_SEED) | 0;
  return createHash('sha256').update(property).digest().readInt32LE(0);
}

/** Saves a failing case as test/fuzz/corpus/<entry>-<hash>.json; returns the file name. */
export function saveCase(entry: EntryName, property: string, seed: number, input: unknown, error: string): string {
  const json = JSON.stringify(input);
  const name = `${entry}-${createHash('sha256').update(json).digest('hex').slice(0, 12)}.json`;
  mkdirSync(CORPUS_DIR, { recursive: true });
  const saved = { entry, property, seed, error: error.slice(0, 500), input };
  writeFileSync(join(CORPUS_DIR, name), JSON.stringify(saved, null, 1) + '\n');
  return name;
}

/** A saved case: the entry point and the input that failed it. */
export interface CorpusCase {
  file: string;
  entry: EntryName;
  property: string;
  input: unknown;
}

/** Every case saved in test/fuzz/corpus/. */
export function loadCorpus(): CorpusCase[] {
  let files: string[];
  try {
    files = readdirSync(CORPUS_DIR)
      .filter((f) => f.endsWith('.json'))
      .sort();
  } catch {
    return [];
  }
  const read = (file: string) => JSON.parse(readFileSync(join(CORPUS_DIR, file), 'utf8')) as Omit<CorpusCase, 'file'>;
  return files.map((file) => ({ file, ...read(file) }));
}

/**
 * Runs `arb` through an entry point: every case must keep the entry point's invariants within its CPU budget.
 * `runs` is the `npm test` size; EIDKIT_FUZZ_RUNS and EIDKIT_FUZZ_SECONDS override it.
 */
export async function fuzz<I>(entry: EntryName, property: string, arb: fc.Arbitrary<I>, runs: number): Promise<void> {
  const seed = seedOf(property);
  const numRuns = LONG_RUN ? 1_000_000 : Number(env.EIDKIT_FUZZ_RUNS) || runs;
  // Warm-up, untimed and unrecorded: the first calls of an entry point compile its code (and the tag server's first
  // request per script compresses it), which is not what a case costs.
  const ep = ENTRY_POINTS[entry];
  for (const input of fc.sample(arb, { numRuns: 5, seed })) {
    try {
      await ep.run(input as never, (await ep.prepare?.(input as never)) as never);
    } catch {
      // the property finds it again, with its seed
    }
  }
  const started = performance.now();
  const details = await fc.check(
    fc.asyncProperty(arb, async (input) => {
      await runCase(entry, input);
    }),
    {
      seed,
      numRuns,
      // In `npm test` a failure is reported as found (shrinking a slow case costs minutes); the long run shrinks it.
      endOnFailure: !LONG_RUN,
      ...(LONG_RUN ? { interruptAfterTimeLimit: seconds * 1000, markInterruptAsFailure: false } : {}),
    },
  );
  const w = worst.get(entry);
  const ms = Math.round(performance.now() - started);
  const line = { entry, property, seed, runs: details.numRuns, ms, failed: details.failed };
  w?.seeds.push({ property, seed, runs: details.numRuns });
  console.log(`fuzz ${entry} / ${property}: seed ${seed}, ${details.numRuns} cases${details.failed ? ', FAILED' : ''}`);
  if (env.EIDKIT_FUZZ_REPORT) {
    const worstCase = { worstMs: w?.worstMs, worstInput: w?.worstInput };
    appendFileSync(env.EIDKIT_FUZZ_REPORT, JSON.stringify({ ...line, ...worstCase }) + '\n');
  }
  if (details.failed) {
    const input = details.counterexample?.[0];
    const cause = details.errorInstance;
    const error = cause instanceof Error ? cause.message : String(cause);
    const file = env.EIDKIT_FUZZ_SAVE === '1' ? saveCase(entry, property, seed, input, error) : undefined;
    const saved = file ? ` (saved as test/fuzz/corpus/${file})` : '';
    const where = `seed ${seed}, path ${details.counterexamplePath}`;
    throw new Error(`${entry} / ${property} failed (${where})${saved}: ${error}\ninput: ${describeInput(input)}`);
  }
}

/** The worst CPU per entry point seen in this process, one line each (printed after each fuzz file). */
export function worstSummary(): string {
  return [...worst.values()]
    .map((w) => `fuzz worst ${w.entry}: ${w.cases} cases, worst ${w.worstMs.toFixed(3)} ms CPU: ${w.worstInput}`)
    .join('\n');
}
