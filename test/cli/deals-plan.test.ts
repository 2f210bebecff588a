/**
 * `eidkit deals plan | apply | schema`, spawning the built binary (dist/node/cli/index.js: run `npm run build` first).
 */
import { describe, expect, test, vi } from 'vitest';
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { bin, eidkit, home as work } from './helpers.js';
import { DEFAULTS, manyDeals } from '../deals/plan/helpers.js';

// Each test spawns the binary several times; a loaded machine (the full suite, six helpers) needs room.
vi.setConfig({ testTimeout: 90_000 });

let runs = 0;
/** A fresh simulator data file and a deals file holding `deals`. */
function workspace(deals: Record<string, unknown>[]) {
  const n = ++runs;
  const file = join(work, `deals-${n}.yaml`);
  writeFileSync(file, stringify({ defaults: DEFAULTS, deals }));
  const data = join(work, `sim-${n}.json`);
  return {
    file,
    rewrite: (next: Record<string, unknown>[]) => writeFileSync(file, stringify({ defaults: DEFAULTS, deals: next })),
    /**
     * On a terminal (util-linux `script` gives the command a pty): runs `eidkit <args> --simulator`, typing `typed`.
     */
    onTerminal: (args: string[], typed: string) =>
      new Promise<{ code: number; output: string }>((resolve) => {
        const command = [process.execPath, bin, ...args, '--simulator', '--simulator-data', data].join(' ');
        const child = execFile(
          'script',
          ['-qec', command, '/dev/null'],
          { env: { PATH: process.env.PATH!, HOME: work } },
          (err, stdout) => resolve({ code: err ? Number((err as { code?: number }).code) : 0, output: stdout }),
        );
        child.stdin?.end(typed);
      }),
    /** Runs `eidkit <args> --simulator` on this workspace's data; stdin (never a terminal here) gets `input`. */
    eidkit: (args: string[], simulator = true, input = '') =>
      eidkit([...args, ...(simulator ? ['--simulator', '--simulator-data', data] : [])], {}, input),
  };
}

