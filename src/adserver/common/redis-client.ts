/**
 * The few Redis commands the shared stores use, typed structurally so that a node-redis client
 * (`createClient()`) or cluster (`createCluster()`), or an ioredis client or cluster, fits without eidkit
 * importing either library.
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

/** An ioredis client or cluster (`new Redis()`, `new Redis.Cluster()`); only these commands are used. */
export interface IoredisLike {
  evalsha(sha1: string, numKeys: number, ...keysAndArgs: string[]): Promise<unknown>;
  eval(script: string, numKeys: number, ...keysAndArgs: string[]): Promise<unknown>;
  hincrby(key: string, field: string, increment: number): Promise<unknown>;
  hgetall(key: string): Promise<Record<string, string>>;
  pexpireat(key: string, msTimestamp: number): Promise<unknown>;
  zadd(key: string, score: number, member: string): Promise<unknown>;
  zrangebyscore(key: string, min: number | string, max: number | string): Promise<string[]>;
  zremrangebyscore(key: string, min: number | string, max: number | string): Promise<unknown>;
}

/** A client the Redis stores accept: node-redis or ioredis. */
export type RedisClientInput = RedisClientLike | IoredisLike;

/**
 * The client in node-redis shape: a node-redis client as it is, an ioredis one wrapped (each command maps
 * one to one). Undefined for anything else.
 */
export function asRedisClient(client: unknown): RedisClientLike | undefined {
  const c = client as Partial<RedisClientLike & IoredisLike> | null | undefined;
  if (!c || typeof c !== 'object') return undefined;
  if (typeof c.evalSha === 'function' && typeof c.hIncrBy === 'function') return c as RedisClientLike;
  if (typeof c.evalsha !== 'function' || typeof c.hincrby !== 'function') return undefined;
  const io = c as IoredisLike;
  return {
    evalSha: (sha1, o) => io.evalsha(sha1, o.keys.length, ...o.keys, ...o.arguments),
    eval: (script, o) => io.eval(script, o.keys.length, ...o.keys, ...o.arguments),
    hIncrBy: (key, field, n) => io.hincrby(key, field, n),
    hGetAll: (key) => io.hgetall(key),
    pExpireAt: (key, at) => io.pexpireat(key, at),
    zAdd: (key, m) => io.zadd(key, m.score, m.value),
    zRangeByScore: (key, min, max) => io.zrangebyscore(key, min, max),
    zRemRangeByScore: (key, min, max) => io.zremrangebyscore(key, min, max),
  };
}

/** {@link asRedisClient}, or a TypeError naming the function `who` that was given something else. */
export function requireRedisClient(client: unknown, who: string): RedisClientLike {
  const c = asRedisClient(client);
  if (!c) throw new TypeError(`${who}: client must be a node-redis or ioredis client or cluster`);
  return c;
}

/**
 * {@link requireRedisClient} for calls whose caller bounds their time itself: a node-redis client (v5+) without its
 * per-command timeout, which costs each command an `AbortSignal.timeout` (about 20 µs of CPU, measured beside a
 * client without it); any other client as it is.
 */
export function requireUntimedRedisClient(client: unknown, who: string): RedisClientLike {
  const c = client as { withCommandOptions?: (options: { timeout: number }) => unknown } | null | undefined;
  const untimed = typeof c?.withCommandOptions === 'function' ? c.withCommandOptions({ timeout: 0 }) : client;
  return requireRedisClient(untimed, who);
}

/**
 * A Lua script run by EVALSHA, loaded with EVAL on the first NOSCRIPT (a new or restarted server, a replica just
 * promoted). NOSCRIPT may come wrapped: ioredis's cluster reports "Too many Cluster redirections. Last error:
 * ReplyError: NOSCRIPT …" when it followed redirections before.
 */
export function luaScript(
  source: string,
): (client: RedisClientLike, keys: string[], args: string[]) => Promise<unknown> {
  const sha1 = createHash('sha1').update(source).digest('hex');
  return async (client, keys, args) => {
    try {
      return await client.evalSha(sha1, { keys, arguments: args });
    } catch (e) {
      if (!/(^|\s|ReplyError: )NOSCRIPT\b/.test(String((e as Error)?.message))) throw e;
      return client.eval(source, { keys, arguments: args });
    }
  };
}

/** Checks a key prefix: no `{` or `}`, which would change the Redis Cluster hash tag. */
export function checkPrefix(prefix: unknown, setting = 'prefix'): string {
  if (typeof prefix !== 'string' || /[{}]/.test(prefix))
    throw new TypeError(`${setting} must be a string without { or } (got ${JSON.stringify(prefix)})`);
  return prefix;
}

/** Whether `client` is a Redis Cluster client: node-redis's `createCluster()` or ioredis's `new Redis.Cluster()`. */
export function isRedisCluster(client: unknown): boolean {
  const c = client as { getSlotMaster?: unknown; isCluster?: unknown } | null | undefined;
  return !!c && (typeof c.getSlotMaster === 'function' || c.isCluster === true);
}

// CRC16-CCITT (XMODEM), the hash of Redis Cluster key slots, one table lookup per byte.
const CRC16 = new Uint16Array(256).map((_, byte) => {
  let crc = byte << 8;
  for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1;
  return crc & 0xffff;
});

const crcOf = (bytes: Uint8Array, crc: number) => {
  for (const byte of bytes) crc = ((crc << 8) & 0xffff) ^ CRC16[(crc >> 8) ^ byte];
  return crc;
};

/**
 * The Redis Cluster hash slot of `key` (0–16383), as `CLUSTER KEYSLOT` computes it: CRC16 of the key's UTF-8 bytes,
 * or of the part inside its first non-empty `{…}` hash tag, modulo 16384.
 */
export function clusterKeySlot(key: string): number {
  const open = key.indexOf('{');
  const close = open < 0 ? -1 : key.indexOf('}', open + 1);
  return hashSlotOf(close > open + 1 ? key.slice(open + 1, close) : key);
}

/** The hash slot of a key whose hash tag holds `hashed` (non-empty): CRC16 of its UTF-8 bytes, modulo 16384. */
export function hashSlotOf(hashed: string): number {
  let crc = 0;
  for (let i = 0; i < hashed.length; i++) {
    const code = hashed.charCodeAt(i);
    // Past ASCII, the UTF-8 bytes (the common key is ASCII: read in place, without encoding it).
    if (code > 0x7f) return crcOf(Buffer.from(hashed.slice(i), 'utf8'), crc) & 0x3fff;
    crc = ((crc << 8) & 0xffff) ^ CRC16[(crc >> 8) ^ code];
  }
  return crc & 0x3fff;
}
