/**
 * Which primary of a Redis Cluster serves a hash slot now, and a connection to it, read from the user's cluster
 * client (node-redis `createCluster()`: `slots[slot].master` and `nodeClient()`; ioredis `Redis.Cluster`: `slots`
 * and `nodes('master')`), so a store can send one call per primary instead of one per slot. The client keeps its
 * map current (it follows MOVED and topology changes); a map that is stale for a moment costs a redirection, never a
 * wrong answer, because a call sent this way declares no key and the server refuses every key it does not hold.
 */
import { asRedisClient, requireUntimedRedisClient } from './redis-client.js';
import type { RedisClientLike } from './redis-client.js';

/** The primary serving a slot: its address (`host:port`) and a client connected to it alone. */
export interface ClusterPrimary {
  readonly address: string;
  client(): RedisClientLike | Promise<RedisClientLike>;
}

/** Reads the slot map of a cluster client: `primaryOf(slot)` is undefined while the client has no map yet. */
export interface ClusterRouter {
  primaryOf(slot: number): ClusterPrimary | undefined;
}

interface NodeRedisClusterLike {
  slots: readonly ({ master?: { address?: string } } | undefined)[];
  nodeClient(node: unknown): unknown;
}
interface IoredisClusterLike {
  slots: readonly (readonly string[] | undefined)[];
  nodes(role: 'master'): { options?: { host?: string; port?: number } }[];
}

/** The router of a node-redis or ioredis cluster client, or undefined for anything else. */
export function clusterRouter(client: unknown): ClusterRouter | undefined {
  const c = client as Partial<NodeRedisClusterLike & IoredisClusterLike> | null | undefined;
  if (!c || typeof c !== 'object') return undefined;
  if (typeof c.nodeClient === 'function' && Array.isArray(c.slots)) return nodeRedisRouter(c as NodeRedisClusterLike);
  if (typeof c.nodes === 'function' && Array.isArray(c.slots)) return ioredisRouter(c as IoredisClusterLike);
  return undefined;
}

function nodeRedisRouter(c: NodeRedisClusterLike): ClusterRouter {
  // One untimed view per node client (node-redis recreates a node's client after it reconnects).
  const untimed = new WeakMap<object, RedisClientLike>();
  const view = (nodeClient: unknown): RedisClientLike => {
    let v = untimed.get(nodeClient as object);
    if (!v) untimed.set(nodeClient as object, (v = requireUntimedRedisClient(nodeClient, 'cluster node')));
    return v;
  };
  const primaries = new WeakMap<object, ClusterPrimary>();
  return {
    primaryOf(slot) {
      const master = c.slots[slot]?.master;
      if (!master?.address) return undefined;
      let p = primaries.get(master);
      if (!p) {
        const address = master.address;
        p = {
          address,
          client: () => {
            const nodeClient = c.nodeClient(master);
            return nodeClient instanceof Promise ? nodeClient.then(view) : view(nodeClient);
          },
        };
        primaries.set(master, p);
      }
      return p;
    },
  };
}

function ioredisRouter(c: IoredisClusterLike): ClusterRouter {
  let byAddress = new Map<string, ClusterPrimary>();
  const wrapped = new WeakMap<object, RedisClientLike>();
  const refresh = () => {
    byAddress = new Map();
    for (const node of c.nodes('master')) {
      const address = `${node.options?.host}:${node.options?.port}`;
      let w = wrapped.get(node);
      if (!w) wrapped.set(node, (w = asRedisClient(node)!));
      const client = w;
      byAddress.set(address, { address, client: () => client });
    }
  };
  return {
    primaryOf(slot) {
      const address = c.slots[slot]?.[0];
      if (!address) return undefined;
      if (!byAddress.has(address)) refresh();
      return byAddress.get(address);
    },
  };
}
