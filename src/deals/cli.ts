/**
 * CLI commands of src/deals, registered on the `eidkit` program by src/cli/index.ts:
 * `deals list|get|create|update|pause|resume|delete|count`, `deals domainlist attach|detach`, `lookups <resource>`,
 * `login`. Data goes to stdout, messages to stderr; exit codes are documented in the README.
 */
import { readFileSync } from 'node:fs';
import { Command, Option } from 'commander';
import { EXIT } from '../cli/exit-codes.js';
import { LOOKUP_RESOURCES } from './rules/index.js';
import {
  AuthenticationError,
  ConnectionError,
  DealApiClient,
  DealApiError,
  PayloadTooLargeError,
  TimeoutError,
  ValidationError,
  type DealApiClientOptions,
  type DealListFilters,
  type PreparedRequest,
} from './client/index.js';
import { ConfigError, defaultTokenPath, fileTokenCache, loadConnectionConfig, CONFIG_ENV } from './client/config.js';
import { csvRow, formatRecord, formatTable } from './client/output.js';
import { registerPlanCommands } from './plan/cli.js';

/** Default columns of `deals list`. */
const DEAL_COLUMNS = ['id', 'dealId', 'name', 'isActive', 'pricingModel', 'price', 'currency', 'beginDate', 'endDate'];
/** Default columns of `lookups`. */
const LOOKUP_COLUMNS = ['id', 'name', 'isArchived'];

interface ConnectionFlags {
  simulator?: boolean;
  as?: string;
  simulatorData?: string;
  config?: string;
  tokenFile?: string;
  cache?: boolean;
  baseUrl?: string;
  authUrl?: string;
  timeout?: string;
  verbose?: boolean;
}

interface OutputFlags {
  json?: boolean;
  csv?: boolean;
  columns?: string;
}

/** An error the CLI reports with a chosen exit code. */
class CliError extends Error {
  constructor(message: string, readonly exitCode: number) {
    super(message);
  }
}

function exitCodeOf(err: unknown): number {
  if (err instanceof CliError) return err.exitCode;
  if (err instanceof ConfigError) return EXIT.USAGE;
  if (err instanceof ValidationError || err instanceof PayloadTooLargeError) return EXIT.VALIDATION;
  if (err instanceof AuthenticationError) return EXIT.AUTH;
  if (err instanceof TimeoutError && err.status === undefined) return EXIT.NETWORK;
  if (err instanceof ConnectionError) return EXIT.NETWORK;
  if (err instanceof DealApiError) return EXIT.API;
  return EXIT.ERROR;
}

/** Runs an action: catches once, writes the message (and field issues) to stderr, exits with the documented code. */
function action<A extends unknown[]>(fn: (...args: A) => Promise<void>): (...args: A) => Promise<void> {
  return async (...args: A) => {
    try {
      await fn(...args);
    } catch (err) {
      const code = exitCodeOf(err);
      const message = err instanceof Error ? err.message : String(err);
      let text = `eidkit: ${message}\n`;
      if (err instanceof ValidationError && err.issues.length) text += err.issues.map((i) => `  ${i.path || '(deal)'}: ${i.message}\n`).join('');
      if (code === EXIT.ERROR && err instanceof Error && process.env.EIDKIT_DEBUG) text += `${err.stack}\n`;
      process.stderr.write(text);
      process.exit(code);
    }
    process.exit(EXIT.OK);
  };
}

function connectionOptions(cmd: Command): Command {
  return cmd
    .option('--simulator', 'run against a deal API simulator started in-process (no credentials needed)')
    .option('--as <user>', 'with --simulator: which demo user (company, other, dsp)', 'company')
    .option('--simulator-data <file>', 'with --simulator: keep its deals in this file between commands (or $EIDKIT_SIMULATOR_DATA)')
    .option('--config <file>', `config file (default $${'EIDKIT_CONFIG'} or ~/.config/eidkit/config.json)`)
    .option('--token-file <file>', 'user token cache, created readable by you only (default ~/.cache/eidkit/token.json)')
    .option('--no-cache', 'neither read nor write the token cache')
    .option('--base-url <url>', `service base URL (or $${CONFIG_ENV.baseUrl})`)
    .option('--auth-url <url>', `identity provider URL (or $${CONFIG_ENV.authUrl})`)
    .option('--timeout <ms>', 'per-request timeout in milliseconds', '30000')
    .option('-v, --verbose', 'log every request to stderr (secrets are never logged)');
}

