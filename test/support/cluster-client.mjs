// A connected cluster client as docs/ad-server.md configures one for the stores, node-redis or ioredis, for the
// cluster tests, their worker processes and the cluster bench. The libraries are passed in (the worker imports them
// from its own resolution).

/**
 * `config`: `{ client: 'node-redis' | 'ioredis', rootNodes, startupNodes }` (startRedisCluster's fields).
 * `libs`: `{ createCluster }` from `redis`, `{ Redis }` from `ioredis`.
 */
export async function clusterClient(config, { createCluster, Redis }) {
  if (config.client === 'ioredis') {
    // Commands fail at once while a node is unreachable (the capper's policy answers), and a slot moving between
    // primaries is tried again within a few ms rather than ioredis's default 100 (the capper's whole timeout).
    const redis = new Redis.Cluster(config.startupNodes, {
      enableOfflineQueue: false,
      retryDelayOnTryAgain: 5,
      retryDelayOnClusterDown: 100,
      redisOptions: { enableOfflineQueue: false },
    });
    redis.on('error', () => {}); // a lost node is expected in the failover tests; the stores count what fails
    await new Promise((resolve, reject) => {
      redis.once('ready', resolve);
      redis.once('end', () => reject(new Error('ioredis cluster ended before it was ready')));
    });
    return redis;
  }
  const redis = createCluster({
    rootNodes: config.rootNodes,
    // A primary that stopped answering has its slots looked up again after 1 s (node-redis waits 5 s by default):
    // its replica is promoted within about the cluster's node timeout.
    topologyRefreshOnReconnectionAttemptStrategy: 1_000,
    // Commands fail at once while a node is unreachable (the capper's policy answers).
    defaults: { disableOfflineQueue: true, socket: { reconnectStrategy: (n) => Math.min(50 * n, 500) } },
  });
  redis.on('error', () => {});
  await redis.connect();
  return redis;
}
