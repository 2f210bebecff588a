// A real redis-server for the Redis tests: its own free loopback port and temp dir, no persistence unless asked.
// Debian's redis-server is installed by `npm test` (test/run.mjs) when missing. Shared by the tests and the bench.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from 'redis';

export const REDIS_SERVER = process.env.REDIS_SERVER_PATH || '/usr/bin/redis-server';

/** A free loopback port, from the OS. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/**
 * Starts `redis-server --port <free> --bind 127.0.0.1 --save '' --appendonly no --dir <tmp>`. `persist: true`
 * uses `--appendonly yes --appendfsync always` instead, so what it acknowledged survives a kill; `cluster: true`
 * makes it a one-node Redis Cluster owning every slot; `args` are more arguments (test/support/redis-cluster.mjs
 * starts cluster nodes owning no slot with them). Resolves with `{ port, url, dir, start(), kill(), stop() }`:
 * `kill()` is SIGKILL (a crash), `start()` starts it again on the same port and dir, `stop()` kills it and
 * removes its dir.
 */
export async function startRedis(options = {}) {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'eidkit-redis-'));
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--dir',
    dir,
    '--daemonize',
    'no',
    '--loglevel',
    'warning',
  ];
  args.push(...(options.persist ? ['--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no']));
  // A one-node Redis Cluster owning every slot: enough to prove the keys of one decision share a slot.
  if (options.cluster) args.push('--cluster-enabled', 'yes', '--cluster-config-file', join(dir, 'nodes.conf'));
  args.push(...(options.args ?? []));
  let proc;
  const url = `redis://127.0.0.1:${port}`;

  async function start() {
    proc = spawn(REDIS_SERVER, args, { stdio: ['ignore', 'ignore', 'inherit'] });
    let spawnError;
    proc.once('error', (e) => (spawnError = e)); // ENOENT: `npm test` installs Debian's redis-server first
    const deadline = Date.now() + 15_000;
    for (;;) {
      if (spawnError)
        throw new Error(`cannot start ${REDIS_SERVER}: ${spawnError.message} (npm test installs it with apt-get)`);
      const c = createClient({ url, socket: { reconnectStrategy: false, connectTimeout: 500 } });
      c.on('error', () => {});
      try {
        await c.connect();
        await c.ping();
        await c.close();
        return;
      } catch (e) {
        c.destroy?.();
        if (Date.now() > deadline)
          throw new Error(`redis-server did not start on port ${port}: ${String(e)}`, { cause: e });
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  }

  async function kill() {
    const p = proc;
    proc = undefined;
    if (!p || p.exitCode !== null) return;
    await new Promise((resolve) => {
      p.once('exit', () => resolve());
      p.kill('SIGKILL');
    });
  }

  await start();
  if (options.cluster) {
    const c = createClient({ url });
    c.on('error', () => {});
    await c.connect();
    await c.sendCommand(['CLUSTER', 'ADDSLOTSRANGE', '0', '16383']);
    for (let i = 0; !String(await c.sendCommand(['CLUSTER', 'INFO'])).includes('cluster_state:ok'); i++) {
      if (i > 200) throw new Error('the one-node cluster did not become ready');
      await new Promise((r) => setTimeout(r, 50));
    }
    await c.close();
  }
  return {
    port,
    url,
    dir,
    start,
    kill,
    /** The running redis-server's process id (undefined while it is down). */
    pid: () => proc?.pid,
    async stop() {
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A connected client that does not crash the test on connection errors and reconnects quickly. */
export async function connectRedis(url, options = {}) {
  const client = createClient({
    url,
    disableOfflineQueue: options.disableOfflineQueue ?? false,
    socket: { reconnectStrategy: (n) => Math.min(50 * n, 200) },
  });
  client.on('error', () => {}); // connection errors while the server is down are expected; the stores count them
  await client.connect();
  return client;
}

/** Resolves once `client` answers PING again (it reconnects on its own after a restart); throws after ~10 s. */
export async function untilReconnected(client) {
  for (let i = 0; ; i++) {
    const ok = await client.ping().then(
      () => true,
      () => false,
    );
    if (ok) return;
    if (i > 200) throw new Error('the client did not reconnect');
    await new Promise((r) => setTimeout(r, 50));
  }
}
