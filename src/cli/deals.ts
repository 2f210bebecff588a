/**
 * `eidkit` commands on the deal API (src/deals), registered on the program by ./index.ts:
 * `deals list|get|create|update|pause|resume|delete|count`, `deals domainlist attach|detach`, `lookups <resource>`,
 * `login`. Data goes to stdout, messages to stderr (./output.ts); exit codes are documented in docs/deals.md ("CLI exit
 * codes").
 */
import { InvalidArgumentError, Option, type Command } from 'commander';
import { EXIT } from './exit-codes.js';
import { CliError, confirm, examples, interactive, out, outJson, outText, say } from './output.js';
import { closestName } from './suggest.js';
import { fieldText, formatTable } from './format.js';
import { terminalSafe } from '../core/terminal.js';
import { csvRow } from '../core/csv.js';
import { defaultTokenPath, LOOKUP_RESOURCES, type DealListFilters, type DealWriteInput } from '../deals/index.js';
import {
  action,
  columnsOf,
  idList,
  intArg,
  isoDateArg,
  outputOptions,
  printDryRun,
  printRecord,
  printRows,
  printWritten,
  progressReporter,
  readJsonInput,
  listingOptions,
  type ListingFlags,
  type OutputFlags,
} from './deals-io.js';
import { connectionOptions, withSession, type ConnectionFlags } from './deals-session.js';
import { registerPlanCommands } from './deals-plan.js';

/** Default columns of `deals list`. */
const DEAL_COLUMNS = ['id', 'dealId', 'name', 'isActive', 'pricingModel', 'price', 'currency', 'beginDate', 'endDate'];
/** Default columns of `lookups`. */
const LOOKUP_COLUMNS = ['id', 'name', 'isArchived'];

/** Every option the deals commands read, as commander hands them over (after each option's own parser). */
type Flags = ConnectionFlags &
  OutputFlags &
  ListingFlags & {
    archived?: boolean;
    soonExpired?: boolean;
    parent?: boolean;
    since?: string;
    sortBy?: string;
    asc?: boolean;
    desc?: boolean;
    buyerIds?: number[];
    dspIds?: number[];
    platformIds?: number[];
    formatIds?: number[];
    limit?: number;
    offset?: number;
    concurrency?: number;
    progress?: boolean;
    dryRun?: boolean;
    file?: string;
    data?: string;
    set?: string[];
    copyOf?: string;
    yes?: boolean;
    ids?: string;
    search?: string;
  };

