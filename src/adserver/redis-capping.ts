/**
 * A frequency-cap store shared by a fleet through Redis (issue #10). One sorted set per user × item holds the
 * times of the impressions kept; one Lua script counts every window and records, atomically, in one round trip,
 * so servers racing for a user's last impression serve it exactly once.
 *
 * Keys: `<prefix>{<user>}<item>`, for example `eidkit:fc:{pid:3f2a…}deal:42`. The user sits in the hash tag, so
 * all the keys of one decision (one user, one or several items) share a Redis Cluster hash slot.
 */
import { randomBytes } from 'node:crypto';
import type { CapCheck, CapOutcome, FrequencyCapStore } from './capping.js';
import { checkPrefix, luaScript, requireRedisClient } from './redis-client.js';
import type { RedisClientInput } from './redis-client.js';

/** Options of {@link createRedisFrequencyCapStore}. */
export interface RedisFrequencyCapStoreOptions {
  /** Key prefix (default `eidkit:fc:`); no `{` or `}`. */
  prefix?: string;
  /** Most impressions kept per user × item (oldest trimmed first); caps above it cannot be enforced. Default 1,000. */
  maxEventsPerKey?: number;
}

// ARGV: mode, now, member, maxEvents, then per key: keepMs, window count, then (since, max) per window.
// Returns { allowed (1/0), count of each window in order }.
const TAKE = luaScript(`
local mode, now, member, maxEvents = ARGV[1], tonumber(ARGV[2]), ARGV[3], tonumber(ARGV[4])
local out, keep, a = {1}, {}, 5
for k = 1, #KEYS do
  keep[k] = tonumber(ARGV[a])
  local n = tonumber(ARGV[a + 1])
  a = a + 2
  redis.call('ZREMRANGEBYSCORE', KEYS[k], '-inf', '(' .. (now - keep[k]))
  for w = 1, n do
    local c = redis.call('ZCOUNT', KEYS[k], ARGV[a], '+inf')
    if c >= tonumber(ARGV[a + 1]) then out[1] = 0 end
    out[#out + 1] = c
    a = a + 2
  end
end
if mode == 'record' or (mode == 'take' and out[1] == 1) then
  for k = 1, #KEYS do
    redis.call('ZADD', KEYS[k], now, member)
    local extra = redis.call('ZCARD', KEYS[k]) - maxEvents
    if extra > 0 then redis.call('ZREMRANGEBYRANK', KEYS[k], 0, extra - 1) end
    if redis.call('PTTL', KEYS[k]) < keep[k] then redis.call('PEXPIRE', KEYS[k], keep[k]) end
  end
end
return out
`);

// `{` and `}` inside a user or item would move the hash tag or make two keys collide: escape them (and `%`).
const escapeKeyPart = (s: string) => (/[{}%]/.test(s) ? s.replace(/[{}%]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`) : s);

/**
 * Creates a frequency-cap store over Redis, for `createFrequencyCapper({ store })`. Every decision (`check`,
 * `take`, `record`) is one EVALSHA. Keys expire with the cap's longest window; per user × item Redis holds at most
 * the impressions of that window (≤ the window's max when served through `take`), never more than `maxEventsPerKey`.
 * @example
 * const redis = await createClient({ url: process.env.REDIS_URL, disableOfflineQueue: true }).on('error', log).connect();
 * const capper = createFrequencyCapper({ store: createRedisFrequencyCapStore(redis), timeoutMs: 5 });
 */
export function createRedisFrequencyCapStore(redis: RedisClientInput, options: RedisFrequencyCapStoreOptions = {}): FrequencyCapStore & {
  /** The Redis key of one user × item. */
  keyOf(user: string, item: string): string;
} {
  const client = requireRedisClient(redis, 'createRedisFrequencyCapStore');
  const prefix = checkPrefix(options.prefix ?? 'eidkit:fc:');
  const maxEvents = options.maxEventsPerKey ?? 1_000;
  if (!Number.isInteger(maxEvents) || maxEvents < 1) throw new TypeError(`maxEventsPerKey must be an integer >= 1 (got ${String(maxEvents)})`);
  // Impressions at the same millisecond must stay distinct members: a per-process random part and a sequence.
  const origin = randomBytes(6).toString('base64url');
  let seq = 0;
  const keyOf = (user: string, item: string) => `${prefix}{${escapeKeyPart(user)}}${escapeKeyPart(item)}`;
  const splitKey = (key: string) => {
    // The capper calls `apply` with user and item apart; a direct count/record caller's key splits at its last '|'.
    const bar = key.lastIndexOf('|');
    return bar < 0 ? { user: key, item: '' } : { user: key.slice(0, bar), item: key.slice(bar + 1) };
  };

  async function apply(mode: 'check' | 'take' | 'record', checks: readonly CapCheck[], at: number): Promise<CapOutcome> {
    if (checks.length === 0) return { allowed: true, counts: [] };
    const args = [mode, String(at), `${at}:${origin}:${(seq = (seq + 1) % 1e9)}`, String(maxEvents)];
    for (const c of checks) {
      args.push(String(c.keepMs), String(c.windows.length));
      for (const w of c.windows) args.push(w.since === -Infinity ? '-inf' : String(w.since), String(w.max));
    }
    const reply = (await TAKE(client, checks.map((c) => keyOf(c.user, c.item)), args)) as number[];
    let i = 1;
    return { allowed: Number(reply[0]) === 1, counts: checks.map((c) => c.windows.map(() => Number(reply[i++]))) };
  }

  return {
    keyOf,
    apply,
    async count(key, since) {
      const { user, item } = splitKey(key);
      const { counts } = await apply('check', [{ key, user, item, keepMs: Number.MAX_SAFE_INTEGER, windows: [{ since, max: 1 }] }], Date.now());
      return counts[0][0];
    },
    async record(key, at, ttlMs) {
      const { user, item } = splitKey(key);
      await apply('record', [{ key, user, item, keepMs: ttlMs, windows: [] }], at);
    },
  };
}
