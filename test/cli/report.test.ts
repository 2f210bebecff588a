// `eidkit report uplift` and `eidkit report export`: the real built binary reading a report snapshot file and a real
// redis-server behind a password, as a table, JSON and CSV; the password never printed; provider names from a file
// never reach the terminal raw.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createRedisReport, createReport, parseAdCall, upliftOf } from '../../src/adserver/index.js';
import type { Report, RedisReport } from '../../src/adserver/index.js';
// @ts-expect-error plain ESM helper shared with the bench
import { connectRedis, startRedis } from '../support/redis-server.mjs';
import { eidkit } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'eidkit-report-cli-'));
const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
/** Yesterday at 10:00 UTC: within the Redis report's retention. */
const AT = new Date(Math.floor(Date.now() / 86_400_000) * 86_400_000 - 14 * 3_600_000);

/** 4,000 calls of network 7 in experiment `id5-q3` (10 % held out) with outcomes: control earns about 20 % more. */
function feed(report: Pick<Report | RedisReport, 'add' | 'addOutcome'>) {
  for (let i = 0; i < 4_000; i++) {
    const held = i % 10 === 0;
    const eids = held ? [] : [{ source: 'id5-sync.com', uids: [{ id: 'ID5*x', atype: 1 }] }];
    const xp = [{ id: 'id5-q3', arm: held ? 'h' : 'c', pct: 10, src: ['id5-sync.com'], st: 1 }];
    const call = parseAdCall({ url: `/ac?nwid=7&eids=${b64(eids)}&xp=${b64(xp)}` });
    report.add(call, AT);
    const filled = (Math.floor(i / 10) * 7) % 10 < (held ? 3 : 4);
    report.addOutcome(call, filled ? { impression: true, revenue: 0.001 + ((i * 31) % 17) / 10_000 } : {}, AT);
  }
}

const local = createReport();
feed(local);
const snapshot = join(dir, 'report.json');
writeFileSync(snapshot, JSON.stringify(local.toJSON()));

describe('eidkit report uplift --file', () => {
  test('a table: the split, revenue and fill per 1,000 calls per arm, the lift and its interval, days to target', async () => {
    const run = await eidkit(['report', 'uplift', '--file', snapshot]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const [head, , line] = run.stdout.split('\n');
    expect(head).toMatch(/^network\s+experiment\s+providers\s+days\s+calls held\/control\s+held out\s+ratio p/);
    const [r] = upliftOf(local.toJSON());
    expect(line).toContain('id5-q3');
    expect(line).toContain('400/3600');
    expect(line).toContain('10.0 % of 10.0 %');
    expect(r.revenueLift!.lift).toBeGreaterThan(0.1);
    expect(line).toContain(`+${(r.revenueLift!.lift * 100).toFixed(1)} %`);
    expect(run.stdout).toContain('within ±5.0 %');
  });
  test('--json: the full results; --csv: one line per experiment through the one CSV writer', async () => {
    const json = await eidkit(['report', 'uplift', '--file', snapshot, '--json', '--target', '2']);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({ experiments: upliftOf(local.toJSON(), { targetHalfWidth: 0.02 }) });
    const csv = await eidkit(['report', 'uplift', '--file', snapshot, '--csv']);
    const lines = csv.stdout.split('\r\n');
    expect(lines[0]).toMatch(/^network,experiment,providers,days,calls_holdout,calls_control,declared_share,/);
    expect(lines[1]).toMatch(/^7,id5-q3,ID5,1,400,3600,0.1,0.1,/);
    expect(lines[2]).toBe('');
    const none = await eidkit(['report', 'uplift', '--file', snapshot, '--network', '8']);
    expect(none.stdout).toMatch(/^no experiment in the report/);
  });
  test('a file that is no report: exit 3 naming the field; text from the file escaped', async () => {
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ rows: [{ date: '2026-01-01', networkId: 1, calls: 'x' }], droppedCalls: 0 }));
    const run = await eidkit(['report', 'uplift', '--file', bad]);
    expect(run.code).toBe(3);
    expect(run.stderr).toMatch(/^eidkit: .*bad\.json: not a report: rows\[0\]\.calls: /);
    const hostile = JSON.parse(JSON.stringify(local.toJSON()));
    hostile.rows[0].experiments[0].providers[0].providerName = 'ID5\u001b]0;pwned\u0007';
    const file = join(dir, 'hostile.json');
    writeFileSync(file, JSON.stringify(hostile));
    const table = await eidkit(['report', 'uplift', '--file', file]);
    expect(table.stdout).not.toMatch(/[\u001b\u0007]/);
    expect(table.stdout).toContain('ID5\\x1b]0;pwned\\x07');
    expect((await eidkit(['report', 'uplift'])).code).toBe(2);
    expect((await eidkit(['report', 'uplift', '--file', snapshot, '--json', '--csv'])).code).toBe(2);
  });
});

describe('eidkit report --redis', () => {
  const PASSWORD = 's3cret-pa55';
  let redis: Awaited<ReturnType<typeof startRedis>>;
  let url = '';
  beforeAll(async () => {
    redis = await startRedis();
    const client = await connectRedis(redis.url);
    const report = createRedisReport(client, { prefix: 'cli:' });
    feed(report);
    await report.close();
    await client.configSet('requirepass', PASSWORD);
    await client.close();
    url = redis.url.replace('redis://', `redis://:${PASSWORD}@`);
  });
  afterAll(() => redis?.stop());

  test('reads the fleet report: the same results as the snapshot; export writes a snapshot that reads back', async () => {
    const run = await eidkit(['report', 'uplift', '--redis', url, '--prefix', 'cli:', '--json']);
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout)).toEqual({ experiments: upliftOf(local.toJSON()) });
    const exported = await eidkit(['report', 'export', '--prefix', 'cli:'], { REDIS_URL: url });
    expect(JSON.parse(exported.stdout)).toEqual(local.toJSON());
    expect(run.stdout + exported.stdout).not.toContain(PASSWORD);
  });
  test('a wrong password or an unreachable server: exit 6, and the password is never printed', async () => {
    const wrong = url.replace(PASSWORD, 'wr0ng-pa55');
    const run = await eidkit(['report', 'uplift', '--redis', wrong]);
    expect(run.code).toBe(6);
    expect(run.stderr).toMatch(/^eidkit: Redis at 127\.0\.0\.1:\d+: /);
    expect(run.stderr).not.toContain('wr0ng-pa55');
    const down = await eidkit(['report', 'uplift', '--redis', `redis://:${PASSWORD}@127.0.0.1:1`, '--timeout', '500']);
    expect(down.code).toBe(6);
    expect(down.stderr + down.stdout).not.toContain(PASSWORD);
    const badPrefix = await eidkit(['report', 'uplift', '--redis', url, '--prefix', 'a{b}']);
    expect(badPrefix.code).toBe(2);
    expect(badPrefix.stderr).toContain('--prefix must not hold { or }');
    const badUrl = await eidkit(['report', 'uplift', '--redis', `http://:${PASSWORD}@x`]);
    expect(badUrl.code).toBe(2);
    expect(badUrl.stderr).not.toContain(PASSWORD);
  });
});
