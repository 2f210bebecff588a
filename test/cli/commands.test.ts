// The CLI as a new user meets it: --version, examples in every help, questions, hints and settings to paste.
import { afterAll, describe, expect, test } from 'vitest';
import { spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { bin, eidkit, home, root, start, type Run } from './helpers.js';

afterAll(() => rmSync(home, { recursive: true, force: true }));

/** Runs the binary on a pseudo-terminal (util-linux `script`), typing `typed`: stdout and stderr come back merged. */
function onTerminal(args: string[], typed: string, env: Record<string, string>): Promise<Run> {
  const command = [process.execPath, bin, ...args].map((a) => `'${a}'`).join(' ');
  return new Promise((resolve) => {
    const child = spawn('script', ['-qec', command, '/dev/null'], {
      env: { PATH: process.env.PATH!, HOME: home, ...env },
    });
    let stdout = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.on('close', (code) => resolve({ code, stdout, stderr: '' }));
    child.stdin.end(typed);
  });
}

describe('eidkit for a new user', () => {
  test('--version prints the package version', async () => {
    const r = await eidkit(['--version']);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version);
  });

  test.each([
    'decode',
    'simulate',
    'login',
    'lookups',
    'deals list',
    'deals get',
    'deals create',
    'deals update',
    'deals pause',
    'deals resume',
    'deals delete',
    'deals count',
    'deals domainlist attach',
    'deals domainlist detach',
  ])('the help of %s shows examples of that command', async (command) => {
    const words = command.split(' ');
    const r = await eidkit([...words, '--help']);
    expect(r.code).toBe(0);
    const examples = r.stdout.slice(r.stdout.indexOf('\nExamples:\n'));
    expect(examples).toContain(`$ eidkit ${words.join(' ')}`);
  });

  test('bare eidkit prints the help on stdout and exits 0, as gh does', async () => {
    const r = await eidkit([]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Usage: eidkit \[options\] \[command\]/);
    expect(r.stdout).toContain('deals');
    expect(r.stderr).toBe('');
  });

  test('plan, apply and schema help show examples too', async () => {
    for (const command of ['plan', 'apply', 'schema']) {
      const r = await eidkit(['deals', command, '--help']);
      expect(r.code).toBe(0);
      expect(r.stdout.slice(r.stdout.indexOf('\nExamples:\n'))).toContain(`$ eidkit deals ${command}`);
    }
  });

  test('help shows numeric defaults unquoted and each default once', async () => {
    const list = await eidkit(['deals', 'list', '--help']);
    expect(list.stdout.replace(/\s+/g, ' ')).toContain('per-request timeout in milliseconds (default: 30000)');
    const simulate = await eidkit(['simulate', '--help']);
    const flat = simulate.stdout.replace(/\s+/g, ' ');
    expect(flat).toContain('address to bind (default: "127.0.0.1")');
    expect(flat).not.toMatch(/by default\) \(default/);
    expect(flat).toMatch(/--seed-deals <n> .*\(default: 25\)/);
  });

  test('a listing that matches nothing says "no deals match" on stderr and prints no header row', async () => {
    const r = await eidkit(['deals', 'list', '--simulator', '--since', '2999-01-01T00:00:00Z']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe('no deals match\n');
    const json = await eidkit(['deals', 'list', '--simulator', '--since', '2999-01-01T00:00:00Z', '--json']);
    expect(json.stdout).toBe('[]\n');
  });

  test('lookups dsp suggests dsps: a usage error, exit 2', async () => {
    const r = await eidkit(['lookups', 'dsp', '--simulator']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/did you mean dsps\?/);
    expect(r.stdout).toBe('');
  });

  test('pausing a paused deal says "already paused", not "paused"', async () => {
    const env = { EIDKIT_SIMULATOR_DATA: join(home, 'pause.json') };
    expect((await eidkit(['deals', 'pause', '100001', '--simulator'], env)).stderr).toBe('paused deal 100001\n');
    const again = await eidkit(['deals', 'pause', '100001', '--simulator', '--json'], env);
    expect(again.code).toBe(0);
    expect(again.stderr).toBe('deal 100001 is already paused; nothing changed\n');
    expect(JSON.parse(again.stdout).isActive).toBe(false);
    expect((await eidkit(['deals', 'resume', '100001', '--simulator'], env)).stderr).toBe('resumed deal 100001\n');
    expect((await eidkit(['deals', 'resume', '100001', '--simulator'], env)).stderr).toMatch(/already resumed/);
  });

  test('delete asks on a terminal: "n" keeps the deal (exit 1), "y" deletes it; --yes does not ask', async () => {
    const env = { EIDKIT_SIMULATOR_DATA: join(home, 'delete.json') };
    const kept = await onTerminal(['deals', 'delete', '100002', '--simulator'], 'n\n', env);
    expect(kept.stdout).toMatch(/delete deal 100002 ".+"\? \[y\/N\]/);
    expect(kept.stdout).toMatch(/deal 100002 was not deleted/);
    expect(kept.code).toBe(1);
    expect((await eidkit(['deals', 'get', '100002', '--simulator'], env)).code).toBe(0);
    const deleted = await onTerminal(['deals', 'delete', '100002', '--simulator'], 'y\n', env);
    expect(deleted.stdout).toMatch(/deleted deal 100002/);
    expect(deleted.code).toBe(0);
    expect((await eidkit(['deals', 'get', '100002', '--simulator'], env)).code).toBe(5);
    const yes = await onTerminal(['deals', 'delete', '100003', '--simulator', '--yes'], '', env);
    expect(yes.stdout).not.toMatch(/\[y\/N\]/);
    expect(yes.code).toBe(0);
  });

  test('simulate on a port in use says so and exits 2', async () => {
    const busy = createServer();
    await new Promise<void>((done) => busy.listen(0, '127.0.0.1', done));
    try {
      const port = (busy.address() as { port: number }).port;
      const r = await eidkit(['simulate', '--port', String(port)]);
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(
        `eidkit: port ${port} on 127.0.0.1 is already in use: pick another with --port <n> (--port 0 takes any free port)\n`,
      );
    } finally {
      busy.close();
    }
  });

  test('simulate prints export lines that, pasted, let the CLI log in', async () => {
    const sim = start(['simulate', '--port', '0']);
    try {
      let printed = '';
      await new Promise<void>((done) =>
        sim.stdout.on('data', (d) => (printed += d) && /export EIDKIT_PASSWORD=.*\n/.test(printed) && done()),
      );
      const env = Object.fromEntries(
        [...printed.matchAll(/^export (EIDKIT_\w+)=(.*)$/gm)].map(([, k, v]) => [k, v.replace(/^'(.*)'$/, '$1')]),
      );
      expect(Object.keys(env).sort()).toEqual([
        'EIDKIT_AUDIENCE',
        'EIDKIT_AUTH_URL',
        'EIDKIT_BASE_URL',
        'EIDKIT_CLIENT_ID',
        'EIDKIT_CLIENT_SECRET',
        'EIDKIT_PASSWORD',
        'EIDKIT_USERNAME',
      ]);
      expect(printed).toMatch(
        /^# or as dsp@eidkit\.test \(dsp\): export EIDKIT_CLIENT_ID=\S+ EIDKIT_CLIENT_SECRET=\S+ EIDKIT_USERNAME=\S+ EIDKIT_PASSWORD=\S+$/m,
      );
      const r = await eidkit(['deals', 'count', '--no-cache', '--json'], env);
      expect(r.stderr).toBe('');
      expect(JSON.parse(r.stdout).total).toBe(25);
    } finally {
      sim.kill('SIGTERM');
    }
  });
});
