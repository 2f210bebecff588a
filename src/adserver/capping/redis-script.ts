/**
 * The Lua script of the Redis cap store, in its two forms (a lone Redis or one slot; one primary of a cluster), and
 * the store's counters.
 */
import { luaScript } from '../common/index.js';

// Several decisions in one call, each decided and counted in turn, exactly as if it had run alone.
// ARGV: maxEvents, member base, then every decision in one JSON array of numbers (one argument: each argument costs
// the client a write; Redis's cjson decodes it in C, several times cheaper than splitting words in Lua): per decision
// mode (0 check, 1 take, 2 record), now, key count, then per key: keepMs, window count, (since, max) per window
// (since "-inf" for lifetime).
// KEYS: the decisions' keys in order. Returns per decision: allowed (1/0), then the count of each window of each key.
// A check only counts (ZCOUNT from each window's start ignores older impressions); recording trims what is older than
// the longest window, adds, bounds the set to maxEvents and extends the key's expiry.
//
// The cluster variant is sent to one primary with no key declared and the keys after the JSON (ARGV[4…]), so that
// one call carries the decisions of every slot that primary serves (Redis 7's allow-cross-slot-keys). Each key is
// first read through pcall: a key the node does not hold now (a slot moving, or the client's map stale) fails its
// decision alone, without a write, answered -1 for the store to send it again to the slot's owner with its keys
// declared (where Redis's own MOVED / ASK / TRYAGAIN rules keep a moving slot exact).
const takeScript = (cluster: boolean) => `${cluster ? '#!lua flags=allow-cross-slot-keys\n' : ''}
local maxEvents, base = tonumber(ARGV[1]), ARGV[2]
local f = cjson.decode(ARGV[3])
local K, o = ${cluster ? 'ARGV, 3' : 'KEYS, 0'}
local out, k, d, a = {}, 0, 0, 1
while a <= #f do
  d = d + 1
  local mode, now, n = f[a], f[a + 1], f[a + 2]
  a = a + 3
  local at, keep = #out + 1, {}
  out[at] = 1
  for c = 1, n do
    local key = K[o + k + c]
    keep[c] = f[a]
    local windows = f[a + 1]
    a = a + 2${
      cluster
        ? `
    if windows == 0 and type(redis.pcall('EXISTS', key)) == 'table' then out[at] = -1 end`
        : ''
    }
    for w = 1, windows do
      local count = ${cluster ? `redis.pcall('ZCOUNT', key, f[a], '+inf')` : `redis.call('ZCOUNT', key, f[a], '+inf')`}${
        cluster
          ? `
      if type(count) == 'table' then
        out[at], count = -1, 0
      elseif count >= f[a + 1] and out[at] == 1 then out[at] = 0 end`
          : `
      if count >= f[a + 1] then out[at] = 0 end`
      }
      out[#out + 1] = count
      a = a + 2
    end
  end
  if out[at] ~= -1 and (mode == 2 or (mode == 1 and out[at] == 1)) then
    local member = base .. ':' .. d
    for c = 1, n do
      local key = K[o + k + c]
      redis.call('ZREMRANGEBYSCORE', key, '-inf', '(' .. (now - keep[c]))
      redis.call('ZADD', key, now, member)
      local extra = redis.call('ZCARD', key) - maxEvents
      if extra > 0 then redis.call('ZREMRANGEBYRANK', key, 0, extra - 1) end
      if redis.call('PTTL', key) < keep[c] then redis.call('PEXPIRE', key, keep[c]) end
    end
  end
  k = k + n
end
return out
`;
export const TAKE = luaScript(takeScript(false));
export const TAKE_ANY_SLOT = luaScript(takeScript(true));

/** Counters of `createRedisFrequencyCapStore` since it was created (its `metrics()`). */
export interface RedisFrequencyCapStoreMetrics {
  /** Decisions handed to the store. */
  decisions: number;
  /** Script calls sent (each carries one or more decisions). */
  calls: number;
  /** Of which failed: an error, or no answer within `commandTimeoutMs`. */
  failedCalls: number;
  /**
   * Decisions sent a second time, to their slot's owner with their keys declared: their primary did not hold their
   * keys (a slot moving, or the client's map of the cluster stale for a moment).
   */
  rerouted: number;
  /** Calls sent again after Redis answered TRYAGAIN, ASK or MOVED (a slot moving between primaries). */
  retries: number;
}
