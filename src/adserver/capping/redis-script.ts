/**
 * The Lua script of the Redis cap store, in its two forms (a lone Redis or one slot; one primary of a cluster), and
 * the store's counters.
 */
import { luaScript } from '../common/index.js';

// Several decisions in one call, each decided and counted in turn, exactly as if it had run alone.
// ARGV: maxEvents, member base, then every entry in one JSON array of numbers (one argument: each argument costs
// the client a write; Redis's cjson decodes it in C, several times cheaper than splitting words in Lua). An entry is
// one decision, or several identical ones (same mode, time, keys and windows: the ad slots of one page, taking the
// same cap at once): mode (0 check, 1 take, 2 record), now, how many, key count, then per key: keepMs, window
// count, (since, max) per window (since "-inf" for lifetime).
// KEYS: the entries' keys in order. Returns per entry how many of its takes fit (a check or a record: 1 when every
// window is under its max, else 0), then the count of each window of each key before the entry. Of r identical takes
// the first ones fit, as many as every window has room for: counted one after the other, each would find the
// impressions of those before it, so the store answers them as if each had run alone.
// A check only counts (ZCOUNT from each window's start ignores older impressions); recording trims what is older than
// the longest window, adds, bounds the set to maxEvents and extends the key's expiry.
//
// The cluster variant is sent to one primary with no key declared and the keys after the JSON (ARGV[4…]), so that
// one call carries the decisions of every slot that primary serves (Redis 7's allow-cross-slot-keys). Each key is
// first read through pcall: a key the node does not hold now (a slot moving, or the client's map stale) fails its
// entry alone, without a write, answered -1 for the store to send it again to the slot's owner with its keys
// declared (where Redis's own MOVED / ASK / TRYAGAIN rules keep a moving slot exact).
const takeScript = (cluster: boolean) => `${cluster ? '#!lua flags=allow-cross-slot-keys\n' : ''}
local maxEvents, base = tonumber(ARGV[1]), ARGV[2]
local f = cjson.decode(ARGV[3])
local K, o = ${cluster ? 'ARGV, 3' : 'KEYS, 0'}
local out, k, d, a = {}, 0, 0, 1
while a <= #f do
  d = d + 1
  local mode, now, r, n = f[a], f[a + 1], f[a + 2], f[a + 3]
  a = a + 4
  local at, keep, fit = #out + 1, {}, r
  out[at] = 0
  for c = 1, n do
    local key = K[o + k + c]
    keep[c] = f[a]
    local windows = f[a + 1]
    a = a + 2${
      cluster
        ? `
    if windows == 0 and type(redis.pcall('EXISTS', key)) == 'table' then fit = -1 end`
        : ''
    }
    for w = 1, windows do
      local count = ${cluster ? `redis.pcall('ZCOUNT', key, f[a], '+inf')` : `redis.call('ZCOUNT', key, f[a], '+inf')`}${
        cluster
          ? `
      if type(count) == 'table' then fit, count = -1, 0 end`
          : ''
      }
      if fit >= 0 and f[a + 1] - count < fit then fit = math.max(f[a + 1] - count, 0) end
      out[#out + 1] = count
      a = a + 2
    end
  end
  local adds = 0
  if fit >= 0 then adds = (mode == 2 and r) or (mode == 1 and fit) or 0 end
  if fit >= 0 and mode ~= 1 then fit = math.min(fit, 1) end
  out[at] = fit
  if adds > 0 then
    local members = {}
    for j = 1, adds do
      members[2 * j - 1] = now
      members[2 * j] = base .. ':' .. d .. ':' .. j
    end
    for c = 1, n do
      local key = K[o + k + c]
      redis.call('ZREMRANGEBYSCORE', key, '-inf', '(' .. (now - keep[c]))
      redis.call('ZADD', key, unpack(members))
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
