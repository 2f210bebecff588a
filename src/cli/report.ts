/**
 * `eidkit report uplift` and `eidkit report export`: the holdout experiments of a report (docs/ad-server.md
 * "Reading the uplift report"), read from the fleet's Redis report or from a snapshot file (`report export`, or
 * `JSON.stringify(report.toJSON())`), as a table, JSON or CSV. The Redis URL's password never appears in any
 * output. Registered on the program by ./index.ts.
 */
import type { Command } from 'commander';
import { InvalidArgumentError, Option } from 'commander';
import { readFile, stat } from 'node:fs/promises';
import { createRedisReport, reportSnapshotOf, ReportSnapshotError, upliftOf } from '../adserver/index.js';
import type { ReportJson, UpliftResult } from '../adserver/index.js';
import { csvRow } from '../core/csv.js';
import { terminalSafe } from '../core/terminal.js';
import { EXIT } from './exit-codes.js';
import { formatTable } from './format.js';
import { CliError, examples, out, outJson, outText } from './output.js';

/** Largest snapshot file read, in bytes: a year of days of 10,000 networks is far less. */
const MAX_SNAPSHOT_BYTES = 256 * 1024 * 1024;

interface SourceOptions {
  file?: string;
  redis?: string;
  prefix: string;
  timeout: number;
}

/** `url` with its password (and user name) replaced, for any message that may quote it. */
export function scrubRedisUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(a Redis URL that does not parse)';
  }
}

/** A message with every occurrence of the secret replaced (a client's error may quote its URL). */
const scrub = (message: string, secret: string) => (secret ? message.split(secret).join('***') : message);

async function readSnapshot(path: string): Promise<ReportJson> {
  let text: string;
  try {
    const size = (await stat(path)).size;
    if (size > MAX_SNAPSHOT_BYTES)
      throw new CliError(`${path}: larger than ${MAX_SNAPSHOT_BYTES} bytes`, EXIT.VALIDATION);
    text = await readFile(path, 'utf8');
  } catch (e) {
    if (e instanceof CliError) throw e;
    throw new CliError(`${path}: could not be read (${(e as Error).message})`, EXIT.ERROR);
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new CliError(`${path}: not valid JSON (${(e as Error).message})`, EXIT.VALIDATION);
  }
  try {
    return reportSnapshotOf(data);
  } catch (e) {
    if (e instanceof ReportSnapshotError) throw new CliError(`${path}: not a report: ${e.message}`, EXIT.VALIDATION);
    throw e;
  }
}

async function readRedis(url: string, prefix: string, timeoutMs: number): Promise<ReportJson> {
  let password = '';
  let where: string;
  try {
    const u = new URL(url);
    password = decodeURIComponent(u.password);
    where = u.host;
    if (u.protocol !== 'redis:' && u.protocol !== 'rediss:') throw new Error('not redis:// or rediss://');
  } catch (e) {
    throw new CliError(`--redis ${scrubRedisUrl(url)}: not a Redis URL (${(e as Error).message})`, EXIT.USAGE);
  }
  let redis: typeof import('redis');
  try {
    redis = await import('redis');
  } catch {
    throw new CliError('--redis needs the `redis` package (npm install redis)', EXIT.ERROR);
  }
  const client = redis.createClient({
    url,
    disableOfflineQueue: true,
    socket: { connectTimeout: timeoutMs, reconnectStrategy: false },
  });
  let lastError: unknown;
  client.on('error', (e: unknown) => (lastError = e));
  const fail = (e: unknown): never => {
    const message = scrub(((lastError ?? e) as Error)?.message ?? String(e), password);
    throw new CliError(`Redis at ${where}: ${scrub(message, url)}`, EXIT.NETWORK);
  };
  try {
    await client.connect();
  } catch (e) {
    fail(e);
  }
  try {
    const report = createRedisReport(client, { prefix });
    const json = await report.toJSON();
    await report.close();
    return json;
  } catch (e) {
    return fail(e);
  } finally {
    await client.close().catch(() => undefined);
  }
}

async function readReport(o: SourceOptions): Promise<ReportJson> {
  if (o.file !== undefined && o.redis !== undefined) throw new CliError('give --file or --redis, not both', EXIT.USAGE);
  if (o.file !== undefined) return readSnapshot(o.file);
  const url = o.redis ?? process.env.REDIS_URL;
  if (!url) throw new CliError('give --file <report.json> or --redis <url> (or set REDIS_URL)', EXIT.USAGE);
  return readRedis(url, o.prefix, o.timeout);
}

