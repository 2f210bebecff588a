/** CLI commands of src/deals, registered on the `eidkit` program by src/cli/index.ts. */
import type { Command } from 'commander';

/** Adds this part's commands to the program. */
export function registerDealsCommands(program: Command): void {
  void program;
}
