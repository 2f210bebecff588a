/** `eidkit simulate`: the deal API simulator (src/simulator) on loopback, registered on the program by ./index.ts. */
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { resolve } from 'node:path';
import { examples, outText } from './output.js';
import { listenError } from './listen.js';
import {
  createDealApiSimulator,
  DEMO_SEED_DEALS,
  DEMO_USERS,
  loadUsersFile,
  type FaultKind,
  type SimulatorUser,
} from '../simulator/index.js';
import { appendExchanges } from '../simulator/record.js';

function nonNegativeInt(name: string) {
  return (raw: string): number => {
    if (!/^\d+$/.test(raw)) throw new InvalidArgumentError(`${name} must be a non-negative integer`);
    return Number(raw);
  };
}

function fraction(raw: string): number {
  const n = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(n) || n < 0 || n > 1) {
    throw new InvalidArgumentError('--faults must be a share of requests between 0 and 1, e.g. 0.2');
  }
  return n;
}

const FAULT_KINDS: readonly FaultKind[] = ['429', '503', 'drop'];

function faultKinds(raw: string): FaultKind[] {
  const kinds = raw.split(',').map((k) => k.trim());
  const bad = kinds.find((k) => !FAULT_KINDS.includes(k as FaultKind));
  if (bad !== undefined) {
    throw new InvalidArgumentError(`--fault-kinds takes ${FAULT_KINDS.join(', ')} (comma-separated)`);
  }
  return kinds as FaultKind[];
}

function instant(raw: string): number {
  const ms = /^\d{4}-\d{2}-\d{2}(T.*)?$/.test(raw) ? Date.parse(raw.length === 10 ? `${raw}T00:00:00Z` : raw) : NaN;
  if (Number.isNaN(ms)) {
    throw new InvalidArgumentError('--clock must be an ISO 8601 date or date-time, e.g. 2030-01-01T00:00:00Z');
  }
  return ms;
}

function speed(raw: string): number {
  const n = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(n) || n < 0 || n > 1e7) {
    throw new InvalidArgumentError('--clock-speed must be a number from 0 (a fixed clock) to 10000000');
  }
  return n;
}

/** The simulator's clock: from `start` (default now), running `rate` times real time (0: fixed). */
export function simulatorClock(
  start: number | undefined,
  rate: number,
  realNow: () => number = Date.now,
): () => number {
  const t0 = realNow();
  const from = start ?? t0;
  return () => Math.round(from + (realNow() - t0) * rate);
}

/** Options of `eidkit simulate`. */
interface SimulateOptions {
  port: number;
  host: string;
  data?: string;
  users?: string;
  seedDeals: number;
  latency: number;
  faults: number;
  faultKinds: FaultKind[];
  faultSeed?: number;
  clock?: number;
  clockSpeed: number;
  record?: string;
}