describe('eidkit deals plan', () => {
  test('prints one aligned line per key with the quota and the summary, and exits 0 with changes (7 with --detailed-exitcode)', async () => {
    const ws = workspace(manyDeals(3));
    expect((await ws.eidkit(['deals', 'plan', '-f', ws.file, '--detailed-exitcode'])).code).toBe(7);
    const r = await ws.eidkit(['deals', 'plan', '-f', ws.file]);
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')).toEqual([
      '+ create  deal-01    "Deal 1"',
      '+ create  deal-02    "Deal 2"',
      '+ create  deal-03    "Deal 3"',
      '',
      expect.stringMatching(
        /^Quota today \(\d{4}-\d\d-\d\d UTC, resets \S+\): 15 of 15 creations and 500 of 500 updates left \(estimated from the live deals\)$/,
      ),
      'Plan: 3 to create, 0 to update, 0 to pause, 0 to resume, 0 to delete, 0 unchanged, 0 refused, 0 not in the file, 0 deferred.',
      '',
    ]);
    expect(r.stderr).toBe('');
  });

  test('-f - reads the deals file from stdin', async () => {
    const ws = workspace([]);
    const r = await ws.eidkit(
      ['deals', 'plan', '-f', '-', '--json'],
      true,
      JSON.stringify({ defaults: DEFAULTS, deals: manyDeals(1) }),
    );
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ source: '<stdin>', items: [{ key: 'deal-01', action: 'create' }] });
    const usage = await ws.eidkit(['deals', 'plan', '-f', ws.file, '--creation-quota', 'many']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/--creation-quota must be an integer ≥ 0, got "many"/);
  });

  test('--json is the plan object: per key action, id, changes, issues; summary and quota', async () => {
    const ws = workspace(manyDeals(2));
    const r = await ws.eidkit(['deals', 'plan', '-f', ws.file, '--json']);
    const plan = JSON.parse(r.stdout);
    expect(Object.keys(plan)).toEqual(['source', 'at', 'changes', 'issues', 'summary', 'quota', 'items']);
    expect(plan.items).toEqual([
      { key: 'deal-01', name: 'Deal 1', action: 'create' },
      { key: 'deal-02', name: 'Deal 2', action: 'create' },
    ]);
    expect(plan.summary).toEqual({
      create: 2,
      update: 0,
      pause: 0,
      resume: 0,
      delete: 0,
      noChange: 0,
      refused: 0,
      orphan: 0,
      deferred: 0,
    });
    expect(plan.quota).toMatchObject({ creationsLeft: 15, creationsPerDay: 15, updatesLeft: 500, updatesPerDay: 500 });
  });

  test('an invalid deal: plan names the key and the field (exit 3); apply refuses unless --skip-invalid', async () => {
    const deals = manyDeals(2);
    deals[1] = { ...deals[1], pricingModel: 7 };
    const ws = workspace(deals);
    const plan = await ws.eidkit(['deals', 'plan', '-f', ws.file]);
    expect(plan.code).toBe(3);
    expect(plan.stdout).toMatch(/^! refused {2}deal-02 {4}"Deal 2"\n {6}pricingModel: must be one of 0, 1, 2, 3$/m);
    const refused = await ws.eidkit(['deals', 'apply', '-f', ws.file, '--yes']);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toMatch(
      /eidkit: 1 deal is invalid \(deal-02\); fix it or pass --skip-invalid; nothing was applied/,
    );
    const skipped = await ws.eidkit(['deals', 'apply', '-f', ws.file, '--yes', '--skip-invalid']);
    expect(skipped.code).toBe(8);
    expect(skipped.stdout).toMatch(/^\+ created +deal-01 +#\d+$/m);
    expect(skipped.stdout).toMatch(/^> skipped +deal-02 +invalid \(--skip-invalid\)$/m);
    // Now deal-01 is live: skipping deal-02 again applies nothing, and the end state is the same as after the first
    // run (the valid deals in place, the invalid one skipped): the same exit code, so a daily job keeps passing.
    const again = await ws.eidkit(['deals', 'apply', '-f', ws.file, '--yes', '--skip-invalid']);
    expect(again.code).toBe(8);
    // A file whose every deal is invalid applies nothing: a validation failure.
    const allBad = workspace(manyDeals(1).map((d) => ({ ...d, pricingModel: 7 })));
    expect((await allBad.eidkit(['deals', 'apply', '-f', allBad.file, '--yes', '--skip-invalid'])).code).toBe(3);
  });

  test('a deal edited by hand shows as drift with the changed fields', async () => {
    const ws = workspace(manyDeals(2));
    expect((await ws.eidkit(['deals', 'apply', '-f', ws.file, '--yes'])).code).toBe(0);
    const id = /deal-02 +#(\d+)/.exec((await ws.eidkit(['deals', 'plan', '-f', ws.file])).stdout)![1];
    expect((await ws.eidkit(['deals', 'update', id, '--set', 'price=9', '--json'])).code).toBe(0);
    const r = await ws.eidkit(['deals', 'plan', '-f', ws.file, '--hide-unchanged', '--detailed-exitcode']);
    expect(r.code).toBe(7);
    expect(r.stdout.split('\n').slice(0, 2)).toEqual([
      `~ update  deal-02  #${id}  "Deal 2"  changed outside eidkit since the last apply`,
      '      price: 9 -> 1.25',
    ]);
  });
});

