/**
 * `eidkit deals plan | apply | schema` (deals as code), registered under `eidkit deals` by ./deals.ts.
 * Data to stdout, progress and messages to stderr, through ./output.ts (drained before exit, quiet on EPIPE).
 */
import { Option, type Command } from 'commander';
import { EXIT } from './exit-codes.js';
import { CliError, confirm, examples, ExitStatus, outJson, outText, say, toStderr } from './output.js';
import { action, intArg } from './deals-io.js';
import { connectionOptions, withSession, type ConnectionFlags } from './deals-session.js';
import {
  applyPlan,
  ConnectionError,
  DealsFileError,
  dealsFileJsonSchema,
  describeApplyItem,
  formatApplyResult,
  formatPlan,
  loadDealsFile,
  planDeals,
  planHasIssues,
  PlanRefusedError,
  TimeoutError,
  ValidationError,
  type ApplyItem,
  type ApplyResult,
  type DealApiClient,
  type Plan,
  type PlanOptions,
  type PruneMode,
} from '../deals/index.js';

interface PlanFlags extends ConnectionFlags {
  file: string;
  prune?: PruneMode;
  json?: boolean;
  hideUnchanged?: boolean;
  creationQuota?: number;
  updateQuota?: number;
  yes?: boolean;
  skipInvalid?: boolean;
  detailedExitcode?: boolean;
}

function planOptions(cmd: Command): Command {
  return cmd
    .requiredOption(
      '-f, --file <path>',
      'the deals file (YAML, or JSON when it ends in .json; - reads YAML or JSON from stdin)',
    )
    .addOption(
      new Option(
        '--prune <mode>',
        'live deals whose key left the file (and doubled deals of one key): pause or delete them',
      ).choices(['pause', 'delete']),
    )
    .option('--json', 'print JSON')
    .option('--creation-quota <n>', 'deal creations allowed per day (default 15)', intArg('--creation-quota'))
    .option('--update-quota <n>', 'deal updates allowed per day (default 500)', intArg('--update-quota'));
}

function optionsOf(flags: PlanFlags): PlanOptions {
  const quotas: PlanOptions['quotas'] = {};
  if (flags.creationQuota !== undefined) quotas.creationsPerDay = flags.creationQuota;
  if (flags.updateQuota !== undefined) quotas.updatesPerDay = flags.updateQuota;
  return { ...(flags.prune ? { prune: flags.prune } : {}), quotas };
}

/**
 * The exit code of a plan: refused deals 3, else 0; with `--detailed-exitcode` (as terraform's), changes to make 7.
 * A plan with changes is a success: `set -e` scripts must not stop on it unless they ask.
 */
function planExitCode(plan: Plan, detailed: boolean): number {
  if (planHasIssues(plan)) return EXIT.VALIDATION;
  return plan.changes && detailed ? EXIT.CHANGES : EXIT.OK;
}

function applyExitCode(result: ApplyResult, plan: Plan): number {
  const failed = result.items.find((i) => i.status === 'failed');
  if (failed) {
    const name = failed.error?.name ?? '';
    if (name === ConnectionError.errorName || name === TimeoutError.errorName) return EXIT.NETWORK;
    if (name.includes('Authentication') || name === 'InvalidGrantError' || name === 'AuthAttemptsExhaustedError')
      return EXIT.AUTH;
    if (name === ValidationError.errorName) return EXIT.VALIDATION;
    return EXIT.API;
  }
  if (result.summary.deferred > 0) return EXIT.CHANGES;
  if (result.summary.skipped === 0) return EXIT.OK;
  // Skipped invalid deals: 8 while the file's valid deals are in place (applied by this run or an earlier one: a
  // daily job that has converged keeps its exit code), 3 when the file holds no valid deal at all.
  return plan.items.some((i) => i.key && i.action !== 'refused' && i.action !== 'orphan')
    ? EXIT.PARTIAL
    : EXIT.VALIDATION;
}

function progressLine(item: ApplyItem, index: number, total: number): string {
  const width = String(total).length;
  return `[${String(index).padStart(width)}/${total}] ${item.action} ${item.key}: ${describeApplyItem(item)}`;
}

/**
 * Loads the file, plans it against the service and hands the plan to `fn`, whose result is the exit code; a
 * non-zero one ends the command quietly (the output already said why).
 */