/** A value quoted for a POSIX shell when it holds anything but safe characters. */
function shellQuote(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

/** The `NAME=value` settings that log the CLI in as one user. */
function userExports(u: SimulatorUser): string[] {
  return [
    `EIDKIT_CLIENT_ID=${shellQuote(u.clientId)}`,
    `EIDKIT_CLIENT_SECRET=${shellQuote(u.clientSecret)}`,
    `EIDKIT_USERNAME=${shellQuote(u.username)}`,
    `EIDKIT_PASSWORD=${shellQuote(u.password)}`,
  ];
}

/** Adds `eidkit simulate` to the program. */
export function registerSimulateCommand(program: Command): void {
  examples(
    program.command('simulate'),
    'eidkit simulate',
    'eidkit simulate --port 0 --seed-deals 3000 --data /tmp/deals.json',
    'eidkit simulate --faults 0.2 --clock 2030-01-01 --clock-speed 3600',
  )
    .description('run the local deal API simulator on loopback (prints base URL, auth URL and demo credentials)')
    .option('--port <n>', 'port to listen on (0 = any free port)', nonNegativeInt('--port'), 4010)
    .option('--host <host>', 'address to bind', '127.0.0.1')
    .option('--data <file>', 'persist deals and quotas to this JSON file (atomic writes)')
    .option('--users <file>', 'JSON file of accepted users (docs/simulator.md); default: the demo users')
    .option(
      '--seed-deals <n>',
      'demo deals generated for company 1 when it has none (the same as --simulator; 0: start empty)',
      nonNegativeInt('--seed-deals'),
      DEMO_SEED_DEALS,
    )
    .option('--latency <ms>', 'added latency per request', nonNegativeInt('--latency'), 0)
    .option('--faults <share>', 'answer this share of requests (0..1) with an injected fault', fraction, 0)
    .option('--fault-kinds <kinds>', 'faults to pick from: 429, 503, drop (comma-separated)', faultKinds, [
      '429',
      '503',
    ])
    .option('--fault-seed <n>', 'seed of the fault picks, for reproducible runs', nonNegativeInt('--fault-seed'))
    .option('--clock <date-time>', 'start the clock (quotas, token expiry, flight phases) at this instant', instant)
    .option('--clock-speed <factor>', 'clock rate: 1 real time, 0 fixed, 3600 an hour per second', speed, 1)
    .option('--record <file>', 'append every request and response (credentials scrubbed) to FILE as JSON lines')
    .action(async (opts: SimulateOptions) => {
      const users: SimulatorUser[] = opts.users ? loadUsersFile(resolve(opts.users)) : [...DEMO_USERS];
      const clocked = opts.clock !== undefined || opts.clockSpeed !== 1;
      const sim = createDealApiSimulator({
        users,
        dataFile: opts.data ? resolve(opts.data) : undefined,
        latencyMs: opts.latency,
        seed: opts.seedDeals > 0 ? { deals: opts.seedDeals } : undefined,
        ...(opts.faults > 0 ? { faults: { rate: opts.faults, kinds: opts.faultKinds, seed: opts.faultSeed } } : {}),
        ...(clocked ? { now: simulatorClock(opts.clock, opts.clockSpeed) } : {}),
        ...(opts.record ? { onExchange: appendExchanges(resolve(opts.record)) } : {}),
      });
      let listening: Awaited<ReturnType<typeof sim.listen>>;
      try {
        listening = await sim.listen({ port: opts.port, host: opts.host });
      } catch (err) {
        await sim.close();
        throw listenError(err, opts.host, opts.port);
      }
      const { url, close } = listening;
      const lines = [
        `eidkit deal API simulator listening`,
        `  base URL:  ${url}`,
        `  auth URL:  ${url}   (POST /oauth/token, then GET /authorize)`,
        `  audience:  ${sim.audience}`,
        `  OpenAPI:   ${url}/openapi.json`,
        `  data:      ${opts.data ? resolve(opts.data) : 'in memory (use --data FILE to persist)'}`,
      ];
      if (clocked) {
        const rate = opts.clockSpeed === 0 ? 'fixed' : `${opts.clockSpeed}x real time`;
        lines.push(`  clock:     from ${new Date(opts.clock ?? Date.now()).toISOString()}, ${rate}`);
      }
      if (opts.faults > 0) lines.push(`  faults:    ${opts.faults * 100}% of requests (${opts.faultKinds.join(', ')})`);
      if (opts.record) lines.push(`  recording: ${resolve(opts.record)}`);
      const connection = [
        // The origin itself: the OpenAPI document's paths, which a validating proxy in front matches as they are.
        `export EIDKIT_BASE_URL=${url}/`,
        `export EIDKIT_AUTH_URL=${url}`,
        `export EIDKIT_AUDIENCE=${shellQuote(sim.audience)}`,
      ];
      if (opts.users) {
        // Credentials from a user-supplied file are secrets: list who may log in, never their passwords.
        lines.push(`  users (from ${opts.users}): ${users.map((u) => `${u.username} [${u.kind}]`).join(', ')}`);
        lines.push(
          '',
          '# ready to paste, then set EIDKIT_CLIENT_ID, EIDKIT_CLIENT_SECRET, EIDKIT_USERNAME and EIDKIT_PASSWORD:',
          ...connection,
        );
      } else {
        lines.push('  demo credentials (public, for local testing only):');
        for (const u of users) {
          lines.push(
            `    ${u.kind.padEnd(7)} username=${u.username} password=${u.password} client_id=${u.clientId} client_secret=${u.clientSecret}`,
          );
        }
        const [first, ...others] = users;
        lines.push(
          '',
          `# ready to paste: the eidkit CLI as ${first.username}`,
          ...connection,
          ...userExports(first).map((e) => `export ${e}`),
        );
        for (const u of others) lines.push(`# or as ${u.username} (${u.kind}): export ${userExports(u).join(' ')}`);
      }
      await outText(`${lines.join('\n')}\n`);
      await new Promise<void>((done) => {
        const stop = () => {
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
          void close().then(done);
        };
        process.on('SIGINT', stop);
        process.on('SIGTERM', stop);
      });
    });
}
