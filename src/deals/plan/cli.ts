/**
 * `eidkit deals plan | apply | schema` (deals as code), registered under `eidkit deals` by src/deals/cli.ts.
 * Data to stdout, progress and messages to stderr; the exit code is set, never forced, so stdout drains.
 */
import { createInterface } from 'node:readline/promises';
import { Command, InvalidArgumentError, Option } from 'commander';
import { EXIT } from '../../cli/exit-codes.js';
import type { DealApiClient } from '../client/client.js';
import { ConnectionError, TimeoutError, ValidationError } from '../client/errors.js';
import { applyPlan, PlanRefusedError, type ApplyItem, type ApplyResult } from './apply.js';
import { DealsFileError, loadDealsFile } from './file.js';
import { describeApplyItem, formatApplyResult, formatPlan } from './format.js';
import { planDeals, planHasIssues, type Plan, type PlanOptions, type PruneMode } from './plan.js';
import { dealsFileJsonSchema } from './schema.js';

/** What the deals CLI lends these commands: its connection options and its session (client) handling. */
export interface DealsCliKit {
  connectionOptions(cmd: Command): Command;
  withSession(flags: any, fn: (client: DealApiClient) => Promise<void>): Promise<void>;
  /** The CLI's exit code for an error. */
  exitCodeOf(err: unknown): number;
}

interface PlanFlags {
  file: string;
  prune?: PruneMode;
  json?: boolean;
  hideUnchanged?: boolean;
  creationQuota?: number;
  updateQuota?: number;
  yes?: boolean;
  skipInvalid?: boolean;
}

function write(stream: NodeJS.WriteStream, text: string): void {
  stream.write(text);
}

/** Runs a command body; its result (or error) becomes `process.exitCode`. Errors are printed once, here. */
function run<A extends unknown[]>(kit: DealsCliKit, fn: (...args: A) => Promise<number>): (...args: A) => Promise<void> {
  return async (...args: A) => {
    try {
      process.exitCode = await fn(...args);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      let text = `eidkit: ${message}\n`;
      const issues = err instanceof ValidationError || err instanceof DealsFileError ? err.issues : [];
      text += issues.map((i) => `  ${i.path || '(deal)'}: ${i.message}\n`).join('');
      write(process.stderr, text);
      process.exitCode = err instanceof DealsFileError || err instanceof PlanRefusedError ? EXIT.VALIDATION : kit.exitCodeOf(err);
    }
  };
}

function count(name: string): (value: string) => number {
  return (value) => {
    if (!/^\d+$/.test(value)) throw new InvalidArgumentError(`${name} must be a whole number, got ${JSON.stringify(value)}`);
    return Number(value);
  };
}

function planOptions(cmd: Command): Command {
  return cmd
    .requiredOption('-f, --file <path>', 'the deals file (YAML, or JSON when it ends in .json; - reads YAML or JSON from stdin)')
    .addOption(new Option('--prune <mode>', 'live deals whose key left the file (and doubled deals of one key): pause or delete them').choices(['pause', 'delete']))
    .option('--json', 'print JSON')
    .option('--creation-quota <n>', 'deal creations allowed per day (spec §8 default 15)', count('--creation-quota'))
    .option('--update-quota <n>', 'deal updates allowed per day (spec §8 default 500)', count('--update-quota'));
}

function optionsOf(flags: PlanFlags): PlanOptions {
  const quotas: PlanOptions['quotas'] = {};
  if (flags.creationQuota !== undefined) quotas.creationsPerDay = flags.creationQuota;
  if (flags.updateQuota !== undefined) quotas.updatesPerDay = flags.updateQuota;
  return { ...(flags.prune ? { prune: flags.prune } : {}), quotas };
}

/** The exit code of a plan: refused deals 3, changes to make 7, none 0. */
function planExitCode(plan: Plan): number {
  if (planHasIssues(plan)) return EXIT.VALIDATION;
  return plan.changes ? EXIT.CHANGES : EXIT.OK;
}