const pct = (x: number | undefined, digits = 1) =>
  x === undefined || !Number.isFinite(x) ? '' : `${x >= 0 ? '+' : ''}${(x * 100).toFixed(digits)} %`;
const share = (x: number) => `${(x * 100).toFixed(1)} %`;
const money = (x: number) => x.toFixed(4);

/** The columns of the table and the CSV, each from one result. */
const COLUMNS: [string, (r: UpliftResult) => unknown, (r: UpliftResult) => unknown][] = [
  ['network', (r) => r.networkId ?? '', (r) => r.networkId],
  ['experiment', (r) => r.experimentId, (r) => r.experimentId],
  [
    'providers',
    (r) => r.providers.map((p) => p.providerName).join(', '),
    (r) => r.providers.map((p) => p.providerName).join('|'),
  ],
  ['days', (r) => r.days, (r) => r.days],
  ['calls held/control', (r) => `${r.holdout.calls}/${r.control.calls}`, () => null],
  ['held out', (r) => `${share(r.sampleRatio.observedShare)} of ${share(r.sampleRatio.declaredShare)}`, () => null],
  ['ratio p', (r) => r.sampleRatio.pValue.toPrecision(2), (r) => r.sampleRatio.pValue],
  ['rev/1000 held', (r) => money(r.holdout.revenuePerMille), (r) => r.holdout.revenuePerMille],
  ['rev/1000 control', (r) => money(r.control.revenuePerMille), (r) => r.control.revenuePerMille],
  ['fill/1000 held', (r) => r.holdout.fillPerMille.toFixed(1), (r) => r.holdout.fillPerMille],
  ['fill/1000 control', (r) => r.control.fillPerMille.toFixed(1), (r) => r.control.fillPerMille],
  ['lift', (r) => pct(r.revenueLift?.lift), (r) => r.revenueLift?.lift ?? null],
  ['95 % interval', (r) => (r.revenueLift ? `${pct(r.revenueLift.low)} … ${pct(r.revenueLift.high)}` : ''), () => null],
  ['p', (r) => r.revenueLift?.pValue.toPrecision(2) ?? '', (r) => r.revenueLift?.pValue ?? null],
  ['coverage', (r) => share(r.coverage), (r) => r.coverage],
  ['forwarded', (r) => r.forwarding.sent, (r) => r.forwarding.sent],
  [
    'withheld',
    (r) => Object.values(r.forwarding.withheld).reduce((a, b) => a + b, 0),
    (r) => Object.values(r.forwarding.withheld).reduce((a, b) => a + b, 0),
  ],
  ['leaked', (r) => r.leakage.calls, (r) => r.leakage.calls],
  [
    'days to target',
    (r) => (r.daysToTarget === null ? '' : r.daysToTarget === 0 ? 'reached' : r.daysToTarget),
    (r) => r.daysToTarget,
  ],
  ['trustworthy', (r) => (r.trustworthy ? 'yes' : 'NO'), (r) => r.trustworthy],
];

/** The CSV columns: the table's, with exact numbers and the arms and interval split into their own columns. */
const CSV_COLUMNS: [string, (r: UpliftResult) => unknown][] = [
  ...COLUMNS.flatMap(([name, , csv]): [string, (r: UpliftResult) => unknown][] => {
    if (name === 'calls held/control')
      return [
        ['calls_holdout', (r) => r.holdout.calls],
        ['calls_control', (r) => r.control.calls],
      ];
    if (name === 'held out')
      return [
        ['declared_share', (r) => r.sampleRatio.declaredShare],
        ['observed_share', (r) => r.sampleRatio.observedShare],
      ];
    if (name === '95 % interval')
      return [
        ['lift_low', (r) => r.revenueLift?.low ?? null],
        ['lift_high', (r) => r.revenueLift?.high ?? null],
      ];
    return [[name.replace(/[^a-z0-9]+/gi, '_').replace(/_$/, ''), csv]];
  }),
  ['per_page_view_share', (r) => r.perPageViewShare],
  ['notes', (r) => r.notes.join(' | ')],
];

