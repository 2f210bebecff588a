/**
 * Every exchange the simulator and client suites make conforms to the served document: the suites run again in a
 * child vitest with EIDKIT_SIMULATOR_RECORD set, so every simulator they start appends its exchanges (credentials
 * scrubbed) to a file, and each one is checked by the independent validator (validator.ts).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';
import { createDealApiSimulator, type SimulatorExchange } from '../../src/simulator/index.js';
import { explain, validatorFor } from './helpers.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
/** The suites that talk to the simulator: its own, the client's and deals-as-code's. */
const SUITES = ['test/simulator', 'test/deals/client', 'test/deals/plan', 'test/cli/deals-plan.test.ts'];

function runSuites(file: string): Promise<{ code: number; output: string }> {
  const vitest = join(root, 'node_modules', 'vitest', 'vitest.mjs');
  const args = [vitest, 'run', '--config', 'test/vitest.config.ts', '--reporter=dot', ...SUITES];
  return new Promise((done) => {
    const env = { ...process.env, EIDKIT_SIMULATOR_RECORD: file };
    execFile(process.execPath, args, { cwd: root, env, maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
      done({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, output: `${stdout}${stderr}` });
    });
  });
}

test('every exchange the simulator and client suites make conforms to the document', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'eidkit-contract-'));
  try {
    const file = join(dir, 'exchanges.ndjson');
    const run = await runSuites(file);
    expect(existsSync(file), run.output.slice(-2000)).toBe(true);
    // The suites' own verdicts are theirs to report (npm test runs them too); shown here for context.
    const summary = /Tests\s+.*$/m.exec(run.output.replace(/\x1b\[[0-9;]*m/g, ''))?.[0];
    console.log(`suites run for recording: ${summary ?? run.output.slice(-300)}`);
    const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean);
    const exchanges = lines.map((l) => JSON.parse(l) as SimulatorExchange);
    const doc = (await (await createDealApiSimulator().fetch('/openapi.json')).json()) as Record<string, unknown>;
    const validator = validatorFor(doc);
    const violations = exchanges.flatMap((e) => validator.check(e));
    const operationOf = (e: SimulatorExchange) => validator.find(e.request.method, new URL(e.request.url).pathname);
    const operations = new Set(exchanges.map((e) => operationOf(e)?.operation.id).filter(Boolean));
    console.log(
      `contract (suites' exchanges): operations covered ${operations.size}/${validator.operations.length}, ` +
        `exchanges checked ${exchanges.length}, violations: ${violations.length}`,
    );
    expect(violations, explain(violations.slice(0, 40))).toEqual([]);
    expect(exchanges.length).toBeGreaterThan(500);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 600_000);
