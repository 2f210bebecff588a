// A real Redis Cluster for the Redis tests and the cluster bench: primaries and their replicas, each a Debian
// redis-server on its own free loopback port (and cluster bus port) and temp dir, a short node timeout so that a
// killed primary's replica takes over within seconds. Built with CLUSTER ADDSLOTSRANGE / MEET / REPLICATE, as
// `redis-cli --cluster create` does, without its one-second waits.
import { createClient } from 'redis';
import { freePort, startRedis } from './redis-server.mjs';

export const SLOTS = 16_384;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` (async, truthy when done) every 50 ms until it holds; throws `what` after `ms`. */
async function until(check, what, ms = 30_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const ok = await check().catch(() => false);
    if (ok) return ok;
    if (Date.now() > deadline) throw new Error(`redis cluster: ${what} (after ${ms} ms)`);
    await sleep(50);
  }
}

/**
 * Starts `primaries` primaries with `replicas` replicas each (default 3 × 1), the slots split evenly, and resolves
 * once every node sees `cluster_state:ok`, every replica is in sync and every node knows the whole topology.
 * `nodeTimeoutMs` (default 1,000) is `cluster-node-timeout`: how long a primary must be unreachable before its
 * replica is promoted. Resolves with the helper documented on its fields below; `stop()` stops every node.
 */
export async function startRedisCluster({ primaries = 3, replicas = 1, nodeTimeoutMs = 1_000 } = {}) {
  const nodes = [];
  try {
    for (let i = 0; i < primaries * (1 + replicas); i++) {
      const bus = await freePort();
      const server = await startRedis({
        args: [
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          'nodes.conf',
          '--cluster-port',
          String(bus),
          '--cluster-node-timeout',
          String(nodeTimeoutMs),
          // A replica may always take over (its data is as fresh as the test's), and stays with its primary.
          '--cluster-replica-validity-factor',
          '0',
          '--cluster-allow-replica-migration',
          'no',
          '--repl-diskless-sync',
          'yes',
          '--repl-diskless-sync-delay',
          '0',
        ],
      });
      nodes.push({ ...server, bus, address: `127.0.0.1:${server.port}`, alive: true });
    }
  } catch (e) {
    await Promise.all(nodes.map((n) => n.stop()));
    throw e;
  }

  // One admin connection per node, made again when its node was restarted.
  const admins = new Map();
  async function admin(node) {
    let c = admins.get(node);
    if (c?.isReady) return c;
    c?.destroy();
    c = createClient({ url: node.url, socket: { reconnectStrategy: false, connectTimeout: 1_000 } });
    c.on('error', () => {});
    admins.set(node, c);
    await c.connect();
    return c;
  }
  /** Sends one command to one node. */
  const command = async (node, args) => (await admin(node)).sendCommand(args.map(String));

  for (const n of nodes) n.id = String(await command(n, ['CLUSTER', 'MYID']));
  const per = Math.ceil(SLOTS / primaries);
  for (let i = 0; i < primaries; i++) {
    await command(nodes[i], ['CLUSTER', 'ADDSLOTSRANGE', i * per, Math.min(SLOTS, (i + 1) * per) - 1]);
  }
  for (const n of nodes.slice(1)) await command(nodes[0], ['CLUSTER', 'MEET', '127.0.0.1', n.port, n.bus]);
  const known = async (n) =>
    String(await command(n, ['CLUSTER', 'NODES']))
      .trim()
      .split('\n')
      .filter((l) => !/handshake|noaddr/.test(l)).length === nodes.length;
  await until(async () => (await Promise.all(nodes.map(known))).every(Boolean), 'the nodes did not meet');
  for (let r = 0; r < replicas; r++) {
    for (let i = 0; i < primaries; i++) {
      const replica = nodes[primaries * (1 + r) + i];
      await command(replica, ['CLUSTER', 'REPLICATE', nodes[i].id]);
    }
  }
  const cluster = {
    /** Every node started, primaries first: `{ port, url, address, id, alive, … }`. */
    nodes,
    /** Root nodes for node-redis's `createCluster({ rootNodes })`. */
    rootNodes: nodes.map((n) => ({ url: n.url })),
    /** Startup nodes for ioredis's `new Redis.Cluster(…)`. */
    startupNodes: nodes.map((n) => ({ host: '127.0.0.1', port: n.port })),
    command,

    /** The current topology as a live node sees it: `{ primaries: [{ node, slots: [[from, to]…], replicas }] }`. */
    async topology(from) {
      const seen = from ?? nodes.find((n) => n.alive);
      const lines = String(await command(seen, ['CLUSTER', 'NODES']))
        .trim()
        .split('\n');
      const byId = new Map(nodes.map((n) => [n.id, n]));
      const shards = [];
      for (const line of lines) {
        const [id, , flags, master, , , , link, ...slots] = line.split(' ');
        if (!flags.includes('master') || flags.includes('fail') || link !== 'connected') continue;
        const ranges = slots
          .filter((s) => !s.startsWith('['))
          .map((s) => s.split('-').map(Number))
          .map(([a, b]) => [a, b ?? a]);
        const replicaIds = lines
          .map((l) => l.split(' '))
          .filter((f) => f[3] === id && f[2].includes('slave') && !f[2].includes('fail'))
          .map((f) => byId.get(f[0]));
        if (master === '-' && ranges.length > 0)
          shards.push({ node: byId.get(id), slots: ranges, replicas: replicaIds });
      }
      return { primaries: shards };
    },

    /** The primary serving `slot` now. */
    async ownerOf(slot) {
      const { primaries: shards } = await cluster.topology();
      return shards.find((s) => s.slots.some(([a, b]) => slot >= a && slot <= b))?.node;
    },

    /** Resolves once every live node reports `cluster_state:ok` and a primary that answers serves every slot. */
    async ready(ms = 30_000) {
      await until(
        async () => {
          const live = nodes.filter((n) => n.alive);
          for (const n of live) {
            if (!String(await command(n, ['CLUSTER', 'INFO'])).includes('cluster_state:ok')) return false;
          }
          // Every live node agrees on the owner of every slot, and every owner is alive.
          let owners;
          for (const n of live) {
            const { primaries: shards } = await cluster.topology(n);
            const covered = shards.reduce((k, s) => k + s.slots.reduce((m, [a, b]) => m + b - a + 1, 0), 0);
            if (covered !== SLOTS || shards.some((s) => !s.node.alive)) return false;
            const key = shards
              .map((s) => `${s.node.id}:${s.slots.join(',')}`)
              .sort()
              .join(';');
            if (owners !== undefined && owners !== key) return false;
            owners = key;
          }
          // Every live replica is in sync with its primary, and every live node knows it as a replica.
          let replicaCount = 0;
          for (const n of live) {
            const info = String(await command(n, ['INFO', 'replication']));
            if (info.includes('role:slave') && !info.includes('master_link_status:up')) return false;
            if (info.includes('role:slave')) replicaCount++;
          }
          for (const n of live) {
            const { primaries: shards } = await cluster.topology(n);
            if (shards.reduce((k, s) => k + s.replicas.filter((r) => r?.alive).length, 0) !== replicaCount)
              return false;
          }
          return true;
        },
        'the cluster did not become ready',
        ms,
      );
    },

    /** SIGKILLs a node (a crash); its replica is promoted after the node timeout. */
    async kill(node) {
      admins.get(node)?.destroy();
      admins.delete(node);
      node.alive = false;
      await node.kill();
    },

    /** Starts a killed node again on its port and dir: it rejoins (a former primary as a replica). */
    async restart(node) {
      await node.start();
      node.alive = true;
    },

    /**
     * Moves `slots` from the primary `from` to the primary `to` as `redis-cli --cluster reshard` does (IMPORTING,
     * MIGRATING, MIGRATE of the slot's keys `keysPerStep` at a time, then SETSLOT NODE everywhere), waiting
     * `stepMs` between steps so that the slot stays mid-migration while clients run. Resolves with the keys moved.
     */
    async migrate(slots, from, to, { keysPerStep = 10, stepMs = 0 } = {}) {
      let moved = 0;
      for (const slot of slots) {
        await command(to, ['CLUSTER', 'SETSLOT', slot, 'IMPORTING', from.id]);
        await command(from, ['CLUSTER', 'SETSLOT', slot, 'MIGRATING', to.id]);
        for (;;) {
          const keys = await command(from, ['CLUSTER', 'GETKEYSINSLOT', slot, keysPerStep]);
          if (keys.length === 0) break;
          await command(from, ['MIGRATE', '127.0.0.1', to.port, '', 0, 5_000, 'REPLACE', 'KEYS', ...keys]);
          moved += keys.length;
          if (stepMs) await sleep(stepMs);
        }
        if (stepMs) await sleep(stepMs);
        await command(to, ['CLUSTER', 'SETSLOT', slot, 'NODE', to.id]);
        await command(from, ['CLUSTER', 'SETSLOT', slot, 'NODE', to.id]);
        for (const n of nodes) {
          if (n.alive && n !== to && n !== from)
            await command(n, ['CLUSTER', 'SETSLOT', slot, 'NODE', to.id]).catch(() => {});
        }
      }
      return moved;
    },

    /** Runs `fn(node)` on every primary serving slots now, in parallel; resolves with their results. */
    async eachPrimary(fn) {
      const { primaries: shards } = await cluster.topology();
      return Promise.all(shards.map((s) => fn(s.node)));
    },

    /** Commands run by the primaries since their last CONFIG RESETSTAT, by name, summed (INFO commandstats). */
    async commandStats() {
      const out = {};
      for (const stats of await cluster.eachPrimary((n) => command(n, ['INFO', 'commandstats']))) {
        for (const m of String(stats).matchAll(/cmdstat_(\w+):calls=(\d+),[^\n]*?failed_calls=(\d+)/g)) {
          out[m[1]] = (out[m[1]] ?? 0) + Number(m[2]);
          if (Number(m[3])) out[`${m[1]}:failed`] = (out[`${m[1]}:failed`] ?? 0) + Number(m[3]);
        }
      }
      return out;
    },

    /** CPU time (µs, user + system) of every live node, by address. */
    async cpu() {
      const out = {};
      for (const n of nodes.filter((x) => x.alive)) {
        const info = String(await command(n, ['INFO', 'cpu']));
        const sys = Number(/used_cpu_sys:([\d.]+)/.exec(info)[1]);
        const user = Number(/used_cpu_user:([\d.]+)/.exec(info)[1]);
        out[n.address] = Math.round((sys + user) * 1e6);
      }
      return out;
    },

    /** CONFIG RESETSTAT on every live node. */
    async resetStats() {
      await Promise.all(nodes.filter((n) => n.alive).map((n) => command(n, ['CONFIG', 'RESETSTAT'])));
    },

    /** CLIENT PAUSE on every live node: the whole cluster stops answering clients for `ms`. */
    async pause(ms) {
      await Promise.all(nodes.filter((n) => n.alive).map((n) => command(n, ['CLIENT', 'PAUSE', ms, 'ALL'])));
    },

    /** Stops every node and removes their dirs. */
    async stop() {
      for (const c of admins.values()) c.destroy();
      admins.clear();
      await Promise.all(nodes.map((n) => n.stop()));
    },
  };
  try {
    await cluster.ready();
  } catch (e) {
    await cluster.stop();
    throw e;
  }
  return cluster;
}
