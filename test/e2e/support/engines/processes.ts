/**
 * Processes the WebKit engine starts (webkit.ts), and what can go wrong with them on a busy machine:
 *
 * - A Playwright worker that is killed (a test or teardown over its timeout) cannot run its teardown: Xvfb,
 *   WebKitWebDriver and the browser it drove would live on and load the machine for every test after. `guarded`
 *   starts each through process-guard.mjs, which ends the whole process group when the worker goes.
 * - WebKitWebDriver chooses the port of the browser's inspector server by binding port 0 and closing it, then starts
 *   the browser on it and connects there, retrying for as long as it takes. If any other socket takes that port in
 *   between (another test server, another worker's browser), the browser cannot listen on it and the driver waits
 *   for ever, or talks to the stranger: the new session never comes. `inspectorPortTaken` tells that case apart
 *   from a browser that is merely slow to start.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const GUARD = fileURLToPath(new URL('./process-guard.mjs', import.meta.url));

/** A command running in a process group of its own, ended with the worker. */
export interface Guarded {
  /** The guard's process (its stdout is the command's). */
  proc: ChildProcess;
  /** True once the command has ended. */
  exited(): boolean;
  /** Ends the command and everything it started; resolves when they are gone. */
  stop(): Promise<void>;
}

/** Starts `command` through process-guard.mjs (stdout piped for the caller, stderr dropped). */
export function guarded(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): Guarded {
  const proc = spawn(process.execPath, [GUARD, command, ...args], { stdio: ['pipe', 'pipe', 'ignore'], env });
  let done = false;
  const ended = new Promise<void>((resolve) =>
    proc.once('exit', () => {
      done = true;
      resolve();
    }),
  );
  return {
    proc,
    exited: () => done,
    async stop() {
      if (!done) proc.stdin?.end();
      await ended;
    },
  };
}

/** The pids of `pid`'s descendants (from /proc: every thread's `children`). */
export function descendants(pid: number): number[] {
  const out: number[] = [];
  const visit = (p: number) => {
    let tasks: string[];
    try {
      tasks = readdirSync(`/proc/${p}/task`);
    } catch {
      return; // gone
    }
    for (const t of tasks) {
      let children: string;
      try {
        children = readFileSync(`/proc/${p}/task/${t}/children`, 'utf8');
      } catch {
        continue;
      }
      for (const c of children.split(' ').filter(Boolean).map(Number)) {
        out.push(c);
        visit(c);
      }
    }
  };
  visit(pid);
  return out;
}

/** The inspector port WebKitWebDriver gave a browser it started (`WEBKIT_INSPECTOR_SERVER=127.0.0.1:<port>`). */
export function inspectorPortOf(pid: number): number | undefined {
  try {
    const env = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
    const v = env.find((e) => e.startsWith('WEBKIT_INSPECTOR_SERVER='));
    const port = v ? Number(v.slice(v.lastIndexOf(':') + 1)) : NaN;
    return Number.isInteger(port) ? port : undefined;
  } catch {
    return undefined;
  }
}

/** The socket inodes a process holds open. */
function socketInodes(pid: number): Set<string> {
  const out = new Set<string>();
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return out;
  }
  for (const fd of fds) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) out.add(m[1]);
    } catch {
      // closed meanwhile
    }
  }
  return out;
}

/** Every TCP socket on this machine's network namespace whose local port is `port`: its state and inode. */
function socketsOnPort(port: number): { listening: boolean; inode: string }[] {
  const out: { listening: boolean; inode: string }[] = [];
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10) continue;
      const local = f[1];
      if (parseInt(local.slice(local.lastIndexOf(':') + 1), 16) !== port) continue;
      // TIME_WAIT and other orphaned sockets have inode 0 and block no listener.
      if (f[9] !== '0') out.push({ listening: f[3] === '0A', inode: f[9] });
    }
  }
  return out;
}

/**
 * Whether the inspector port WebKitWebDriver chose for the browser `browserPid` is held by another socket while the
 * browser has no listener there: the session can then never start. Undefined while that cannot be told (no browser
 * yet, no port in its environment).
 */
export function inspectorPortTaken(browserPid: number): { port: number; taken: boolean } | undefined {
  const port = inspectorPortOf(browserPid);
  if (port === undefined) return undefined;
  const own = socketInodes(browserPid);
  const sockets = socketsOnPort(port);
  const browserListens = sockets.some((s) => s.listening && own.has(s.inode));
  return { port, taken: !browserListens && sockets.some((s) => !own.has(s.inode)) };
}
