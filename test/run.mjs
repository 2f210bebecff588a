#!/usr/bin/env node
// The one test command (`npm test`): installs Chromium and redis-server when missing, builds, type-checks, runs the unit
// suites (vitest, size budgets included) and the end-to-end suites (Playwright in Debian's Chromium),
// then prints one summary line `N passed, N failed` counting every suite together.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

const root = fileURLToPath(new URL('..', import.meta.url));
const out = join(root, '.test-results');
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

let passed = 0;
let failed = 0;

function run(label, cmd, args, env = {}) {
  console.log(`\n=== ${label}: ${cmd} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', env: { ...process.env, ...env } });
  return r.status === 0;
}

/** A step that is not itself a test suite counts as one test: it passes or it fails. */
function step(label, cmd, args) {
  if (run(label, cmd, args)) passed++;
  else {
    failed++;
    console.log(`!!! ${label} failed`);
  }
}

/** Installs Debian packages with apt-get when `path` is missing; true when `path` exists afterwards. */
function ensureDebian(path, packages) {
  if (existsSync(path)) return true;
  console.log(`${path} is missing: installing Debian's ${packages.join(', ')} with apt-get`);
  const env = { DEBIAN_FRONTEND: 'noninteractive' };
  run('apt-get update', 'apt-get', ['update', '-q'], env);
  return run(`apt-get install ${packages[0]}`, 'apt-get', ['install', '-y', '-q', '--no-install-recommends', ...packages], env) && existsSync(path);
}

const ensureChromium = () => ensureDebian(process.env.CHROMIUM_PATH || '/usr/bin/chromium', ['chromium', 'fonts-liberation']);
// The Redis suites start their own redis-server (test/support/redis-server.ts).
const ensureRedisServer = () => ensureDebian(process.env.REDIS_SERVER_PATH || '/usr/bin/redis-server', ['redis-server']);

if (ensureChromium()) passed++; else { failed++; console.log('!!! chromium could not be installed'); }
if (ensureRedisServer()) passed++; else { failed++; console.log('!!! redis-server could not be installed'); }

step('build', 'npm', ['run', 'build']);
step('typecheck', 'npm', ['run', 'typecheck']);

// Unit tests (vitest): counted per test.
const vitestJson = join(out, 'vitest.json');
run('unit tests', 'npx', ['vitest', 'run', '--config', 'test/vitest.config.ts', '--reporter=default', '--reporter=json', `--outputFile=${vitestJson}`]);
if (existsSync(vitestJson)) {
  const r = JSON.parse(readFileSync(vitestJson, 'utf8'));
  passed += r.numPassedTests ?? 0;
  failed += (r.numFailedTests ?? 0);
  // A test file that fails to load has no tests but is a failure.
  const brokenFiles = (r.testResults ?? []).filter((f) => f.status === 'failed' && (f.assertionResults ?? []).length === 0).length;
  failed += brokenFiles;
} else {
  failed++;
  console.log('!!! vitest produced no report');
}

// End-to-end tests (Playwright): counted per test.
const pwJson = join(out, 'playwright.json');
run('e2e tests', 'npx', ['playwright', 'test', '--config', 'test/playwright.config.ts'], { EIDKIT_PW_JSON: pwJson });
if (existsSync(pwJson)) {
  const s = JSON.parse(readFileSync(pwJson, 'utf8')).stats ?? {};
  passed += (s.expected ?? 0) + (s.flaky ?? 0);
  failed += (s.unexpected ?? 0);
  if ((s.expected ?? 0) + (s.unexpected ?? 0) + (s.flaky ?? 0) === 0 && (JSON.parse(readFileSync(pwJson, 'utf8')).errors ?? []).length) failed++;
} else {
  failed++;
  console.log('!!! playwright produced no report');
}

console.log(`\n${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
