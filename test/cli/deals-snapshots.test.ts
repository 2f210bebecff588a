// What the deal commands print, byte for byte, and how they end: the help of every command under `eidkit deals`,
// `eidkit lookups` and `eidkit login` (found by walking the help itself, so a new subcommand is covered at once),
// usage errors, and the output of each command against the in-process simulator. A change to how the commands are
// registered must leave all of it as it was.
import { afterAll, describe, expect, test } from 'vitest';
import { rmSync } from 'node:fs';
import { eidkit, home, type Run } from './helpers.js';

afterAll(() => rmSync(home, { recursive: true, force: true }));

/** Seeded deals carry dates relative to now: every ISO date-time becomes a placeholder of the same width. */
const stable = (text: string) => text.replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/g, '<yyyy-mm-ddThh:mm:ss.sssZ>');

/** A run as one text: exit code, stdout, stderr. */
const transcript = (r: Run) => `exit ${r.code}\n--- stdout\n${stable(r.stdout)}--- stderr\n${stable(r.stderr)}`;

/** The subcommands a help lists under "Commands:" (without `help`). */
function subcommands(help: string): string[] {
  const section = help.split('\nCommands:\n')[1];
  if (!section) return [];
  return [...section.matchAll(/^ {2}([a-z][\w-]*)/gm)].map((m) => m[1]).filter((name) => name !== 'help');
}

/** Every command path under the deal commands, each with its `--help` run. */
async function walk(path: string[]): Promise<[string, Run][]> {
  const run = await eidkit([...path, '--help']);
  const below = await Promise.all(subcommands(run.stdout).map((name) => walk([...path, name])));
  return [[path.join(' '), run] as [string, Run], ...below.flat()];
}

const helps = (await Promise.all([walk(['deals']), walk(['lookups']), walk(['login'])])).flat();

describe('the help of every deal command', () => {
  test('the walk finds every command', () => {
    expect(helps.map(([path]) => path)).toEqual(
      expect.arrayContaining([
        'deals list',
        'deals get',
        'deals create',
        'deals update',
        'deals pause',
        'deals resume',
        'deals delete',
        'deals count',
        'deals domainlist attach',
        'deals domainlist detach',
        'deals plan',
        'deals apply',
        'deals schema',
        'lookups',
        'login',
      ]),
    );
  });

  test.each(helps)('eidkit %s --help', (_path, run) => {
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    expect(run.stdout).toMatchSnapshot();
  });
});

/** Runs that end in a usage error or a refusal before or without a request. */
const USAGE = [
  ['deals'],
  ['deals', 'nope'],
  ['deals', 'get'],
  ['deals', 'get', '1', '2'],
  ['deals', 'list', '--nope'],
  ['deals', 'list', '--limit', 'x'],
  ['deals', 'list', '--asc', '--desc'],
  ['deals', 'list', '--json', '--csv'],
  ['deals', 'list', '--since', 'yesterday'],
  ['deals', 'list', '--buyer-ids', '1,a'],
  ['deals', 'list', '--concurrency', '0'],
  ['deals', 'list', '--max-pages', '0'],
  ['deals', 'create', '--simulator'],
  ['deals', 'create', '--simulator', '--data', '{'],
  ['deals', 'update', '100001', '--simulator'],
  ['deals', 'delete', '100001', '--simulator'],
  ['deals', 'domainlist'],
  ['deals', 'domainlist', 'attach', '100001'],
  ['deals', 'domainlist', 'attach', '100001', '0'],
  ['lookups'],
  ['lookups', 'dsp', '--simulator'],
  ['lookups', 'nothing-like-it', '--simulator'],
];

/** Runs against the in-process simulator (a fresh one per run, so writes do not carry over). */
const SIMULATED = [
  ['deals', 'list', '--simulator'],
  ['deals', 'list', '--simulator', '--csv', '--columns', 'id,name,price', '--limit', '3'],
  ['deals', 'list', '--simulator', '--json', '--limit', '2', '--sort-by', 'name', '--asc'],
  ['deals', 'list', '--simulator', '--since', '2999-01-01'],
  ['deals', 'list', '--simulator', '--max-items', '3'],
  ['deals', 'get', '100001', '--simulator'],
  ['deals', 'get', '100001', '--simulator', '--json'],
  ['deals', 'get', '100001', '--simulator', '--csv', '--columns', 'id,name'],
  ['deals', 'get', '999', '--simulator'],
  ['deals', 'create', '--simulator', '--copy-of', '100001', '--data', '{"name":"Copy"}'],
  ['deals', 'create', '--simulator', '--copy-of', '100001', '--json'],
  ['deals', 'create', '--simulator', '--copy-of', '100001', '--set', 'name="Dry"', '--dry-run'],
  ['deals', 'create', '--simulator', '--data', '{"name":"x"}'],
  ['deals', 'update', '100001', '--simulator', '--set', 'name="Renamed"'],
  ['deals', 'update', '100001', '--simulator', '--set', 'price=0.73'],
  ['deals', 'update', '100001', '--simulator', '--set', 'price=3', '--dry-run', '--json'],
  ['deals', 'pause', '100001', '--simulator'],
  ['deals', 'pause', '100001', '--simulator', '--dry-run'],
  ['deals', 'resume', '100001', '--simulator', '--json'],
  ['deals', 'delete', '100001', '--simulator', '--yes'],
  ['deals', 'delete', '100001', '--simulator', '--dry-run'],
  ['deals', 'count', '--simulator'],
  ['deals', 'count', '--simulator', '--json'],
  ['deals', 'count', '--simulator', '--csv'],
  ['deals', 'domainlist', 'attach', '100001', '2', '--simulator'],
  ['deals', 'domainlist', 'detach', '100001', '2', '--simulator'],
  ['deals', 'domainlist', 'detach', '100001', '2', '--simulator', '--dry-run'],
  ['deals', 'list', '--simulator', '--as', 'dsp', '--limit', '2'],
  ['deals', 'domainlist', 'attach', '100001', '2', '--simulator', '--as', 'dsp'],
  ['lookups', 'countries', '--simulator', '--limit', '3'],
  ['lookups', 'dsps', '--simulator', '--ids', '1, 4', '--json'],
  ['lookups', 'DSPS', '--simulator', '--search', 'amazon', '--csv'],
  ['login', '--simulator'],
];

describe('what the deal commands print and how they end', () => {
  // Concurrent runs: each is a process of its own; the snapshot is taken with the test's own `expect`.
  test.concurrent.for([...USAGE, ...SIMULATED].map((args) => [args.join(' '), args] as const))(
    'eidkit %s',
    { timeout: 60_000 },
    async ([, args], { expect: expectHere }) => {
      expectHere(transcript(await eidkit(args))).toMatchSnapshot();
    },
  );
});