/** Adds `deals …`, `lookups` and `login` to the program. */
export function registerDealsCommands(program: Command): void {
  const deals = program.command('deals').description('manage deals on the deal API (docs/deals.md)');
  registerPlanCommands(deals);

  listingOptions(
    outputOptions(
      connectionOptions(
        examples(
          deals.command('list'),
          'eidkit deals list --simulator',
          'eidkit deals list --no-archived --sort-by name --asc --csv > deals.csv',
          "eidkit deals list --since 2025-01-01 --json | jq '.[].name'",
        ),
      ),
    ),
  )
    .description('list deals across every page')
    .option('--archived', 'only archived deals')
    .option('--no-archived', 'only deals that are not archived')
    .option('--soon-expired', 'only deals expiring soon')
    .option('--parent', 'only parent deals')
    .option('--since <datetime>', 'created or modified after (ISO 8601 date or date-time, UTC)', isoDateArg('--since'))
    .option('--sort-by <field>', 'sort field')
    .addOption(new Option('--asc', 'ascending').conflicts('desc'))
    .option('--desc', 'descending')
    .option('--buyer-ids <ids>', 'comma-separated buyer ids', idList('--buyer-ids'))
    .option('--dsp-ids <ids>', 'comma-separated DSP ids', idList('--dsp-ids'))
    .option('--platform-ids <ids>', 'comma-separated platform ids', idList('--platform-ids'))
    .option('--format-ids <ids>', 'comma-separated format ids', idList('--format-ids'))
    .option('--limit <n>', 'at most this many deals', intArg('--limit'))
    .option('--offset <n>', 'skip this many deals', intArg('--offset'))
    .option(
      '--concurrency <n>',
      'pages fetched at once (1 follows Link one page at a time)',
      intArg('--concurrency', 1),
    )
    .option('--progress', 'report progress on stderr even when it is not a terminal')
    .option('--no-progress', 'never report progress')
    .action(
      action(async (flags: Flags) => {
        await withSession(flags, async (client) => {
          const filters: DealListFilters = {
            isArchived: flags.archived,
            isSoonExpired: flags.soonExpired,
            isParentDeal: flags.parent,
            createdOrModifiedSince: flags.since,
            sortBy: flags.sortBy,
            sortAsc: flags.asc ? true : flags.desc ? false : undefined,
            buyerIds: flags.buyerIds,
            dspIds: flags.dspIds,
            platformIds: flags.platformIds,
            formatIds: flags.formatIds,
            offset: flags.offset,
          };
          const list = client.deals.list({
            ...filters,
            concurrency: flags.concurrency,
            limit: flags.limit,
            maxItems: flags.maxItems,
            maxPages: flags.maxPages,
            onProgress: progressReporter('deals', flags.progress),
          });
          await printRows(
            list as AsyncIterable<unknown> as AsyncIterable<Record<string, unknown>>,
            flags,
            DEAL_COLUMNS,
            'deals',
          );
        });
      }),
    );

  outputOptions(
    connectionOptions(
      examples(
        deals.command('get'),
        'eidkit deals get 100001 --simulator',
        'eidkit deals get 100001 --columns id,name,price --csv',
      ),
    ),
  )
    .description('show one deal')
    .argument('<id>', 'the service-side deal id')
    .action(
      action(async (id: string, flags: Flags) => {
        await withSession(flags, async (client) => {
          const deal = (await client.deals.get(id)) as unknown as Record<string, unknown>;
          await printRecord(deal, flags);
        });
      }),
    );

  const writeOptions = (cmd: Command) =>
    connectionOptions(cmd)
      .option('--dry-run', 'validate and print the request (secrets masked) without sending it')
      .option('--json', 'print JSON');

  const dealInputOptions = (cmd: Command) =>
    cmd
      .option('--file <path>', 'the deal as JSON (- reads stdin)')
      .option('--data <json>', 'the deal as inline JSON')
      .option(
        '--set <field=value>',
        'set one field (value parsed as JSON, else a string); repeatable',
        (v: string, prev?: string[]) => [...(prev ?? []), v],
      );

  dealInputOptions(
    writeOptions(
      examples(
        deals.command('create'),
        'eidkit deals create --file deal.json',
        'eidkit deals create --simulator --copy-of 100001 --data \'{"name":"Copy of spring"}\'',
        'eidkit deals create --file deal.json --dry-run',
      ),
    ),
  )
    .description('create a deal (validated first; never retried once it may have reached the service)')
    .option(
      '--copy-of <id>',
      'create a copy of this deal (X-CopyOfDealId); --data/--file/--set then only change fields of the copy',
    )
    .action(
      action(async (flags: Flags) => {
        // With --copy-of the body only changes fields of the copy; none copies the deal as it is.
        const deal = readJsonInput(flags, 'deal', { optional: flags.copyOf !== undefined });
        await withSession(flags, async (client) => {
          if (flags.dryRun)
            return printDryRun(await client.deals.dryRun.create(deal, { copyOf: flags.copyOf }), flags.json);
          // The client checks the deal's fields; with --copy-of they only change fields of the copy.
          const created =
            flags.copyOf === undefined
              ? await client.deals.create(deal as DealWriteInput)
              : await client.deals.create(deal as Partial<DealWriteInput>, { copyOf: flags.copyOf });
          // --json prints the deal as created (as get, update and pause do); the plain output is its id, for scripts.
          await (flags.json
            ? outJson(created.deal ?? (await client.deals.get(created.id)))
            : outText(`${fieldText(created.id)}\n`));
          say(
            `created deal ${created.id} (${created.location}${created.historyId ? `, history ${created.historyId}` : ''})`,
          );
        });
      }),
    );

  dealInputOptions(
    writeOptions(
      examples(
        deals.command('update'),
        'eidkit deals update 100001 --simulator --set name="Spring sale" --set price=3',
        'eidkit deals update 100001 --file patch.json --dry-run',
      ),
    ),
  )
    .description('change some fields of a deal: read, merge, validate, PUT (omitted fields keep their values)')
    .argument('<id>', 'the service-side deal id')
    .action(
      action(async (id: string, flags: Flags) => {
        const patch = readJsonInput(flags, 'patch');
        await withSession(flags, async (client) => {
          if (flags.dryRun) return printDryRun(await client.deals.dryRun.update(id, patch), flags.json);
          // The client sends no PUT for a patch that changes nothing: say what happened, not "updated".
          let sent = false;
          client.on('request', (e) => {
            if (e.method === 'PUT') sent = true;
          });
          const deal = await client.deals.update(id, patch);
          await printWritten(
            deal,
            flags.json,
            sent ? `updated deal ${deal.id}` : `deal ${deal.id} already has these values; nothing changed`,
          );
        });
      }),
    );

  for (const [name, verb, past] of [
    ['pause', 'pause', 'paused'],
    ['resume', 'resume', 'resumed'],
  ] as const) {
    writeOptions(
      examples(deals.command(name), `eidkit deals ${name} 100001 --simulator`, `eidkit deals ${name} 100001 --json`),
    )
      .description(`${verb} a deal (isActive ${name === 'pause' ? 'false' : 'true'})`)
      .argument('<id>', 'the service-side deal id')
      .action(
        action(async (id: string, flags: Flags) => {
          await withSession(flags, async (client) => {
            if (flags.dryRun) return printDryRun(await client.deals.dryRun[name](id), flags.json);
            const stored = await client.deals.get(id);
            if (stored.isActive === (name === 'resume')) {
              return printWritten(stored, flags.json, `deal ${stored.id} is already ${past}; nothing changed`);
            }
            const deal = await client.deals[name](id, { stored });
            await printWritten(deal, flags.json, `${past} deal ${deal.id}`);
          });
        }),
      );
  }

  writeOptions(
    examples(
      deals.command('delete'),
      'eidkit deals delete 100001 --simulator',
      'eidkit deals delete 100001 --yes   # no question, e.g. in a script',
    ),
  )
    .description('delete a deal (asks first on a terminal; without a terminal, refuses unless --yes)')
    .argument('<id>', 'the service-side deal id')
    .option('-y, --yes', 'do not ask for confirmation (required when stdin is not a terminal)')
    .action(
      action(async (id: string, flags: Flags) => {
        await withSession(flags, async (client) => {
          if (flags.dryRun) return printDryRun(await client.deals.dryRun.delete(id), flags.json);
          if (!flags.yes) {
            // Like `gh repo delete`: a deletion nobody can confirm is refused, never done silently.
            if (!interactive()) {
              throw new CliError(
                `deals delete ${id} needs --yes when it cannot ask (stdin or stderr is not a terminal); nothing was deleted`,
                EXIT.USAGE,
              );
            }
            const deal = await client.deals.get(id);
            if (!(await confirm(terminalSafe(`delete deal ${deal.id} ${JSON.stringify(deal.name)}?`))))
              throw new CliError(`deal ${deal.id} was not deleted`, EXIT.ERROR);
          }
          await client.deals.delete(id);
          say(`deleted deal ${id}`);
        });
      }),
    );

  outputOptions(
    connectionOptions(examples(deals.command('count'), 'eidkit deals count --simulator', 'eidkit deals count --json')),
  )
    .description('count deals by status (countBreakdown)')
    .action(
      action(async (flags: Flags) => {
        await withSession(flags, async (client) => {
          const columns = columnsOf(flags, ['status', 'count']) ?? ['status', 'count'];
          const counts = await client.deals.countBreakdown();
          if (flags.json) await outJson(counts);
          else {
            const rows = flatten(counts).map(([status, count]) => ({ status, count }));
            await (flags.csv
              ? out(csvRow(columns) + rows.map((r) => csvRow(columns.map((c) => r[c as keyof typeof r]))).join(''))
              : outText(formatTable(rows, columns)));
          }
        });
      }),
    );

  const domainlist = deals.command('domainlist').description('attach a domain list to a deal, or detach it');
  for (const [name, method] of [
    ['attach', 'attachDomainList'],
    ['detach', 'detachDomainList'],
  ] as const) {
    writeOptions(examples(domainlist.command(name), `eidkit deals domainlist ${name} 100001 2 --simulator`))
      .description(`${name} a domain list ${name === 'attach' ? 'to' : 'from'} a deal (refused to DSP callers)`)
      .argument('<id>', 'the service-side deal id')
      .argument('<domainListId>', 'the domain list id', intArg('<domainListId>', 1))
      .action(
        action(async (id: string, domainListId: number, flags: Flags) => {
          await withSession(flags, async (client) => {
            if (flags.dryRun) return printDryRun(await client.deals.dryRun[method](id, domainListId), flags.json);
            await client.deals[method](id, domainListId);
            say(
              `${name === 'attach' ? 'attached' : 'detached'} domain list ${domainListId} ${name === 'attach' ? 'to' : 'from'} deal ${id}`,
            );
          });
        }),
      );
  }

  listingOptions(
    outputOptions(
      connectionOptions(
        examples(
          program.command('lookups'),
          'eidkit lookups dsps --simulator --search amazon',
          'eidkit lookups countries --csv > countries.csv',
        ),
      ),
    ),
  )
    .description(`list reference items: ${LOOKUP_RESOURCES.join(', ')}`)
    .argument('<resource>', 'lookup resource (case-insensitive)', lookupResource)
    .option('--ids <ids>', 'only these comma-separated ids')
    .option('--search <text>', 'search in the names (extendedSearch)')
    .option('--limit <n>', 'at most this many items', intArg('--limit'))
    .option('--offset <n>', 'skip this many items', intArg('--offset'))
    .action(
      action(async (resource: string, flags: Flags) => {
        await withSession(flags, async (client) => {
          const ids = flags.ids
            ? String(flags.ids)
                .split(',')
                .map((s) => s.trim())
                .filter(Boolean)
            : undefined;
          const list = client.lookups.list<Record<string, unknown>>(resource, {
            ids,
            search: flags.search,
            limit: flags.limit,
            offset: flags.offset,
            maxItems: flags.maxItems,
            maxPages: flags.maxPages,
          });
          await printRows(list, flags, LOOKUP_COLUMNS, resource);
        });
      }),
    );

  connectionOptions(
    examples(
      program.command('login'),
      'eidkit login   # with EIDKIT_BASE_URL, EIDKIT_AUTH_URL, EIDKIT_AUDIENCE and the credentials set',
      'eidkit deals list   # later: reuses the cached token',
    ),
  )
    .description('obtain a user token and cache it in a file only you can read')
    .action(
      action(async (flags: Flags) => {
        await withSession(flags, async (client) => {
          await client.authenticate();
          const where = flags.simulator
            ? 'not cached: the in-process simulator lives only as long as this command'
            : flags.cache === false
              ? 'not cached (--no-cache)'
              : `cached in ${flags.tokenFile ?? defaultTokenPath()}`;
          say(`logged in to ${client.baseUrl.href}; token ${where}`);
        });
      }),
    );
}

/** The `lookups` resource argument: a known name (any case), else a usage error suggesting the closest one. */
function lookupResource(value: string): string {
  const known = LOOKUP_RESOURCES.find((r) => r.toLowerCase() === value.toLowerCase());
  if (known) return known;
  const hint = closestName(value, LOOKUP_RESOURCES);
  throw new InvalidArgumentError(
    `no lookup resource ${JSON.stringify(value)}; ${hint ? `did you mean ${hint}?` : `known: ${LOOKUP_RESOURCES.join(', ')}`}`,
  );
}

/** Nested counts as dotted rows: `{ byType: { DirectDeal: 2 } }` → `byType.DirectDeal 2`. */
function flatten(value: Record<string, unknown>, prefix = ''): [string, unknown][] {
  return Object.entries(value).flatMap(([k, v]) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? flatten(v as Record<string, unknown>, `${prefix}${k}.`)
      : [[`${prefix}${k}`, v] as [string, unknown]],
  );
}