function outputOptions(cmd: Command): Command {
  return cmd
    .addOption(new Option('--json', 'print JSON').conflicts('csv'))
    .addOption(new Option('--csv', 'print CSV (RFC 4180)').conflicts('json'))
    .option('--columns <list>', 'comma-separated columns for the table and CSV');
}

function intArg(name: string, min = 0): (value: string) => number {
  return (value: string) => {
    if (!/^\d+$/.test(value) || Number(value) < min) throw new CliError(`${name} must be an integer ≥ ${min}, got ${JSON.stringify(value)}`, EXIT.USAGE);
    return Number(value);
  };
}

function idList(name: string): (value: string) => number[] {
  return (value: string) => {
    const parts = value.split(',').map((s) => s.trim()).filter(Boolean);
    if (!parts.every((p) => /^\d+$/.test(p))) throw new CliError(`${name} must be comma-separated integers, got ${JSON.stringify(value)}`, EXIT.USAGE);
    return parts.map(Number);
  };
}

interface Session {
  client: DealApiClient;
  close(): Promise<void>;
}

/** Demo deals the in-process simulator starts with, so `list`, `get 1` and `update 1` show something. */
const SIMULATOR_SEED_DEALS = 25;

/** A client on a simulator started in this process, logged in as one of its demo users (`--as`). */
async function simulatorSession(flags: ConnectionFlags, base: Partial<DealApiClientOptions>): Promise<Session> {
  const { createDealApiSimulator, IN_PROCESS_ORIGIN } = await import('../simulator/index.js');
  const dataFile = flags.simulatorData ?? process.env.EIDKIT_SIMULATOR_DATA;
  const simulator = createDealApiSimulator({ seed: { deals: SIMULATOR_SEED_DEALS }, ...(dataFile ? { dataFile } : {}) });
  const wanted = flags.as ?? 'company';
  const users = simulator.users;
  const user =
    users.find((u) => u.username === wanted) ??
    users.find((u) => u.username.split('@')[0] === wanted) ??
    (wanted === 'company' ? users.find((u) => u.kind === 'company') : wanted === 'dsp' ? users.find((u) => u.kind === 'dsp') : undefined);
  if (!user) throw new CliError(`--as ${wanted}: no such demo user (try company, other or dsp)`, EXIT.USAGE);
  const client = new DealApiClient({
    ...base,
    baseUrl: `${IN_PROCESS_ORIGIN}/current/`,
    authUrl: IN_PROCESS_ORIGIN,
    audience: simulator.audience,
    fetch: simulator.fetch as typeof fetch,
    credentials: { clientId: user.clientId, clientSecret: user.clientSecret, username: user.username, password: user.password },
  });
  return { client, close: () => simulator.close() };
}

