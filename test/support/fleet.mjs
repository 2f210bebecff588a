// Ad-server processes for the fleet tests and the cluster bench: each a child process running cluster-worker.mjs
// with its own cluster client, driven one JSON command at a time (all processes get the command together).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const worker = fileURLToPath(new URL('./cluster-worker.mjs', import.meta.url));

/** Starts one process per entry of `clients` ('node-redis' | 'ioredis') on `cluster`; resolves once all are ready. */
export async function startFleet(cluster, clients) {
  const procs = clients.map((client) => {
    const config = { client, rootNodes: cluster.rootNodes, startupNodes: cluster.startupNodes };
    const p = spawn(process.execPath, [worker, JSON.stringify(config)], { stdio: ['pipe', 'pipe', 'inherit'] });
    let buf = '';
    const waiters = [];
    p.stdout.on('data', (d) => {
      buf += d;
      let nl;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        waiters.shift()?.resolve(line);
      }
    });
    p.once('exit', (code) => {
      for (const w of waiters.splice(0)) w.reject(new Error(`a fleet process exited (${code})`));
    });
    const next = () => new Promise((resolve, reject) => waiters.push({ resolve, reject }));
    return { p, client, next };
  });
  const ready = await Promise.all(procs.map((w) => w.next()));
  if (!ready.every((l) => l === 'ready')) throw new Error(`a fleet process did not start: ${ready.join(', ')}`);
  return {
    clients,
    /** Sends `job` (or `job(i)` per process) to every process; resolves with their answers, in order. */
    async send(job) {
      const answers = procs.map((w) => w.next());
      procs.forEach((w, i) => w.p.stdin.write(JSON.stringify(typeof job === 'function' ? job(i) : job) + '\n'));
      return (await Promise.all(answers)).map((l) => JSON.parse(l));
    },
    async stop() {
      await Promise.all(
        procs.map(
          (w) =>
            new Promise((resolve) => {
              if (w.p.exitCode !== null) return resolve();
              w.p.once('exit', resolve);
              w.p.stdin.write('{"op":"exit"}\n');
              setTimeout(() => w.p.kill('SIGKILL'), 5_000).unref();
            }),
        ),
      );
    },
  };
}

/** Per user, what the fleet served (the processes' `served` summed). */
export function servedByUser(answers) {
  const out = {};
  for (const a of answers) for (const [u, n] of Object.entries(a.served)) out[u] = (out[u] ?? 0) + n;
  return out;
}
