import { beforeAll, describe, expect, test } from 'vitest';
import { fileURLToPath } from 'node:url';
import { cliDocProblems, cliSpecOf, formatCliProblems, loadCliProgram, type CliSpec } from './cli-docs.js';
import { markdownFiles, readMarkdown } from './markdown.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const fixture = fileURLToPath(new URL('./fixtures/cli', import.meta.url));

let cli: CliSpec;
beforeAll(async () => {
  cli = cliSpecOf(await loadCliProgram());
});

describe('eidkit commands in the docs', () => {
  test('the command tree is the one the eidkit binary builds', () => {
    const deals = cli.subcommands.find((c) => c.names.includes('deals'))!;
    expect(cli.subcommands.map((c) => c.names[0])).toEqual(
      expect.arrayContaining(['decode', 'simulate', 'deals', 'lookups', 'login', 'help']),
    );
    expect([...deals.subcommands.find((c) => c.names.includes('list'))!.flags]).toEqual(
      expect.arrayContaining(['--json', '--csv', '--no-archived', '-v', '--help']),
    );
  });

  test('every eidkit subcommand and flag in the shell blocks of README.md and docs/ exists', () => {
    const problems = cliDocProblems(
      cli,
      markdownFiles(root).map((f) => readMarkdown(root, f)),
    );
    expect(formatCliProblems(problems), `commands the CLI does not have:\n${formatCliProblems(problems)}`).toBe('');
  });

  test('an unknown subcommand or flag fails, naming the file, the line the command starts on, and the command', () => {
    const problems = cliDocProblems(cli, [readMarkdown(fixture, 'README.md')]);
    expect(problems.map((p) => `${p.at}: ${p.problem}`)).toEqual([
      expect.stringMatching(/^README\.md:32: unknown subcommand "lst" of eidkit deals \(it has: .*\blist, get, .*\)$/),
      'README.md:33: unknown flag --jsn of eidkit decode',
      expect.stringMatching(/^README\.md:34: unknown subcommand "resum" of eidkit deals/),
      'README.md:35: unknown flag --sort of eidkit deals list',
      expect.stringMatching(/^README\.md:37: unknown subcommand "frobnicate" of eidkit \(/),
      'README.md:38: unknown flag --jsn of eidkit decode',
      'README.md:42: unknown flag --prot of eidkit simulate',
    ]);
    expect(problems[1].command).toBe('npx eidkit@0.1.0 decode --jsn x');
  });
});