function applyExitCode(result: ApplyResult): number {
  const failed = result.items.find((i) => i.status === 'failed');
  if (failed) {
    const name = failed.error?.name ?? '';
    if (name === ConnectionError.errorName || name === TimeoutError.errorName) return EXIT.NETWORK;
    if (name.includes('Authentication') || name === 'InvalidGrantError' || name === 'AuthAttemptsExhaustedError') return EXIT.AUTH;
    if (name === ValidationError.errorName) return EXIT.VALIDATION;
    return EXIT.API;
  }
  if (result.summary.deferred > 0) return EXIT.CHANGES;
  return result.summary.skipped > 0 ? EXIT.VALIDATION : EXIT.OK;
}

async function confirm(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return (await rl.question(question)).trim() === 'yes';
  } finally {
    rl.close();
  }
}

function progressLine(item: ApplyItem, index: number, total: number): string {
  const width = String(total).length;
  return `[${String(index).padStart(width)}/${total}] ${item.action} ${item.key}: ${describeApplyItem(item)}\n`;
}

/** Loads the file, plans it against the service and hands the plan to `fn`, whose result is the exit code. */
function withPlan(kit: DealsCliKit, fn: (client: DealApiClient, plan: Plan, flags: PlanFlags) => Promise<number>): (flags: PlanFlags) => Promise<void> {
  return run(kit, async (flags: PlanFlags) => {
    const file = await loadDealsFile(flags.file);
    let code: number = EXIT.OK;
    await kit.withSession(flags, async (client) => {
      code = await fn(client, await planDeals(client, file, optionsOf(flags)), flags);
    });
    return code;
  });
}

/** Adds `plan`, `apply` and `schema` to the `deals` command. */
export function registerPlanCommands(deals: Command, kit: DealsCliKit): void {
  planOptions(kit.connectionOptions(deals.command('plan')))
    .description('show what apply would change to make the live deals match a deals file (reads only); exit 0 no changes, 7 changes, 3 invalid deals')
    .option('--hide-unchanged', 'leave out the deals that need no change')
    .action(
      withPlan(kit, async (_client, plan, flags) => {
        write(process.stdout, flags.json ? JSON.stringify(plan, null, 2) + '\n' : formatPlan(plan, { showUnchanged: !flags.hideUnchanged }));
        return planExitCode(plan);
      }),
    );

  planOptions(kit.connectionOptions(deals.command('apply')))
    .description('make the live deals match a deals file: updates, prunes, then creates within the daily quotas (progress on stderr); exit 0 done, 7 work deferred to a later day, 3 invalid deals')
    .option('-y, --yes', 'do not ask for confirmation (required when stdin is not a terminal)')
    .option('--skip-invalid', 'apply the valid deals even when others are refused')
    .action(
      withPlan(kit, async (client, plan, flags) => {
        if (planHasIssues(plan) && !flags.skipInvalid) {
          write(process.stderr, formatPlan(plan, { showUnchanged: false }));
        }
        if (!plan.changes && !planHasIssues(plan)) {
          write(process.stderr, `No changes: the live deals match ${plan.source}.\n`);
          if (flags.json) write(process.stdout, JSON.stringify(await applyPlan(client, plan), null, 2) + '\n');
          return EXIT.OK;
        }
        if (!flags.yes && (!planHasIssues(plan) || flags.skipInvalid)) {
          if (!process.stdin.isTTY) {
            write(process.stderr, 'eidkit: apply changes live deals: pass --yes to confirm (stdin is not a terminal); run plan to see what would change\n');
            return EXIT.USAGE;
          }
          write(process.stderr, formatPlan(plan, { showUnchanged: false }));
          if (!(await confirm('Apply these changes? Only "yes" is accepted: '))) {
            write(process.stderr, 'Apply cancelled; nothing was changed.\n');
            return EXIT.ERROR;
          }
        }
        const result = await applyPlan(client, plan, {
          skipInvalid: flags.skipInvalid,
          onProgress: ({ index, total, item, phase }) => {
            if (phase === 'end') write(process.stderr, progressLine(item, index, total));
          },
        });
        write(process.stdout, flags.json ? JSON.stringify(result, null, 2) + '\n' : formatApplyResult(result, plan.source));
        return applyExitCode(result);
      }),
    );

  deals
    .command('schema')
    .description('print the JSON Schema of deals files, for editors: eidkit deals schema > deals.schema.json')
    .action(
      run(kit, async () => {
        write(process.stdout, JSON.stringify(dealsFileJsonSchema(), null, 2) + '\n');
        return EXIT.OK;
      }),
    );
}
