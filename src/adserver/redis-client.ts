/**
 * The few Redis commands the shared stores use, typed structurally so that a node-redis client
 * (`createClient()`) or cluster (`createCluster()`) fits without eidkit importing `redis` itself.
 */
import { createHash } from 'node:crypto';

/** A node-redis client or cluster (npm `redis` v4–v6); only these commands are used. */
export interface RedisClientLike {
  evalSha(sha1: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  hIncrBy(key: string, field: string, increment: number): Promise<unknown>;
  hGetAll(key: string): Promise<Record<string, string>>;
  pExpireAt(key: string, msTimestamp: number): Promise<unknown>;
  zAdd(key: string, members: { score: number; value: string }): Promise<unknown>;
  zRangeByScore(key: string, min: number | string, max: number | string): Promise<string[]>;
  zRemRangeByScore(key: string, min: number | string, max: number | string): Promise<unknown>;
}

/** A Lua script run by EVALSHA, loaded with EVAL on the first NOSCRIPT (a new or restarted server). */
export function luaScript(source: string): (client: RedisClientLike, keys: string[], args: string[]) => Promise<unknown> {
  const sha1 = createHash('sha1').update(source).digest('hex');
  return async (client, keys, args) => {
    try {
      return await client.evalSha(sha1, { keys, arguments: args });
    } catch (e) {
      if (!String((e as Error)?.message).startsWith('NOSCRIPT')) throw e;
      return client.eval(source, { keys, arguments: args });
    }
  };
}

/** Checks a key prefix: no `{` or `}`, which would change the Redis Cluster hash tag. */
export function checkPrefix(prefix: unknown, setting = 'prefix'): string {
  if (typeof prefix !== 'string' || /[{}]/.test(prefix)) throw new TypeError(`${setting} must be a string without { or } (got ${JSON.stringify(prefix)})`);
  return prefix;
}
