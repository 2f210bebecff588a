/**
 * Input and output of the `deals`, `lookups` and `login` commands: reading a deal from --file / --data / --set,
 * printing rows as a table, CSV or JSON through ./output.ts, and mapping client errors to exit codes.
 */
import { readFileSync } from 'node:fs';
import { Option, type Command } from 'commander';
import { EXIT } from './exit-codes.js';
import { CliError, OutputClosedError, jsonForStdout, out, outJson, outText, say, toStderrRaw } from './output.js';
import { formatRecord, formatTable } from './format.js';
import { closestName } from './suggest.js';
import { terminalSafe } from '../core/terminal.js';
import { csvRow } from '../core/csv.js';
import {
  AuthenticationError,
  ConnectionError,
  DealApiError,
  PayloadTooLargeError,
  TimeoutError,
  ValidationError,
  ConfigError,
  DEFAULT_MAX_ITEMS,
  DEFAULT_MAX_PAGES,
  type PreparedRequest,
} from '../deals/index.js';
import { DealDateTimeSchema } from '../deals/rules/index.js';
import { fileErrorText } from '../core/file-error.js';

/** --json, --csv and --columns. */
export interface OutputFlags {
  json?: boolean;
  csv?: boolean;
  columns?: string;
}

/** The exit code for an error of the deal API client. */
function exitCodeOf(err: unknown): number {
  if (err instanceof ConfigError) return EXIT.USAGE;
  if (err instanceof ValidationError || err instanceof PayloadTooLargeError) return EXIT.VALIDATION;
  if (err instanceof AuthenticationError) return EXIT.AUTH;
  if (err instanceof TimeoutError && err.status === undefined) return EXIT.NETWORK;
  if (err instanceof ConnectionError) return EXIT.NETWORK;
  if (err instanceof DealApiError) return EXIT.API;
  return EXIT.ERROR;
}

/**
 * A client error as the CLI prints it: the message once; for a validation error its summary, then one line per field.
 */
export function toCliError(err: unknown): unknown {
  if (err instanceof CliError || err instanceof OutputClosedError) return err;
  if (err instanceof ValidationError && err.issues.length) {
    return new CliError(
      err.summary,
      EXIT.VALIDATION,
      err.issues.map((i) => `${i.path || '(deal)'}: ${i.message}`),
    );
  }
  const code = exitCodeOf(err);
  return code === EXIT.ERROR ? err : new CliError(err instanceof Error ? err.message : String(err), code);
}

/** Wraps a command action so client errors leave it as CliErrors; src/cli/output.ts prints them once. */
export function action<A extends unknown[]>(fn: (...args: A) => Promise<void>): (...args: A) => Promise<void> {
  return async (...args: A) => {
    try {
      await fn(...args);
    } catch (err) {
      throw toCliError(err);
    }
  };
}

/** Adds --json, --csv and --columns. */
export function outputOptions(cmd: Command): Command {
  return cmd
    .addOption(new Option('--json', 'print JSON').conflicts('csv'))
    .addOption(
      new Option(
        '--csv',
        "print CSV (RFC 4180; text that a spreadsheet would run as a formula is prefixed with ')",
      ).conflicts('json'),
    )
    .option('--columns <list>', 'comma-separated columns for the table and CSV');
}

/** The caps of one listing (`--max-items`, `--max-pages`), as commander hands them over. */
export interface ListingFlags {
  maxItems?: number;
  maxPages?: number;
}

/** Adds the caps of one listing: a service whose paging would not end stops the command with exit 5. */
export function listingOptions(cmd: Command): Command {
  return cmd
    .option(
      '--max-items <n>',
      `stop with an error past this many items (default ${DEFAULT_MAX_ITEMS})`,
      intArg('--max-items', 1),
    )
    .option(
      '--max-pages <n>',
      `stop with an error past this many requests (default ${DEFAULT_MAX_PAGES})`,
      intArg('--max-pages', 1),
    );
}