async function openSession(flags: ConnectionFlags): Promise<Session> {
  const timeoutMs = intArg('--timeout', 1)(String(flags.timeout ?? '30000'));
  const logger = flags.verbose ? { info: (m: string) => process.stderr.write(`${m}\n`), warn: (m: string) => process.stderr.write(`${m}\n`) } : { warn: (m: string) => process.stderr.write(`warning: ${m}\n`) };
  const base: Partial<DealApiClientOptions> = { timeoutMs, logger };
  if (flags.simulator) return simulatorSession(flags, base);
  const config = loadConnectionConfig({ path: flags.config, warn: (line) => process.stderr.write(`${line}\n`) });
  const baseUrl = flags.baseUrl ?? config.baseUrl;
  const authUrl = flags.authUrl ?? config.authUrl;
  if (!baseUrl || !authUrl) {
    throw new ConfigError(`no service configured: set ${CONFIG_ENV.baseUrl} and ${CONFIG_ENV.authUrl} (and the credentials), use a config file, or try --simulator`);
  }
  const { clientId, clientSecret, username, password } = config.credentials;
  const grant = config.grant ?? 'password-realm';
  const missing = [
    !clientId && CONFIG_ENV.clientId,
    !clientSecret && CONFIG_ENV.clientSecret,
    grant === 'password-realm' && !username && CONFIG_ENV.username,
    grant === 'password-realm' && !password && CONFIG_ENV.password,
  ].filter(Boolean);
  const principal = grant === 'password-realm' ? `${username}` : `${clientId}`;
  const tokenCache = flags.cache === false ? undefined : fileTokenCache(flags.tokenFile ?? defaultTokenPath(), { baseUrl, principal });
  // A cached user token lets commands run without the secrets at hand; logging in needs them.
  const cached = missing.length ? await tokenCache?.load() : undefined;
  if (missing.length && !(cached && cached.expiresAt > Date.now())) {
    throw new ConfigError(`missing credentials: set ${missing.join(', ')} (or put them in the config file), then run eidkit login`);
  }
  const client = new DealApiClient({
    ...base,
    baseUrl,
    authUrl,
    audience: config.audience ?? '',
    grant,
    ...(missing.length ? { token: cached!.token } : { credentials: { clientId: clientId!, clientSecret: clientSecret!, username, password }, tokenCache }),
  });
  return { client, close: async () => undefined };
}

async function withSession(flags: ConnectionFlags, fn: (client: DealApiClient) => Promise<void>): Promise<void> {
  const session = await openSession(flags);
  if (flags.verbose) logRequests(session.client);
  try {
    await fn(session.client);
  } finally {
    await session.close();
  }
}

function readJsonInput(opts: { file?: string; data?: string; set?: string[] } & Record<string, any>, what: string): Record<string, unknown> {
  let value: unknown = {};
  if (opts.file !== undefined && opts.data !== undefined) throw new CliError('give either --file or --data, not both', EXIT.USAGE);
  if (opts.file !== undefined || opts.data !== undefined) {
    let text: string;
    try {
      text = opts.data ?? readFileSync(opts.file === '-' ? 0 : opts.file!, 'utf8');
    } catch (err) {
      throw new CliError(`cannot read ${opts.file}: ${(err as NodeJS.ErrnoException).code ?? err}`, EXIT.USAGE);
    }
    try {
      value = JSON.parse(text);
    } catch (err) {
      throw new ValidationError(`the ${what} is not valid JSON: ${(err as Error).message}`, [{ path: '', message: 'is not valid JSON' }], { attempts: 0 });
    }
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    throw new ValidationError(`the ${what} must be a JSON object`, [{ path: '', message: 'must be a JSON object' }], { attempts: 0 });
  }
  for (const assignment of opts.set ?? []) {
    const eq = assignment.indexOf('=');
    if (eq <= 0) throw new CliError(`--set takes field=value, got ${JSON.stringify(assignment)}`, EXIT.USAGE);
    const raw = assignment.slice(eq + 1);
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      parsed = raw; // a bare word is a string
    }
    (value as Record<string, unknown>)[assignment.slice(0, eq)] = parsed;
  }
  if (opts.file === undefined && opts.data === undefined && !(opts.set ?? []).length) throw new CliError(`give the ${what} with --file <path|->, --data <json> or --set field=value`, EXIT.USAGE);
  return value as Record<string, unknown>;
}

function printDryRun(req: PreparedRequest | null, json: boolean | undefined): void {
  if (req === null) {
    process.stderr.write('dry run: nothing would change; no request would be sent\n');
    if (json) process.stdout.write('null\n');
    return;
  }
  for (const w of req.warnings) process.stderr.write(`warning: ${w.path}: ${w.message}\n`);
  if (json) {
    process.stdout.write(JSON.stringify(req, null, 2) + '\n');
    return;
  }
  let text = `${req.method} ${req.url}\n`;
  for (const [k, v] of Object.entries(req.headers)) text += `${k}: ${v}\n`;
  if (req.body !== undefined) text += `\n${JSON.stringify(req.body, null, 2)}\n`;
  process.stdout.write(text);
  process.stderr.write('dry run: the request is valid and was not sent\n');
}

