#!/usr/bin/env node
// The one test command (`npm test`): installs the browsers (Chromium, Firefox ESR, WebKitGTK's WebDriver and Xvfb) and
// redis-server when missing, builds, type-checks, lints (when package.json has a `lint` script), runs the unit suites
// (vitest, size budgets included) and the end-to-end suites (test/e2e, in Chromium, Firefox and WebKit), prints each
// engine's count and the tests skipped in an engine with the reason, then the steps' outcome and one summary line
// `N passed, N failed` counting the tests of every suite together. A step (an install, the build, the type check,
// the lint, a suite that could not run) is no test: it is not counted, but one that fails fails the run.
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
/** Each step's label and whether it succeeded, in order. */
const steps = [];

function run(label, cmd, args, env = {}) {
  console.log(`\n=== ${label}: ${cmd} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', env: { ...process.env, ...env } });
  return r.status === 0;
}

/** Records a step's outcome (not a test: never counted in the summary, but a failure fails the run). */
function stepDone(label, ok, why = 'failed') {
  steps.push({ label, ok });
  if (!ok) console.log(`!!! ${label} ${why}`);
}

/** Runs a command as a step. */
function step(label, cmd, args) {
  stepDone(label, run(label, cmd, args));
}

/**
 * `apt-get update`, waiting (up to 5 minutes) while another apt-get holds the package lists' lock: apt-get
 * update gives up at once there, whatever DPkg::Lock::Timeout says (that option covers the dpkg lock only).
 */
function aptGetUpdate(env) {
  const deadline = Date.now() + 300_000;
  for (;;) {
    console.log('\n=== apt-get update');
    const stdio = ['inherit', 'inherit', 'pipe'];
    const r = spawnSync('apt-get', ['update', '-q'], {
      cwd: root,
      stdio,
      env: { ...process.env, ...env },
      encoding: 'utf8',
    });
    process.stderr.write(r.stderr ?? '');
    if (r.status === 0 || !/Could not get lock/.test(r.stderr ?? '') || Date.now() > deadline) return r.status === 0;
    console.log('the package lists are locked by another apt-get: trying again in 5 s');
    spawnSync('sleep', ['5']);
  }
}

/** Installs Debian packages with apt-get when `path` is missing; true when `path` exists afterwards. */
function ensureDebian(path, packages) {
  if (existsSync(path)) return true;
  console.log(`${path} is missing: installing Debian's ${packages.join(', ')} with apt-get`);
  const env = { DEBIAN_FRONTEND: 'noninteractive' };
  aptGetUpdate(env);
  // A dpkg lock held by another install waits (up to 5 minutes) instead of failing.
  const args = ['-o', 'DPkg::Lock::Timeout=300', 'install', '-y', '-q', '--no-install-recommends', ...packages];
  return run(`apt-get install ${packages[0]}`, 'apt-get', args, env) && existsSync(path);
}

const ensureChromium = () =>
  ensureDebian(process.env.CHROMIUM_PATH || '/usr/bin/chromium', ['chromium', 'fonts-liberation']);
// The Redis suites start their own redis-server (test/support/redis-server.ts).
const ensureRedisServer = () =>
  ensureDebian(process.env.REDIS_SERVER_PATH || '/usr/bin/redis-server', ['redis-server']);

// Firefox is driven over WebDriver BiDi (no driver); WebKit through WebKitWebDriver, on an Xvfb display.
const ensureFirefox = () => ensureDebian(process.env.FIREFOX_PATH || '/usr/bin/firefox-esr', ['firefox-esr']);
const ensureWebKit = () =>
  ensureDebian(process.env.WEBKIT_DRIVER_PATH || '/usr/bin/WebKitWebDriver', ['webkit2gtk-driver']);
const ensureXvfb = () => ensureDebian('/usr/bin/Xvfb', ['xvfb']);

const installs = [
  ['chromium', ensureChromium],
  ['firefox-esr', ensureFirefox],
  ['webkit2gtk-driver', ensureWebKit],
  ['xvfb', ensureXvfb],
  ['redis-server', ensureRedisServer],
];
for (const [name, ensure] of installs) stepDone(`install ${name}`, ensure(), 'could not be installed');

step('build', 'npm', ['run', 'build']);
step('typecheck', 'npm', ['run', 'typecheck']);
if (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).scripts?.lint) step('lint', 'npm', ['run', 'lint']);

