#!/usr/bin/env node
/**
 * The `eidkit` command line, the top floor: one program, one file here per command group (decode, simulate, deals,
 * deals-plan, tags, gvl). Only src/cli maps results to output and exit codes; the parts return data or throw typed
 * errors and never import src/cli.
 */
import { existsSync, readFileSync } from 'node:fs';
import { Command } from 'commander';
import { registerDecodeCommand } from './decode.js';
import { registerSimulateCommand } from './simulate.js';
import { registerDealsCommands } from './deals.js';
import { registerTagsCommands } from './tags.js';
import { registerGvlCommands } from './gvl.js';
import { runCli } from './output.js';

// The package root is three levels above dist/node/cli/index.js and two above src/cli/index.ts (tests import it).
const pkgUrl = [new URL('../../../package.json', import.meta.url), new URL('../../package.json', import.meta.url)].find(
  (u) => existsSync(u),
)!;
const { version } = JSON.parse(readFileSync(pkgUrl, 'utf8')) as { version: string };

// `npm run eidkit -- …` in the clone runs this from the package root (npm changes directory before a script runs): a
// user's relative paths (-f, --out, --networks, --data) are relative to where they ran npm, which npm passes as
// INIT_CWD. Only for this package's own `eidkit` script: another project's script that calls the installed binary
// runs, as npm scripts do, from that project's root.
const { npm_lifecycle_event: script, npm_package_name: pkgName, INIT_CWD: initCwd } = process.env;
if (script === 'eidkit' && pkgName === 'eidkit' && initCwd) {
  try {
    process.chdir(initCwd);
  } catch {
    // A directory that went away: the package root it is.
  }
}

const program = new Command('eidkit')
  .description('eids on ad calls, and the deal management API from the command line')
  .version(version, '-V, --version', 'print the eidkit version')
  .exitOverride()
  .showHelpAfterError();

registerDecodeCommand(program);
registerSimulateCommand(program);
registerDealsCommands(program);
registerTagsCommands(program);
registerGvlCommands(program);

// Bare `eidkit` shows the help on stdout and succeeds, as `gh` does (commander alone would exit 1 on stderr).
const argv = process.argv.length <= 2 ? [...process.argv, '--help'] : process.argv;
void runCli(program, argv);