describe('eidkit deals apply', () => {
  test('creates within the daily quota with progress on stderr, defers the rest (exit 7), and says when to run again', async () => {
    const ws = workspace(manyDeals(17));
    const r = await ws.eidkit(['deals', 'apply', '-f', ws.file, '--yes']);
    expect(r.code).toBe(7);
    const progress = r.stderr.trim().split('\n');
    expect(progress).toHaveLength(15);
    expect(progress[0]).toMatch(/^\[ 1\/17\] create deal-01: created #\d+$/);
    expect(r.stdout).toMatch(/^\+ created {3}deal-15 {2}#\d+$/m);
    expect(r.stdout).toMatch(/^> deferred {2}deal-16 {11}to \d{4}-\d\d-\d\d \(daily creation quota\)$/m);
    expect(r.stdout).toMatch(
      /^Applied .*deals-\d+\.yaml: 15 created, 0 updated, 0 paused, 0 resumed, 0 deleted; 2 deferred, 0 failed, 0 skipped\.$/m,
    );
    expect(r.stdout).toMatch(
      /^2 changes wait for the daily quota: run apply again on \d{4}-\d\d-\d\d \(UTC\) or later\.$/m,
    );
  });

  test('a second apply right after is a no-op (exit 0); --json gives every outcome', async () => {
    const ws = workspace(manyDeals(3));
    const first = await ws.eidkit(['deals', 'apply', '-f', ws.file, '--yes', '--json']);
    expect(first.code).toBe(0);
    const result = JSON.parse(first.stdout);
    expect(result.summary).toEqual({
      created: 3,
      recovered: 0,
      updated: 0,
      paused: 0,
      resumed: 0,
      deleted: 0,
      deferred: 0,
      failed: 0,
      skipped: 0,
    });
    expect(result.items[0]).toEqual({ key: 'deal-01', action: 'create', status: 'done', id: expect.any(Number) });
    const again = await ws.eidkit(['deals', 'apply', '-f', ws.file, '--yes']);
    expect(again.code).toBe(0);
    expect(again.stderr).toMatch(/^No changes: the live deals match /);
    expect(again.stdout).toBe('');
    expect((await ws.eidkit(['deals', 'plan', '-f', ws.file])).code).toBe(0);
  });

  test('asks for --yes when stdin is not a terminal and changes nothing', async () => {
    const ws = workspace(manyDeals(1));
    const r = await ws.eidkit(['deals', 'apply', '-f', ws.file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/pass --yes/);
    expect((await ws.eidkit(['deals', 'plan', '-f', ws.file, '--detailed-exitcode'])).code).toBe(7);
  });

  test('on a terminal, apply shows the plan and asks; only "yes" applies', async () => {
    const ws = workspace(manyDeals(2));
    const no = await ws.onTerminal(['deals', 'apply', '-f', ws.file], 'no\n');
    expect(no.output).toMatch(/\+ create +deal-01/);
    expect(no.output).toMatch(/Apply these changes\? Only "yes" is accepted:/);
    expect(no.output).toMatch(/Apply cancelled; nothing was changed\./);
    expect(no.code).toBe(1);
    expect((await ws.eidkit(['deals', 'plan', '-f', ws.file, '--detailed-exitcode'])).code).toBe(7);
    const yes = await ws.onTerminal(['deals', 'apply', '-f', ws.file], 'yes\n');
    expect(yes.code).toBe(0);
    expect(yes.output).toMatch(/Applied .*: 2 created/);
    expect((await ws.eidkit(['deals', 'plan', '-f', ws.file])).code).toBe(0);
  });

  test('--prune pause pauses a deal whose key left the file; deals without a key are untouched', async () => {
    const ws = workspace(manyDeals(2));
    await ws.eidkit(['deals', 'apply', '-f', ws.file, '--yes']);
    ws.rewrite(manyDeals(1));
    const kept = await ws.eidkit(['deals', 'plan', '-f', ws.file]);
    expect(kept.code).toBe(0);
    expect(kept.stdout).toMatch(
      /^\? orphan {5}deal-02 {2}#\d+ {2}"Deal 2" {2}key no longer in the file; left as is \(apply --prune pause\|delete handles it\)$/m,
    );
    const pruned = await ws.eidkit(['deals', 'apply', '-f', ws.file, '--yes', '--prune', 'pause']);
    expect(pruned.code).toBe(0);
    expect(pruned.stdout).toMatch(/^~ paused {2}deal-02 {2}#\d+$/m);
    const list = JSON.parse((await ws.eidkit(['deals', 'list', '--json'])).stdout) as {
      isActive: boolean;
      callerDealIds: string[];
    }[];
    expect(list).toHaveLength(25 + 2);
    const keyed = list.filter((d) => d.callerDealIds.some((id) => id.startsWith('eidkit:')));
    expect(keyed.map((d) => [d.isActive, d.callerDealIds])).toEqual([
      [true, [expect.stringMatching(/^eidkit:deal-01#[0-9a-f]{12}$/)]],
      [false, [expect.stringMatching(/^eidkit:deal-02#[0-9a-f]{12}$/)]],
    ]);
  });

  test('-v logs each request from the client hooks, without secrets', async () => {
    const ws = workspace(manyDeals(1));
    const r = await ws.eidkit(['deals', 'plan', '-f', ws.file, '-v']);
    expect(r.stderr).toMatch(/^POST \/oauth\/token → 200 \(\d+ ms\)$/m);
    expect(r.stderr).toMatch(/^GET \/current\/deals\?limit=100&offset=0 → 200 \(\d+ ms\)$/m);
    expect(r.stderr).not.toMatch(/demo-password|eidkit-demo-secret/);
  });
});

describe('eidkit deals schema', () => {
  test('prints the JSON Schema of deals files', async () => {
    const ws = workspace([]);
    const r = await ws.eidkit(['deals', 'schema'], false);
    expect(r.code).toBe(0);
    const schema = JSON.parse(r.stdout);
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(schema.properties.deals.items.required).toEqual(['key']);
    writeFileSync(join(work, 'schema.json'), r.stdout);
    expect(readFileSync(join(work, 'schema.json'), 'utf8')).toContain('"title": "eidkit deals file"');
  });
});
