/**
 * Reading the Redis report: the fleet's merged counts of the periods still kept, as the in-memory report's rows.
 */
import type { RedisClientLike } from '../common/index.js';
import { luaScript } from '../common/index.js';
import { rowOf, sortRows } from './counters.js';
import type { DmpConfig } from './dmp.js';
import { networkOfFieldPrefix } from './redis-keys.js';
import type { RedisReportKeys } from './redis-keys.js';
import type { Counters, ReportGranularity, ReportJson, ReportRow } from './report-types.js';

const readDropped = luaScript(`return redis.call('HGET', KEYS[1], '#dropped')`);

/** What a read needs to know of its report. */
export interface ReadSettings {
  keys: RedisReportKeys;
  /** How long a bucket is kept after its period ends, per granularity (ms). */
  retention: Readonly<Record<ReportGranularity, number>>;
  dmps: readonly DmpConfig[];
}

/** The fleet's rows per day or hour at time `t`, and the calls it dropped (at full buffers and over the cap). */
export async function readRedisReport(
  client: RedisClientLike,
  { keys, retention, dmps }: ReadSettings,
  g: ReportGranularity,
  t: number,
): Promise<ReportJson> {
  const [periods, days] = await Promise.all([
    client.zRangeByScore(keys.index[g], t - retention[g], '+inf'),
    client.zRangeByScore(keys.index.day, t - retention.day, '+inf'),
  ]);
  const [hashes, meta, capped] = await Promise.all([
    Promise.all(periods.map((p) => client.hGetAll(keys.bucket(g, p)))),
    client.hGetAll(keys.meta),
    Promise.all(days.map((d) => readDropped(client, [keys.bucket('day', d)], []))),
  ]);
  const rows: ReportRow[] = [];
  periods.forEach((period, i) => {
    for (const [net, c] of countersByNetwork(hashes[i] ?? {}))
      rows.push(rowOf(period, networkOfFieldPrefix(net), c, dmps));
  });
  const overCap = capped.reduce((n: number, v) => n + (Number(v) || 0), 0);
  return { rows: sortRows(rows), droppedCalls: Number(meta?.dropped ?? 0) + overCap };
}

/** One bucket's fields by network (keyed by the fields' prefix `<network>|`, no number), its bookkeeping left out. */
function countersByNetwork(hash: Record<string, string>): Map<string, Counters> {
  const byNetwork = new Map<string, Counters>();
  for (const [field, value] of Object.entries(hash)) {
    if (field.startsWith('#')) continue; // the bucket's own bookkeeping: `#networks`, `#dropped`, `#x…`
    const bar = field.indexOf('|');
    const net = field.slice(0, bar + 1);
    let c = byNetwork.get(net);
    if (!c) byNetwork.set(net, (c = new Map<string, number>()));
    c.set(field.slice(bar + 1), Number(value));
  }
  return byNetwork;
}