/** An integer option parser (usage error, exit 2, below `min`). */
export function intArg(name: string, min = 0): (value: string) => number {
  return (value: string) => {
    if (!/^\d+$/.test(value) || Number(value) < min)
      throw new CliError(`${name} must be an integer ≥ ${min}, got ${JSON.stringify(value)}`, EXIT.USAGE);
    return Number(value);
  };
}

/**
 * An ISO 8601 date or date-time option parser (`2025-01-01`, `2025-01-01T12:00:00Z`), checked before any request
 * by the same rule the service applies to dates (DealDateTimeSchema).
 */
export function isoDateArg(name: string): (value: string) => string {
  return (value: string) => {
    if (!DealDateTimeSchema.safeParse(value).success) {
      throw new CliError(
        `${name} must be an ISO 8601 date or date-time such as 2025-01-31 or 2025-01-31T08:00:00Z, got ${JSON.stringify(value)}`,
        EXIT.USAGE,
      );
    }
    return value;
  };
}

/** A comma-separated id list option parser. */
export function idList(name: string): (value: string) => number[] {
  return (value: string) => {
    const parts = value
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    if (!parts.every((p) => /^\d+$/.test(p)))
      throw new CliError(`${name} must be comma-separated integers, got ${JSON.stringify(value)}`, EXIT.USAGE);
    return parts.map(Number);
  };
}

/**
 * The columns asked for with --columns, or undefined. With `fields` (those of the records printed), a name that is
 * none of them is refused (exit 2) with the closest field, rather than printed as an empty column.
 */
export function columnsOf(flags: OutputFlags, fields?: readonly string[]): string[] | undefined {
  const list = flags.columns
    ?.split(',')
    .map((c) => c.trim())
    .filter(Boolean);
  if (fields) {
    const unknown = (list ?? []).filter((c) => !fields.includes(c));
    if (unknown.length) {
      const hint = closestName(unknown[0], fields);
      throw new CliError(
        terminalSafe(
          `--columns: no field named ${unknown.map((c) => JSON.stringify(c)).join(', ')}` +
            (hint ? ` (did you mean ${hint}?)` : '') +
            `; the fields are ${fields.join(', ')}`,
        ),
        EXIT.USAGE,
      );
    }
  }
  return list?.length ? list : undefined;
}

/** Reads a JSON object from --file (- for stdin) or --data, then applies each --set field=value. */
export function readJsonInput(
  opts: { file?: string; data?: string; set?: string[] },
  what: string,
  options: { optional?: boolean } = {},
): Record<string, unknown> {
  let value: unknown = {};
  if (opts.file !== undefined && opts.data !== undefined)
    throw new CliError('give either --file or --data, not both', EXIT.USAGE);
  if (opts.file !== undefined || opts.data !== undefined) {
    let text: string;
    try {
      text = opts.data ?? readFileSync(opts.file === '-' ? 0 : opts.file!, 'utf8');
    } catch (err) {
      throw new CliError(`cannot read ${opts.file}: ${fileErrorText(err)}`, EXIT.USAGE);
    }
    try {
      value = JSON.parse(text);
    } catch (err) {
      throw new CliError(`the ${what} is not valid JSON: ${(err as Error).message}`, EXIT.VALIDATION);
    }
  }
  if (!value || typeof value !== 'object' || Array.isArray(value))
    throw new CliError(`the ${what} must be a JSON object`, EXIT.VALIDATION);
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
  const given = opts.file !== undefined || opts.data !== undefined || (opts.set ?? []).length > 0;
  if (!given && !options.optional)
    throw new CliError(`give the ${what} with --file <path|->, --data <json> or --set field=value`, EXIT.USAGE);
  return value as Record<string, unknown>;
}

/** Prints what a write would send (`--dry-run`). */
export async function printDryRun(req: PreparedRequest | null, json: boolean | undefined): Promise<void> {
  if (req === null) {
    say('dry run: nothing would change; no request would be sent');
    if (json) await out('null\n');
    return;
  }
  for (const w of req.warnings) say(`warning: ${w.path}: ${w.message}`);
  if (json) return outJson(req);
  let text = `${req.method} ${req.url}\n`;
  for (const [k, v] of Object.entries(req.headers)) text += `${k}: ${v}\n`;
  if (req.body !== undefined) text += `\n${JSON.stringify(req.body, null, 2)}\n`;
  await outText(text);
  say('dry run: the request is valid and was not sent');
}

