#!/usr/bin/env node
/** The `eidkit` command line: one program; each part registers its own commands. */
import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { registerDecodeCommand } from '../adserver/cli.js';
import { registerSimulateCommand } from '../simulator/cli.js';
import { registerDealsCommands } from '../deals/cli.js';
import { runCli } from './output.js';

// The binary is dist/node/cli/index.js: the package root is three levels up.
const { version } = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };

const program = new Command('eidkit')
  .description('eids on ad calls, and the deal management API from the command line')
  .version(version, '-V, --version', 'print the eidkit version')
  .exitOverride()
  .showHelpAfterError();

registerDecodeCommand(program);
registerSimulateCommand(program);
registerDealsCommands(program);

void runCli(program, process.argv);
