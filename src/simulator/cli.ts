/** CLI commands of src/simulator, registered on the `eidkit` program by src/cli/index.ts. */
import type { Command } from 'commander';

/** Adds this part's commands to the program. */
export function registerSimulateCommand(program: Command): void {
  void program;
}