/** Prints a deal after a write (JSON or key/value lines) and a message on stderr. */
export async function printWritten(
  deal: Record<string, unknown>,
  json: boolean | undefined,
  message: string,
): Promise<void> {
  await (json ? outJson(deal) : outText(formatRecord(deal)));
  say(message);
}

/** Prints one record as JSON, or as CSV (header and one row) or key/value lines limited to --columns. */
export async function printRecord(record: Record<string, unknown>, flags: OutputFlags): Promise<void> {
  const columns = columnsOf(flags, Object.keys(record));
  if (flags.json) return outJson(record);
  if (flags.csv) {
    const cols = columns ?? Object.keys(record);
    return out(csvRow(cols) + csvRow(cols.map((c) => record[c])));
  }
  return outText(formatRecord(record, columns));
}

/** The rows of `rest`, with `first` (already read from it) in front; stopping early stops `rest`. */
async function* withFirst<T>(first: IteratorResult<T>, rest: AsyncIterator<T>): AsyncGenerator<T> {
  try {
    for (let r = first; !r.done; r = await rest.next()) yield r.value;
  } finally {
    await rest.return?.();
  }
}

/**
 * Streams rows to stdout as a table, CSV or a JSON array, waiting for the reader when it is slower. When the
 * listing fails part way (a network error, a service whose paging would not end), what was listed so far is still
 * printed whole (the JSON array closed, the table drawn) before the error ends the command.
 */
export async function printRows(
  rows: AsyncIterable<Record<string, unknown>>,
  flags: OutputFlags,
  defaults: string[],
  what = 'items',
): Promise<number> {
  // The first row says which fields there are, before anything is printed.
  const iterator = rows[Symbol.asyncIterator]();
  const first = await iterator.next();
  let columns: string[];
  try {
    columns = columnsOf(flags, first.done ? undefined : Object.keys(first.value)) ?? defaults;
  } catch (e) {
    await iterator.return?.();
    throw e;
  }
  rows = withFirst(first, iterator);
  let n = 0;
  let failure: { error: unknown } | undefined;
  /** Runs `each` on every row until the listing ends or fails; a closed stdout ends the command at once. */
  const drain = async (each: (row: Record<string, unknown>) => Promise<void> | void) => {
    try {
      for await (const row of rows) await each(row);
    } catch (error) {
      if (error instanceof OutputClosedError) throw error;
      failure = { error };
    }
  };
  if (flags.json) {
    await out('[');
    await drain((row) => out((n++ ? ',\n' : '\n') + jsonForStdout(JSON.stringify(row))));
    await out(n ? '\n]\n' : ']\n');
  } else if (flags.csv) {
    await out(csvRow(columns));
    await drain(async (row) => {
      await out(csvRow(columns.map((c) => row[c])));
      n++;
    });
  } else {
    const all: Record<string, unknown>[] = [];
    await drain((row) => void all.push(row));
    n = all.length;
    // A table of nothing would be a lone header row: say so on stderr instead, as `gh` does (stdout stays empty).
    if (n) await outText(formatTable(all, columns));
    else if (!failure) say(`no ${what} match`);
  }
  if (failure) {
    if (n) say(`${n} ${what} printed before the listing stopped`);
    throw failure.error;
  }
  return n;
}

/** A progress line on stderr: rewritten in place on a terminal, one line per page with --progress otherwise. */
export function progressReporter(
  what: string,
  forced: boolean | undefined,
): ((p: { fetched: number; total?: number }) => void) | undefined {
  const tty = process.stderr.isTTY;
  if (forced === false || (!tty && !forced)) return undefined;
  return ({ fetched, total }) => {
    if (total !== undefined && total <= 100 && !forced) return; // one page is not a long listing
    const line = `fetched ${fetched}${total !== undefined ? ` of ${total}` : ''} ${what}`;
    if (!tty) return say(line);
    toStderrRaw(`\r${line}\x1b[K${total !== undefined && fetched >= total ? '\n' : ''}`);
  };
}