/** Streams rows to stdout as a table, CSV or a JSON array. */
async function printRows(rows: AsyncIterable<Record<string, unknown>>, flags: OutputFlags, defaults: string[]): Promise<number> {
  const columns = flags.columns ? flags.columns.split(',').map((c) => c.trim()).filter(Boolean) : defaults;
  let n = 0;
  if (flags.json) {
    process.stdout.write('[');
    for await (const row of rows) process.stdout.write((n++ ? ',\n' : '\n') + JSON.stringify(row));
    process.stdout.write(n ? '\n]\n' : ']\n');
    return n;
  }
  if (flags.csv) {
    process.stdout.write(csvRow(columns));
    for await (const row of rows) {
      process.stdout.write(csvRow(columns.map((c) => row[c])));
      n++;
    }
    return n;
  }
  const all: Array<Record<string, unknown>> = [];
  for await (const row of rows) all.push(row);
  process.stdout.write(formatTable(all, columns));
  return all.length;
}

/** A progress line on stderr: rewritten in place on a terminal, one line per page with --progress otherwise. */
function progressReporter(what: string, forced: boolean | undefined): ((p: { fetched: number; total?: number }) => void) | undefined {
  const tty = process.stderr.isTTY;
  if (forced === false || (!tty && !forced)) return undefined;
  return ({ fetched, total }) => {
    if (total !== undefined && total <= 100 && !forced) return; // one page is not a long listing
    const line = `fetched ${fetched}${total !== undefined ? ` of ${total}` : ''} ${what}`;
    process.stderr.write(tty ? `\r${line}\x1b[K` : `${line}\n`);
    if (tty && total !== undefined && fetched >= total) process.stderr.write('\n');
  };
}

type Flags = ConnectionFlags & OutputFlags & Record<string, any>;

/** `-v`: one stderr line per HTTP attempt from the client's `response` hook (URLs scrubbed, no headers); retries are logged as warnings. */
function logRequests(client: DealApiClient): void {
  const path = (url: string) => new URL(url).pathname + new URL(url).search;
  client.on('response', (e) => process.stderr.write(`${e.method} ${path(e.url)} → ${e.status ?? e.error} (${e.elapsedMs} ms${e.attempt > 1 ? `, attempt ${e.attempt}` : ''})\n`));
}

