/** Spawning the real built `eidkit` binary (`npm run build` first; `npm test` builds before the suites run). */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DealApiSimulator } from '../../src/simulator/index.js';

export const root = fileURLToPath(new URL('../..', import.meta.url));
export const bin = join(root, 'dist/node/cli/index.js');
/** A home of its own, so no real config file or token cache is ever read. */
export const home = mkdtempSync(join(tmpdir(), 'eidkit-cli-'));

/** What a run printed and how it ended. */
export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Starts the binary with a clean environment (no credentials unless given). */
export function start(args: string[], env: Record<string, string> = {}): ChildProcessWithoutNullStreams {
  return spawn(process.execPath, [bin, ...args], {
    env: {
      PATH: process.env.PATH!,
      HOME: home,
      XDG_CONFIG_HOME: join(home, 'config'),
      XDG_CACHE_HOME: join(home, 'cache'),
      ...env,
    },
  });
}

/** Runs the binary to the end, feeding `stdin`. */
export function eidkit(args: string[], env: Record<string, string> = {}, stdin?: string): Promise<Run> {
  return new Promise((resolve) => {
    const child = start(args, env);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(stdin ?? '');
  });
}

/** The environment that logs the binary in to a simulator listening at `url` as its first company user. */
export function simulatorEnv(sim: DealApiSimulator, url: string): Record<string, string> {
  const user = sim.users.find((u) => u.kind === 'company')!;
  return {
    EIDKIT_BASE_URL: `${url}/current/`,
    EIDKIT_AUTH_URL: url,
    EIDKIT_AUDIENCE: sim.audience,
    EIDKIT_CLIENT_ID: user.clientId,
    EIDKIT_CLIENT_SECRET: user.clientSecret,
    EIDKIT_USERNAME: user.username,
    EIDKIT_PASSWORD: user.password,
  };
}

/** `arg` quoted for a POSIX shell. */
const shellQuote = (arg: string) => `'${arg.replace(/'/g, `'\\''`)}'`;

/**
 * Runs the binary with stdout and stderr on a terminal: a pseudo-terminal from util-linux's `script`. The terminal
 * writes each line break as CR LF; `stdout` has them back as LF (and holds stderr too).
 */
export function eidkitOnTerminal(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    const command = [process.execPath, bin, ...args].map(shellQuote).join(' ');
    const child = spawn('script', ['-qec', command, '/dev/null'], {
      env: { PATH: process.env.PATH!, HOME: home, XDG_CONFIG_HOME: join(home, 'config'), ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout: stdout.replace(/\r\n/g, '\n'), stderr }));
    child.stdin.end();
  });
}
