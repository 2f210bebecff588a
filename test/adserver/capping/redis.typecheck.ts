// Compiled by redis-store.test.ts: node-redis clients and clusters (npm `redis`) fit the stores' client type,
// so users pass theirs without a cast.
import { createClient, createCluster } from 'redis';
import { createRedisFrequencyCapStore, createRedisReport } from '../../../src/adserver/index.js';

const client = createClient({ url: 'redis://127.0.0.1:6379' });
const cluster = createCluster({ rootNodes: [{ url: 'redis://127.0.0.1:7000' }] });
export const stores = [createRedisFrequencyCapStore(client), createRedisFrequencyCapStore(cluster, { prefix: 'fc:' })];
export const reports = [createRedisReport(client), createRedisReport(cluster, { flushMs: 500 })];