function withPlan(
  fn: (client: DealApiClient, plan: Plan, flags: PlanFlags) => Promise<number>,
): (flags: PlanFlags) => Promise<void> {
  return action(async (flags: PlanFlags) => {
    let code: number = EXIT.OK;
    try {
      const file = await loadDealsFile(flags.file);
      await withSession(flags, async (client) => {
        code = await fn(client, await planDeals(client, file, optionsOf(flags)), flags);
      });
    } catch (err) {
      if (err instanceof DealsFileError || err instanceof PlanRefusedError) {
        const details =
          err instanceof DealsFileError ? err.issues.map((i) => `${i.path || '(file)'}: ${i.message}`) : [];
        throw new CliError(err.message, EXIT.VALIDATION, details);
      }
      throw err;
    }
    if (code !== EXIT.OK) throw new ExitStatus(code);
  });
}

/** Adds `plan`, `apply` and `schema` to the `deals` command. */
export function registerPlanCommands(deals: Command): void {
  planOptions(
    connectionOptions(
      examples(
        deals.command('plan'),
        'eidkit deals plan -f deals.yaml --simulator',
        'eidkit deals plan -f deals.yaml --hide-unchanged --prune pause',
        'eidkit deals plan -f deals.yaml --detailed-exitcode   # exit 0 no changes, 7 changes, 3 invalid',
      ),
    ),
  )
    .description(
      'show what apply would change to make the live deals match a deals file (reads only); exit 0, or 3 for invalid deals',
    )
    .option('--hide-unchanged', 'leave out the deals that need no change')
    .option(
      '--detailed-exitcode',
      'exit 7 when there are changes to apply (0: none), as terraform plan -detailed-exitcode',
    )
    .action(
      withPlan(async (_client, plan, flags) => {
        await (flags.json ? outJson(plan) : outText(formatPlan(plan, { showUnchanged: !flags.hideUnchanged })));
        return planExitCode(plan, flags.detailedExitcode === true);
      }),
    );

  planOptions(
    connectionOptions(
      examples(
        deals.command('apply'),
        'eidkit deals apply -f deals.yaml              # shows the plan and asks on a terminal',
        'eidkit deals apply -f deals.yaml --yes --json  # in a script: no question',
        'eidkit deals apply -f deals.yaml --yes --skip-invalid --prune pause',
      ),
    ),
  )
    .description(
      'make the live deals match a deals file: updates, prunes, then creates within the daily quotas (progress on stderr); exit 0 done, 7 work deferred to a later day, 3 invalid deals, 8 invalid ones skipped and the valid ones in place',
    )
    .option('-y, --yes', 'do not ask for confirmation (required when stdin is not a terminal)')
    .option('--skip-invalid', 'apply the valid deals even when others are refused')
    .action(
      withPlan(async (client, plan, flags) => {
        if (planHasIssues(plan) && !flags.skipInvalid) toStderr(formatPlan(plan, { showUnchanged: false }));
        if (!plan.changes && !planHasIssues(plan)) {
          say(`No changes: the live deals match ${plan.source}.`);
          if (flags.json) await outJson(await applyPlan(client, plan));
          return EXIT.OK;
        }
        if (!flags.yes && (!planHasIssues(plan) || flags.skipInvalid)) {
          if (!process.stdin.isTTY) {
            throw new CliError(
              'apply changes live deals: pass --yes to confirm (stdin is not a terminal); run plan to see what would change',
              EXIT.USAGE,
            );
          }
          toStderr(formatPlan(plan, { showUnchanged: false }));
          if (!(await confirm('Apply these changes? Only "yes" is accepted: ', { onlyYes: true }))) {
            say('Apply cancelled; nothing was changed.');
            return EXIT.ERROR;
          }
        }
        const result = await applyPlan(client, plan, {
          skipInvalid: flags.skipInvalid,
          onProgress: ({ index, total, item, phase }) => {
            if (phase === 'end') say(progressLine(item, index, total));
          },
        });
        await (flags.json ? outJson(result) : outText(formatApplyResult(result, plan.source)));
        return applyExitCode(result, plan);
      }),
    );

  examples(deals.command('schema'), 'eidkit deals schema > deals.schema.json')
    .description('print the JSON Schema of deals files, for editors: eidkit deals schema > deals.schema.json')
    .action(action(() => outJson(dealsFileJsonSchema())));
}