function csvOf(results: readonly UpliftResult[]): string {
  return [
    csvRow(CSV_COLUMNS.map(([name]) => name)),
    ...results.map((r) => csvRow(CSV_COLUMNS.map(([, f]) => f(r)))),
  ].join('');
}

function tableOf(results: readonly UpliftResult[], target: number): string {
  if (!results.length) return 'no experiment in the report (calls carry them in `xp`: docs/ad-server.md)\n';
  const rows = results.map((r) => Object.fromEntries(COLUMNS.map(([name, text]) => [name, text(r)])));
  let text = formatTable(
    rows,
    COLUMNS.map(([name]) => name),
    60,
  );
  text += `\nlift: control revenue per call over held-out revenue per call; days to target: more days at the mean daily calls until the interval is within ±${(target * 100).toFixed(1)} %\n`;
  for (const r of results)
    for (const note of r.notes)
      text += `${terminalSafe(`network ${r.networkId ?? 'none'}, ${r.experimentId}`)}: ${terminalSafe(note)}\n`;
  return text;
}

const positiveInt = (name: string) => (raw: string) => {
  if (!/^\d{1,10}$/.test(raw) || Number(raw) < 1) throw new InvalidArgumentError(`${name} must be a whole number > 0`);
  return Number(raw);
};
/** A key prefix as the reports take it: no `{` or `}` (they would change the Redis Cluster hash tag). */
const keyPrefix = (raw: string) => {
  if (/[{}]/.test(raw)) throw new InvalidArgumentError('--prefix must not hold { or }');
  return raw;
};
const percentage = (raw: string) => {
  const n = Number(raw.replace(/%$/, ''));
  if (!(n > 0 && n < 1000)) throw new InvalidArgumentError('--target must be a percentage above 0, e.g. 5');
  return n / 100;
};

/** The options every `report` subcommand reads its report with. */
function withSource(cmd: Command): Command {
  return cmd
    .option('--file <report.json>', 'a report saved as JSON (eidkit report export, or report.toJSON())')
    .option('--redis <url>', 'the fleet Redis report (redis://[:password@]host:port; default $REDIS_URL)')
    .option('--prefix <prefix>', 'the Redis report key prefix', keyPrefix, 'eidkit:report:')
    .option('--timeout <ms>', 'Redis connection timeout', positiveInt('--timeout'), 5_000);
}

/** Adds `eidkit report uplift` and `eidkit report export` to the program. */
export function registerReportCommands(program: Command): void {
  const report = program
    .command('report')
    .description("the ad server's report: holdout experiments and what each id is worth (docs/ad-server.md)");

  const uplift = withSource(
    report
      .command('uplift')
      .description('per experiment: the split check, revenue and fill per 1,000 calls, the lift and its 95 % interval'),
  )
    .option('--network <id>', 'only this network', positiveInt('--network'))
    .option('--experiment <id>', 'only this experiment')
    .option('--target <percent>', "the interval's half-width to reach, in percent of revenue", percentage, 0.05)
    .addOption(new Option('--json', 'print the full results as JSON').conflicts('csv'))
    .option('--csv', 'print one CSV line per experiment')
    .action(
      async (
        opts: SourceOptions & { network?: number; experiment?: string; target: number; json?: boolean; csv?: boolean },
      ) => {
        const json = await readReport(opts);
        const results = upliftOf(json, {
          targetHalfWidth: opts.target,
          ...(opts.network !== undefined ? { networkId: opts.network } : {}),
          ...(opts.experiment !== undefined ? { experimentId: opts.experiment } : {}),
        });
        if (opts.json) await outJson({ experiments: results });
        else if (opts.csv) await out(csvOf(results));
        else await outText(tableOf(results, opts.target));
      },
    );
  examples(
    uplift,
    'eidkit report uplift --redis redis://redis.internal:6379',
    'eidkit report uplift --file report.json --network 1234 --target 2',
    'eidkit report uplift --file report.json --csv > uplift.csv',
  );

  const exportCmd = withSource(
    report.command('export').description('print the whole report (every day and network) as JSON, to analyse later'),
  ).action(async (opts: SourceOptions) => {
    await outJson(await readReport(opts));
  });
  examples(exportCmd, 'REDIS_URL=redis://:secret@redis.internal:6379 eidkit report export > report.json');
}
