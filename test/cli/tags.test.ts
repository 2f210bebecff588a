import { beforeAll, describe, expect, test } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createServer, type AddressInfo } from 'node:net';

// Spawns the real built binary (`npm run build` first; `npm test` builds before the suites run).
const bin = fileURLToPath(new URL('../../dist/node/cli/index.js', import.meta.url));
const run = (args: string[]) => spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8' });

function networksFile(config: unknown): string {
  const file = join(mkdtempSync(join(tmpdir(), 'eidkit-tags-')), 'networks.json');
  writeFileSync(file, JSON.stringify(config));
  return file;
}

describe('eidkit tags', () => {
  beforeAll(() => {
    if (!existsSync(bin)) throw new Error('build first: npm run build');
  });

  test('build writes the files and the manifest, with progress on stderr and a summary on stdout', () => {
    const networks: Record<string, { modules: string[] }> = {};
    for (let i = 1; i <= 60; i++) networks[String(i)] = { modules: i % 2 ? ['prebid'] : [] };
    const out = mkdtempSync(join(tmpdir(), 'eidkit-cdn-'));
    const r = run(['tags', 'build', '--networks', networksFile({ networks }), '--out', out]);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(
      /^built 61 networks \(60 configured \+ default\) in [\d.]+ s: 733 files written, 0 unchanged; manifest /,
    );
    expect(r.stderr).toContain('networks 61/61');
    expect(JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8')).files).toHaveLength(122);
    expect(run(['tags', 'build', '--networks', networksFile({ networks }), '--out', out]).stdout).toContain(
      '0 files written, 733 unchanged',
    );
  });

  test('build refuses a bad configuration with exit code 3, naming network and field', () => {
    const r = run([
      'tags',
      'build',
      '--networks',
      networksFile({ networks: { '42': { modules: ['nope'] } } }),
      '--out',
      mkdtempSync(join(tmpdir(), 'x-')),
    ]);
    expect(r.status).toBe(3);
    expect(r.stderr).toContain('network 42: networks.42.modules[0]: unknown module "nope"');
    expect(r.stdout).toBe('');
  });

  test('serve refuses a bad or missing configuration with exit code 3 and serves nothing', () => {
    const bad = run([
      'tags',
      'serve',
      '--networks',
      networksFile({ networks: { '42': { modules: ['nope'] } } }),
      '--port',
      '0',
    ]);
    expect(bad.status).toBe(3);
    expect(bad.stderr).toMatch(/^eidkit: .*network 42: networks\.42\.modules\[0\]: unknown module "nope"/);
    expect(bad.stdout).toBe('');
    const missing = run(['tags', 'serve', '--networks', join(tmpdir(), 'no-such-networks.json'), '--port', '0']);
    expect(missing.status).toBe(3);
    expect(missing.stderr).toMatch(/^eidkit: .*no-such-networks\.json: \(file\): cannot read/);
  });

  test('serve on a port in use says so and exits 2, as simulate does', async () => {
    const busy = createServer();
    await new Promise<void>((done) => busy.listen(0, '127.0.0.1', done));
    try {
      const port = (busy.address() as AddressInfo).port;
      const file = networksFile({ networks: { '1234': { modules: [] } } });
      const r = await new Promise<{ status: number | null; stdout: string; stderr: string }>((done) => {
        const child = spawn(process.execPath, [bin, 'tags', 'serve', '--networks', file, '--port', String(port)]);
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (d) => (stdout += d));
        child.stderr.on('data', (d) => (stderr += d));
        child.on('close', (status) => done({ status, stdout, stderr }));
      });
      expect(r).toEqual({
        status: 2,
        stdout: '',
        stderr: `eidkit: port ${port} on 127.0.0.1 is already in use: pick another with --port <n> (--port 0 takes any free port)\n`,
      });
    } finally {
      busy.close();
    }
  });

  test('serve answers on the printed address until stopped', async () => {
    const child = spawn(process.execPath, [
      bin,
      'tags',
      'serve',
      '--networks',
      networksFile({ networks: { '7': { modules: ['uid2'] } } }),
      '--port',
      '0',
    ]);
    try {
      const url = await new Promise<string>((resolve, reject) => {
        child.stdout.on('data', (d: Buffer) => {
          const m = /serving (http:\/\/\S+?)\/tag\//.exec(String(d));
          if (m) resolve(m[1]);
        });
        child.once('exit', (code) => reject(new Error(`exited ${code}`)));
      });
      const r = await fetch(url + '/tag/7/sas.js');
      expect(r.status).toBe(200);
      expect(await r.text()).toMatch(/^window\.__sasop=\{"modules":\["uid2"\]\};/);
    } finally {
      child.kill('SIGTERM');
    }
  });

  test('a SIGHUP sent as soon as serve prints its pid reloads, never ends the server', async () => {
    const file = networksFile({ networks: { '7': { modules: ['uid2'] } } });
    const runs = Array.from({ length: 5 }, async () => {
      const child = spawn(process.execPath, [bin, 'tags', 'serve', '--networks', file, '--port', '0']);
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += String(d)));
      try {
        const pid = await new Promise<number>((resolve, reject) => {
          child.stdout.on('data', (d: Buffer) => {
            const m = /\(pid (\d+): kill -HUP/.exec(String(d));
            if (m) resolve(Number(m[1]));
          });
          child.once('exit', (code, signal) => reject(new Error(`exited ${code ?? signal}`)));
        });
        expect(pid).toBe(child.pid);
        process.kill(pid, 'SIGHUP');
        for (let i = 0; !stderr.includes('reloaded') && i < 500; i++) await new Promise((r) => setTimeout(r, 10));
        expect(stderr).toContain('eidkit tags: reloaded');
        expect([child.exitCode, child.signalCode]).toEqual([null, null]);
      } finally {
        child.kill('SIGTERM');
      }
    });
    await Promise.all(runs);
  }, 30_000);

  test('serve re-reads the networks file on SIGHUP, and keeps serving the previous one when the new file is bad', async () => {
    const file = networksFile({ networks: { '7': { modules: ['uid2'] } } });
    const child = spawn(process.execPath, [bin, 'tags', 'serve', '--networks', file, '--port', '0']);
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += String(d)));
    const stderrShows = (text: string) =>
      new Promise<void>((resolve, reject) => {
        const t = setInterval(() => {
          if (!stderr.includes(text)) return;
          clearInterval(t);
          resolve();
        }, 20);
        setTimeout(() => {
          clearInterval(t);
          reject(new Error(`stderr never said "${text}": ${stderr}`));
        }, 10_000);
      });
    const script = async (network: string) => (await (await fetch(`${url}/tag/${network}/sas.js`)).text()).slice(0, 60);
    let url = '';
    try {
      url = await new Promise<string>((resolve, reject) => {
        child.stdout.on('data', (d: Buffer) => {
          const m = /serving (http:\/\/\S+?)\/tag\//.exec(String(d));
          if (m) resolve(m[1]);
        });
        child.once('exit', (code) => reject(new Error(`exited ${code}`)));
      });
      expect(await script('8')).not.toContain('__sasop'); // not configured: the core
      writeFileSync(file, JSON.stringify({ networks: { '7': { modules: [] }, '8': { modules: ['criteo'] } } }));
      child.kill('SIGHUP');
      await stderrShows('reloaded');
      expect(stderr).toContain(`eidkit tags: reloaded ${file} (2 networks)`);
      expect(await script('8')).toMatch(/^window\.__sasop=\{"modules":\["criteo"\]\};/);
      expect(await script('7')).not.toContain('__sasop');
      writeFileSync(file, JSON.stringify({ networks: { '8': { modules: ['nope'] } } }));
      child.kill('SIGHUP');
      await stderrShows('not reloaded');
      expect(stderr).toContain('unknown module "nope"');
      expect(await script('8')).toMatch(/"criteo"/);
      expect(child.exitCode).toBeNull();
    } finally {
      child.kill('SIGTERM');
    }
  });
});
