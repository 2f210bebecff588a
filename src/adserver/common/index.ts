/**
 * What the rooms of eidkit/adserver share: the checks of options objects, copies of strings taken from a request,
 * and the Redis client of the stores.
 */
export { OptionsError, given, positiveOption } from './options.js';
export { ownString } from './own-string.js';
export type { IoredisLike, RedisClientInput, RedisClientLike } from './redis-client.js';
export {
  checkPrefix,
  clusterKeySlot,
  hashSlotOf,
  isRedisCluster,
  luaScript,
  requireRedisClient,
  requireUntimedRedisClient,
} from './redis-client.js';
export type { ClusterPrimary, ClusterRouter } from './redis-cluster.js';
export { clusterRouter } from './redis-cluster.js';