/** Adds `deals …`, `lookups` and `login` to the program. */
export function registerDealsCommands(program: Command): void {
  const deals = program.command('deals').description('manage deals on the deal API (spec: deal-api.md)');
  registerPlanCommands(deals, { connectionOptions, withSession, exitCodeOf });

  outputOptions(connectionOptions(deals.command('list')))
    .description('list deals across every page')
    .option('--archived', 'only archived deals')
    .option('--no-archived', 'only deals that are not archived')
    .option('--soon-expired', 'only deals expiring soon')
    .option('--parent', 'only parent deals')
    .option('--since <datetime>', 'created or modified after (ISO 8601, UTC)')
    .option('--sort-by <field>', 'sort field')
    .addOption(new Option('--asc', 'ascending').conflicts('desc'))
    .option('--desc', 'descending')
    .option('--buyer-ids <ids>', 'comma-separated buyer ids', idList('--buyer-ids'))
    .option('--dsp-ids <ids>', 'comma-separated DSP ids', idList('--dsp-ids'))
    .option('--platform-ids <ids>', 'comma-separated platform ids', idList('--platform-ids'))
    .option('--format-ids <ids>', 'comma-separated format ids', idList('--format-ids'))
    .option('--limit <n>', 'at most this many deals', intArg('--limit'))
    .option('--offset <n>', 'skip this many deals', intArg('--offset'))
    .option('--concurrency <n>', 'pages fetched at once (1 follows Link one page at a time)', intArg('--concurrency', 1))
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
          const list = client.deals.list({ ...filters, concurrency: flags.concurrency, limit: flags.limit, onProgress: progressReporter('deals', flags.progress) });
          await printRows(list as AsyncIterable<unknown> as AsyncIterable<Record<string, unknown>>, flags, DEAL_COLUMNS);
        });
      }),
    );

  outputOptions(connectionOptions(deals.command('get')))
    .description('show one deal')
    .argument('<id>', 'the service-side deal id')
    .action(
      action(async (id: string, flags: Flags) => {
        await withSession(flags, async (client) => {
          const deal = (await client.deals.get(id)) as unknown as Record<string, unknown>;
          if (flags.json) process.stdout.write(JSON.stringify(deal, null, 2) + '\n');
          else if (flags.csv) {
            const columns = flags.columns ? flags.columns.split(',') : Object.keys(deal);
            process.stdout.write(csvRow(columns) + csvRow(columns.map((c) => deal[c])));
          } else process.stdout.write(formatRecord(deal));
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
      .option('--set <field=value>', 'set one field (value parsed as JSON, else a string); repeatable', (v: string, prev: string[] = []) => [...prev, v]);

  dealInputOptions(writeOptions(deals.command('create')))
    .description('create a deal (validated first; never retried once it may have reached the service)')
    .option('--copy-of <id>', 'create it as a copy of this deal (X-CopyOfDealId)')
    .action(
      action(async (flags: Flags) => {
        const deal = readJsonInput(flags, 'deal');
        await withSession(flags, async (client) => {
          if (flags.dryRun) return printDryRun(await client.deals.dryRun.create(deal as any, { copyOf: flags.copyOf }), flags.json);
          const created = await client.deals.create(deal as any, { copyOf: flags.copyOf });
          if (flags.json) process.stdout.write(JSON.stringify({ id: created.id, location: created.location, historyId: created.historyId }, null, 2) + '\n');
          else process.stdout.write(`${created.id}\n`);
          process.stderr.write(`created deal ${created.id} (${created.location}${created.historyId ? `, history ${created.historyId}` : ''})\n`);
        });
      }),
    );

  dealInputOptions(writeOptions(deals.command('update')))
    .description('change some fields of a deal: read, merge, validate, PUT (omitted fields keep their values)')
    .argument('<id>', 'the service-side deal id')
    .action(
      action(async (id: string, flags: Flags) => {
        const patch = readJsonInput(flags, 'patch');
        await withSession(flags, async (client) => {
          if (flags.dryRun) return printDryRun(await client.deals.dryRun.update(id, patch as any), flags.json);
          const deal = await client.deals.update(id, patch as any);
          printWritten(deal as unknown as Record<string, unknown>, flags.json, `updated deal ${deal.id}`);
        });
      }),
    );

  for (const [name, verb, past] of [
    ['pause', 'pause', 'paused'],
    ['resume', 'resume', 'resumed'],
  ] as const) {
    writeOptions(deals.command(name))
      .description(`${verb} a deal (isActive ${name === 'pause' ? 'false' : 'true'})`)
      .argument('<id>', 'the service-side deal id')
      .action(
        action(async (id: string, flags: Flags) => {
          await withSession(flags, async (client) => {
            if (flags.dryRun) return printDryRun(await client.deals.dryRun[name](id), flags.json);
            const deal = await client.deals[name](id);
            printWritten(deal as unknown as Record<string, unknown>, flags.json, `${past} deal ${deal.id}`);
          });
        }),
      );
  }

  writeOptions(deals.command('delete'))
    .description('delete a deal')
    .argument('<id>', 'the service-side deal id')
    .action(
      action(async (id: string, flags: Flags) => {
        await withSession(flags, async (client) => {
          if (flags.dryRun) return printDryRun(await client.deals.dryRun.delete(id), flags.json);
          await client.deals.delete(id);
          process.stderr.write(`deleted deal ${id}\n`);
        });
      }),
    );

  outputOptions(connectionOptions(deals.command('count')))
    .description('count deals by status (countBreakdown)')
    .action(
      action(async (flags: Flags) => {
        await withSession(flags, async (client) => {
          const counts = await client.deals.countBreakdown();
          if (flags.json) process.stdout.write(JSON.stringify(counts, null, 2) + '\n');
          else {
            const rows = flatten(counts).map(([status, count]) => ({ status, count }));
            process.stdout.write(flags.csv ? csvRow(['status', 'count']) + rows.map((r) => csvRow([r.status, r.count])).join('') : formatTable(rows, ['status', 'count']));
          }
        });
      }),
    );

  const domainlist = deals.command('domainlist').description('attach a domain list to a deal, or detach it');
  for (const [name, method] of [
    ['attach', 'attachDomainList'],
    ['detach', 'detachDomainList'],
  ] as const) {
    writeOptions(domainlist.command(name))
      .description(`${name} a domain list ${name === 'attach' ? 'to' : 'from'} a deal (refused to DSP callers)`)
      .argument('<id>', 'the service-side deal id')
      .argument('<domainListId>', 'the domain list id', intArg('<domainListId>', 1))
      .action(
        action(async (id: string, domainListId: number, flags: Flags) => {
          await withSession(flags, async (client) => {
            if (flags.dryRun) return printDryRun(await client.deals.dryRun[method](id, domainListId), flags.json);
            await client.deals[method](id, domainListId);
            process.stderr.write(`${name === 'attach' ? 'attached' : 'detached'} domain list ${domainListId} ${name === 'attach' ? 'to' : 'from'} deal ${id}\n`);
          });
        }),
      );
  }

  outputOptions(connectionOptions(program.command('lookups')))
    .description(`list reference items: ${LOOKUP_RESOURCES.join(', ')}`)
    .argument('<resource>', 'lookup resource (case-insensitive)')
    .option('--ids <ids>', 'only these comma-separated ids')
    .option('--search <text>', 'search in the names (extendedSearch)')
    .option('--limit <n>', 'at most this many items', intArg('--limit'))
    .option('--offset <n>', 'skip this many items', intArg('--offset'))
    .action(
      action(async (resource: string, flags: Flags) => {
        await withSession(flags, async (client) => {
          const ids = flags.ids ? String(flags.ids).split(',').map((s) => s.trim()).filter(Boolean) : undefined;
          const list = client.lookups.list<Record<string, unknown>>(resource, { ids, search: flags.search, limit: flags.limit, offset: flags.offset });
          await printRows(list, flags, LOOKUP_COLUMNS);
        });
      }),
    );

  connectionOptions(program.command('login'))
    .description('obtain a user token and cache it in a file only you can read')
    .action(
      action(async (flags: Flags) => {
        await withSession(flags, async (client) => {
          await client.authenticate();
          const where = flags.simulator ? 'not cached: the in-process simulator lives only as long as this command' : flags.cache === false ? 'not cached (--no-cache)' : `cached in ${flags.tokenFile ?? defaultTokenPath()}`;
          process.stderr.write(`logged in to ${client.baseUrl.href}; token ${where}\n`);
        });
      }),
    );
}

function printWritten(deal: Record<string, unknown>, json: boolean | undefined, message: string): void {
  if (json) process.stdout.write(JSON.stringify(deal, null, 2) + '\n');
  else process.stdout.write(formatRecord(deal));
  process.stderr.write(`${message}\n`);
}

/** Nested counts as dotted rows: `{ byType: { DirectDeal: 2 } }` → `byType.DirectDeal 2`. */
function flatten(value: Record<string, unknown>, prefix = ''): Array<[string, unknown]> {
  return Object.entries(value).flatMap(([k, v]) =>
    v !== null && typeof v === 'object' && !Array.isArray(v) ? flatten(v as Record<string, unknown>, `${prefix}${k}.`) : [[`${prefix}${k}`, v] as [string, unknown]],
  );
}