// Unit tests (vitest): counted per test. The Redis Cluster suites (several redis-server nodes and ad-server processes
// each) run after the others, one file at a time, so that their bursts and failovers are not timed against the
// other suites' load on the same cores.
const CLUSTER_SUITES = 'test/**/*cluster*.test.ts'; // the second run selects the same files by name: cluster
function unitRun(label, args, file) {
  const json = join(out, file);
  run(label, 'npx', [
    'vitest',
    'run',
    '--config',
    'test/vitest.config.ts',
    '--reporter=default',
    '--reporter=json',
    `--outputFile=${json}`,
    ...args,
  ]);
  if (!existsSync(json)) return stepDone(label, false, 'produced no report');
  const r = JSON.parse(readFileSync(json, 'utf8'));
  passed += r.numPassedTests ?? 0;
  failed += r.numFailedTests ?? 0;
  // A test file that fails to load has no tests to count, but fails the run.
  const brokenFiles = (r.testResults ?? []).filter(
    (f) => f.status === 'failed' && (f.assertionResults ?? []).length === 0,
  ).length;
  stepDone(`${label} files`, brokenFiles === 0, `failed: ${brokenFiles} could not load`);
}
unitRun('unit tests', ['--exclude', CLUSTER_SUITES], 'vitest.json');
unitRun('Redis Cluster suites', ['--no-file-parallelism', 'cluster'], 'vitest-cluster.json');

// End-to-end tests (Playwright runner, one project per engine): counted per test and per engine.
const pwJson = join(out, 'playwright.json');
run('e2e tests', 'npx', ['playwright', 'test', '--config', 'test/playwright.config.ts'], { EIDKIT_PW_JSON: pwJson });
if (existsSync(pwJson)) {
  const report = JSON.parse(readFileSync(pwJson, 'utf8'));
  const engines = new Map();
  const skips = [];
  const visit = (suite) => {
    for (const spec of suite.specs ?? []) {
      for (const t of spec.tests ?? []) {
        const count = engines.get(t.projectName) ?? { passed: 0, failed: 0, skipped: 0 };
        engines.set(t.projectName, count);
        if (t.status === 'expected' || t.status === 'flaky') count.passed++;
        else if (t.status === 'skipped') {
          count.skipped++;
          const reason = (t.annotations ?? []).find((a) => a.type === 'skip')?.description ?? 'no reason given';
          skips.push(`  skipped in ${t.projectName}: ${spec.title} (${reason})`);
        } else count.failed++;
      }
    }
    (suite.suites ?? []).forEach(visit);
  };
  (report.suites ?? []).forEach(visit);
  console.log('\ne2e per engine:');
  for (const [engine, c] of engines) {
    console.log(`  ${engine}: ${c.passed} passed, ${c.failed} failed${c.skipped ? `, ${c.skipped} skipped` : ''}`);
    passed += c.passed;
    failed += c.failed;
  }
  skips.forEach((line) => console.log(line));
  // A run that could not start (a config or import error) has no tests to count, but fails the run.
  stepDone('e2e run', engines.size > 0 && !(report.errors ?? []).length, 'failed: no engine ran, or errors');
} else stepDone('e2e tests', false, 'produced no report');

const stepsFailed = steps.filter((s) => !s.ok);
const failedList = stepsFailed.length ? ` (${stepsFailed.map((s) => s.label).join(', ')})` : '';
console.log(`\nsteps: ${steps.length - stepsFailed.length} ok, ${stepsFailed.length} failed${failedList}`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 && stepsFailed.length === 0 ? 0 : 1);
