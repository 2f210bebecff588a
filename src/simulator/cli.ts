/** CLI commands of src/simulator, registered on the `eidkit` program by src/cli/index.ts. */
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { resolve } from 'node:path';
import { EXIT } from '../cli/exit-codes.js';
import { CliError, examples, outText } from '../cli/output.js';
import { createDealApiSimulator, DEMO_USERS, loadUsersFile, type SimulatorUser } from './index.js';

function nonNegativeInt(name: string) {
  return (raw: string): number => {
    if (!/^\d+$/.test(raw)) throw new InvalidArgumentError(`${name} must be a non-negative integer`);
    return Number(raw);
  };
}

/** A value quoted for a POSIX shell when it holds anything but safe characters. */
function shellQuote(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

/** The `NAME=value` settings that log the CLI in as one user. */
function userExports(u: SimulatorUser): string[] {
  return [`EIDKIT_CLIENT_ID=${shellQuote(u.clientId)}`, `EIDKIT_CLIENT_SECRET=${shellQuote(u.clientSecret)}`, `EIDKIT_USERNAME=${shellQuote(u.username)}`, `EIDKIT_PASSWORD=${shellQuote(u.password)}`];
}

/** Adds `eidkit simulate` to the program. */
export function registerSimulateCommand(program: Command): void {
  examples(program.command('simulate'), 'eidkit simulate', 'eidkit simulate --port 0 --seed-deals 3000 --data /tmp/deals.json')
    .description('run the local deal API simulator on loopback (prints base URL, auth URL and demo credentials)')
    .option('--port <n>', 'port to listen on (0 = any free port)', nonNegativeInt('--port'), 4010)
    .option('--host <host>', 'address to bind (loopback by default)', '127.0.0.1')
    .option('--data <file>', 'persist deals and quotas to this JSON file (atomic writes)')
    .option('--users <file>', 'JSON file of accepted users (docs/simulator.md); default: the demo users')
    .option('--seed-deals <n>', 'generate N deals for company 1 when it has none', nonNegativeInt('--seed-deals'), 0)
    .option('--latency <ms>', 'added latency per request', nonNegativeInt('--latency'), 0)
    .action(async (opts: { port: number; host: string; data?: string; users?: string; seedDeals: number; latency: number }) => {
      const users: SimulatorUser[] = opts.users ? loadUsersFile(resolve(opts.users)) : [...DEMO_USERS];
      const sim = createDealApiSimulator({
        users,
        dataFile: opts.data ? resolve(opts.data) : undefined,
        latencyMs: opts.latency,
        seed: opts.seedDeals > 0 ? { deals: opts.seedDeals } : undefined,
      });
      let listening: Awaited<ReturnType<typeof sim.listen>>;
      try {
        listening = await sim.listen({ port: opts.port, host: opts.host });
      } catch (err) {
        await sim.close();
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'EADDRINUSE') throw new CliError(`port ${opts.port} on ${opts.host} is already in use: pick another with --port <n> (--port 0 takes any free port)`, EXIT.USAGE);
        if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EACCES') throw new CliError(`cannot listen on ${opts.host}:${opts.port} (${code})`, EXIT.USAGE);
        throw err;
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
      const connection = [`export EIDKIT_BASE_URL=${url}/current/`, `export EIDKIT_AUTH_URL=${url}`, `export EIDKIT_AUDIENCE=${shellQuote(sim.audience)}`];
      if (opts.users) {
        // Credentials from a user-supplied file are secrets: list who may log in, never their passwords.
        lines.push(`  users (from ${opts.users}): ${users.map((u) => `${u.username} [${u.kind}]`).join(', ')}`);
        lines.push('', '# ready to paste, then set EIDKIT_CLIENT_ID, EIDKIT_CLIENT_SECRET, EIDKIT_USERNAME and EIDKIT_PASSWORD:', ...connection);
      } else {
        lines.push('  demo credentials (public, for local testing only):');
        for (const u of users) {
          lines.push(`    ${u.kind.padEnd(7)} username=${u.username} password=${u.password} client_id=${u.clientId} client_secret=${u.clientSecret}`);
        }
        const [first, ...others] = users;
        lines.push('', `# ready to paste: the eidkit CLI as ${first!.username}`, ...connection, ...userExports(first!).map((e) => `export ${e}`));
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
