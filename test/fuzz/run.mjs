#!/usr/bin/env node
// `npm run fuzz`: the fuzz suite's long run. Builds, then runs every test/fuzz property for a given time each with a
// new seed (printed), shrinks a failure and saves it to test/fuzz/corpus/ (replayed by every `npm test`), samples
// the acceptance measurements more widely, and ends with the worst CPU per call found per entry point.
//   npm run fuzz                        60 s per property
//   npm run fuzz -- --seconds 300       5 minutes per property
//   npm run fuzz -- --seed 1234         one seed for every property (to replay a run)
//   npm run fuzz -- --samples 5000      candidates per acceptance measurement (default 1,000)
//   npm run fuzz -- --no-build          skip the build (dist/ is fresh)
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = fileURLToPath(new URL('../..', import.meta.url));
const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '60' },
    seed: { type: 'string' },
    samples: { type: 'string', default: '1000' },
    'no-build': { type: 'boolean' },
  },
});
const corpus = join(root, 'test/fuzz/corpus');
const corpusFiles = () => (existsSync(corpus) ? readdirSync(corpus) : []);

/** Runs the suite; returns vitest's exit status. */
function run(seconds, report) {
  const timeout = String((seconds + 120) * 1000);
  const env = {
    ...process.env,
    EIDKIT_FUZZ_SECONDS: String(seconds),
    EIDKIT_FUZZ_SAVE: '1',
    EIDKIT_FUZZ_REPORT: report,
    EIDKIT_FUZZ_RUNS: values.samples,
    ...(values.seed ? { EIDKIT_FUZZ_SEED: values.seed } : {}),
  };
  const args = ['vitest', 'run', '--config', 'test/vitest.config.ts', 'test/fuzz', '--testTimeout', timeout];
  return spawnSync('npx', args, { cwd: root, stdio: 'inherit', env }).status ?? 1;
}

/** Prints each property's seed and cases, then the worst CPU per call per entry point. */
function summarize(report, before) {
  const text = existsSync(report) ? readFileSync(report, 'utf8') : '';
  const lines = text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
  console.log('\nfuzz summary (seed and cases per property; replay one with --seed):');
  for (const l of lines) {
    const took = `${l.runs} cases in ${Math.round(l.ms / 1000)} s${l.failed ? ', FAILED' : ''}`;
    console.log(`  ${l.entry} / ${l.property}: seed ${l.seed}, ${took}`);
  }
  const worst = new Map();
  const cases = new Map();
  for (const l of lines) {
    if (!worst.has(l.entry) || worst.get(l.entry).worstMs < l.worstMs) worst.set(l.entry, l);
    cases.set(l.entry, (cases.get(l.entry) ?? 0) + l.runs);
  }
  console.log('worst CPU per call found, per entry point:');
  for (const [entry, l] of worst) {
    console.log(`  ${entry}: ${cases.get(entry)} cases, worst ${l.worstMs?.toFixed(3)} ms: ${l.worstInput}`);
  }
  const added = corpusFiles().filter((f) => !before.has(f));
  if (added.length) {
    console.log('new corpus cases (commit them; npm test replays them):');
    for (const f of added) console.log(`  test/fuzz/corpus/${f}`);
  }
}

const seconds = Number(values.seconds);
if (!(seconds > 0)) {
  console.error('fuzz: --seconds must be a positive number');
  process.exitCode = 2;
} else {
  const before = new Set(corpusFiles());
  const built = values['no-build'] ? 0 : spawnSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' }).status;
  if (built !== 0) process.exitCode = built ?? 1;
  else {
    const report = join(mkdtempSync(join(tmpdir(), 'eidkit-fuzz-')), 'report.jsonl');
    console.log(`fuzz: ${seconds} s per property`);
    process.exitCode = run(seconds, report);
    summarize(report, before);
  }
}
