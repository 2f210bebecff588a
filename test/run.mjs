#!/usr/bin/env node
// The one test command (`npm test`): installs the browsers (Chromium, Firefox ESR, WebKitGTK's WebDriver and Xvfb) and
// redis-server when missing, builds, type-checks, runs the unit suites (vitest, size budgets included) and the
// end-to-end suites (test/e2e, in Chromium, Firefox and WebKit), prints each engine's count and the tests skipped in
// an engine with the reason, then one summary line `N passed, N failed` counting every suite together.
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
  // A dpkg lock held by another install waits (up to 5 minutes) instead of failing.
  const lock = ['-o', 'DPkg::Lock::Timeout=300'];
  run('apt-get update', 'apt-get', [...lock, 'update', '-q'], env);
  const args = [...lock, 'install', '-y', '-q', '--no-install-recommends', ...packages];
  return run(`apt-get install ${packages[0]}`, 'apt-get', args, env) && existsSync(path);
}

const ensureChromium = () => ensureDebian(process.env.CHROMIUM_PATH || '/usr/bin/chromium', ['chromium', 'fonts-liberation']);
// The Redis suites start their own redis-server (test/support/redis-server.ts).
const ensureRedisServer = () => ensureDebian(process.env.REDIS_SERVER_PATH || '/usr/bin/redis-server', ['redis-server']);

// Firefox is driven over WebDriver BiDi (no driver); WebKit through WebKitWebDriver, on an Xvfb display.
const ensureFirefox = () => ensureDebian(process.env.FIREFOX_PATH || '/usr/bin/firefox-esr', ['firefox-esr']);
const ensureWebKit = () => ensureDebian(process.env.WEBKIT_DRIVER_PATH || '/usr/bin/WebKitWebDriver', ['webkit2gtk-driver']);
const ensureXvfb = () => ensureDebian('/usr/bin/Xvfb', ['xvfb']);

const installs = [
  ['chromium', ensureChromium],
  ['firefox-esr', ensureFirefox],
  ['webkit2gtk-driver', ensureWebKit],
  ['xvfb', ensureXvfb],
  ['redis-server', ensureRedisServer],
];
for (const [name, ensure] of installs) {
  if (ensure()) passed++;
  else {
    failed++;
    console.log(`!!! ${name} could not be installed`);
  }
}

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
  // A run that could not start (a config or import error) has no tests but errors.
  if (engines.size === 0 || (report.errors ?? []).length) failed++;
} else {
  failed++;
  console.log('!!! playwright produced no report');
}

console.log(`\n${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
