#!/usr/bin/env node
/** The `eidkit` command line: one program; each part registers its own commands. */
import { Command, CommanderError } from 'commander';
import { registerDecodeCommand } from '../adserver/cli.js';
import { registerSimulateCommand } from '../simulator/cli.js';
import { registerDealsCommands } from '../deals/cli.js';
import { registerTagsCommands } from '../operator/cli.js';
import { EXIT } from './exit-codes.js';

const program = new Command('eidkit')
  .description('eids on ad calls, and the deal management API from the command line')
  .exitOverride()
  .showHelpAfterError();

registerDecodeCommand(program);
registerSimulateCommand(program);
registerDealsCommands(program);
registerTagsCommands(program);

program.parseAsync(process.argv).catch((err: unknown) => {
  if (err instanceof CommanderError) {
    process.exit(err.exitCode === 0 ? EXIT.OK : EXIT.USAGE);
  }
  const exitCode = (err as { exitCode?: number })?.exitCode;
  process.stderr.write(`eidkit: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(typeof exitCode === 'number' ? exitCode : EXIT.ERROR);
});
