import { describe, expect, test } from 'vitest';
import { createReport } from '../../../src/adserver/index.js';
import { ID5, UID2, UNKNOWN, callWith } from '../fixtures.js';
// @ts-expect-error plain ESM helpers shared with the bench and the fuzz suite
import { collidingIds } from '../../support/colliding-ids.mjs';
// @ts-expect-error plain ESM helpers shared with the benches
import { interleavedRounds, quantile } from '../../bench/rounds.mjs';

const day1 = new Date('2025-03-01T08:00:00Z');
const day1late = new Date('2025-03-01T23:59:59Z');
const day2 = new Date('2025-03-02T00:00:00Z');

describe('report dimensions', () => {
  test('counts Extended Ids per provider, Has User Uid and Has User Pid per day and network', () => {
    const report = createReport();
    report.add(callWith({ uid: 'u1', pid: 'p1', eids: [ID5, UID2] }), day1);
    report.add(
      callWith({ pid: 'p2', eids: [ID5, UNKNOWN, { source: 'other.example', uids: [{ id: 'o' }] }] }),
      day1late,
    );
    report.add(callWith({ eids: [] }), day1);
    report.add(callWith({ networkId: 99, uid: 'u9', eids: [UID2] }), day1);
    report.add(callWith({ pid: 'p1', eids: [UID2] }), day2);

    expect(report.toJSON()).toEqual({
      droppedCalls: 0,
      rows: [
        {
          date: '2025-03-01',
          networkId: 99,
          calls: 1,
          extendedIds: [{ providerId: 4, providerName: 'Unified ID 2.0', calls: 1 }],
          callsWithoutEids: 0,
          hasUserUid: { with: 1, without: 0 },
          hasUserPid: { with: 0, without: 1 },
          userId: { uid: 1, pid: 0, none: 0 },
        },
        {
          date: '2025-03-01',
          networkId: 1234,
          calls: 3,
          extendedIds: [
            { providerId: 0, providerName: 'Unknown', calls: 1 },
            { providerId: 2, providerName: 'ID5', calls: 2 },
            { providerId: 4, providerName: 'Unified ID 2.0', calls: 1 },
          ],
          callsWithoutEids: 1,
          hasUserUid: { with: 1, without: 2 },
          hasUserPid: { with: 2, without: 1 },
          userId: { uid: 1, pid: 1, none: 1 },
        },
        {
          date: '2025-03-02',
          networkId: 1234,
          calls: 1,
          extendedIds: [{ providerId: 4, providerName: 'Unified ID 2.0', calls: 1 }],
          callsWithoutEids: 0,
          hasUserUid: { with: 0, without: 1 },
          hasUserPid: { with: 1, without: 0 },
          userId: { uid: 0, pid: 1, none: 0 },
        },
      ],
    });
  });

  test('a uid overrides the pid as the user id', () => {
    const report = createReport();
    report.add(callWith({ uid: 'u', pid: 'p' }), day1);
    const [row] = report.toJSON().rows;
    expect(row.userId).toEqual({ uid: 1, pid: 0, none: 0 });
    // The pid is still counted as present: Has User Pid answers "did the call carry a pid cookie".
    expect(row.hasUserPid).toEqual({ with: 1, without: 0 });
  });

  test('writes CSV with a header and one line per count, the uid / pid / none user id dimension included', () => {
    const report = createReport();
    report.add(callWith({ uid: 'u1', eids: [ID5] }), day1);
    report.add({ ...callWith({ eids: [] }), networkId: undefined }, day1);
    expect(report.toCSV().split('\r\n')).toEqual([
      'date,network_id,dimension,key,label,calls',
      '2025-03-01,,Ad Calls,all,all ad calls,1',
      '2025-03-01,,Extended Ids,none,no extended id,1',
      '2025-03-01,,Has User Uid,yes,with uid,0',
      '2025-03-01,,Has User Uid,no,without uid,1',
      '2025-03-01,,Has User Pid,yes,with pid,0',
      '2025-03-01,,Has User Pid,no,without pid,1',
      '2025-03-01,,User Id,uid,uid (overrides pid),0',
      '2025-03-01,,User Id,pid,pid,0',
      '2025-03-01,,User Id,none,neither,1',
      '2025-03-01,1234,Ad Calls,all,all ad calls,1',
      '2025-03-01,1234,Extended Ids,2,ID5,1',
      '2025-03-01,1234,Extended Ids,none,no extended id,0',
      '2025-03-01,1234,Has User Uid,yes,with uid,1',
      '2025-03-01,1234,Has User Uid,no,without uid,0',
      '2025-03-01,1234,Has User Pid,yes,with pid,0',
      '2025-03-01,1234,Has User Pid,no,without pid,1',
      '2025-03-01,1234,User Id,uid,uid (overrides pid),1',
      '2025-03-01,1234,User Id,pid,pid,0',
      '2025-03-01,1234,User Id,none,neither,0',
      '',
    ]);
  });

  test('keeps at most maxDays days and maxNetworksPerDay networks', () => {
    const report = createReport({ maxDays: 2, maxNetworksPerDay: 2 });
    for (const d of ['2025-01-01', '2025-01-02', '2025-01-03']) report.add(callWith({}), new Date(`${d}T12:00:00Z`));
    expect(report.toJSON().rows.map((r) => r.date)).toEqual(['2025-01-02', '2025-01-03']);
    report.add(callWith({ networkId: 1 }), new Date('2025-01-03T13:00:00Z'));
    report.add(callWith({ networkId: 2 }), new Date('2025-01-03T13:00:00Z'));
    const json = report.toJSON();
    expect(json.rows.filter((r) => r.date === '2025-01-03').map((r) => r.networkId)).toEqual([1, 1234]);
    expect(json.droppedCalls).toBe(1);
  });
});

describe('hourly rows', () => {
  test('granularity hour gives one row per UTC hour and network, and a CSV with an hour column', () => {
    const report = createReport();
    report.add(callWith({ uid: 'u1', eids: [ID5] }), new Date('2025-03-01T08:10:00Z'));
    report.add(callWith({ pid: 'p1', eids: [] }), new Date('2025-03-01T08:59:59Z'));
    report.add(callWith({ pid: 'p1', eids: [UID2] }), new Date('2025-03-01T23:00:00Z'));
    const hours = report.toJSON({ granularity: 'hour' }).rows;
    expect(hours.map((r) => [r.date, r.hour, r.calls])).toEqual([
      ['2025-03-01', 8, 2],
      ['2025-03-01', 23, 1],
    ]);
    expect(hours[0]).toMatchObject({
      hasUserUid: { with: 1, without: 1 },
      callsWithoutEids: 1,
      userId: { uid: 1, pid: 1, none: 0 },
    });
    expect(report.toJSON().rows.map((r) => [r.date, r.hour, r.calls])).toEqual([['2025-03-01', undefined, 3]]);
    expect(report.toCSV({ granularity: 'hour' }).split('\r\n').slice(0, 3)).toEqual([
      'date,hour,network_id,dimension,key,label,calls',
      '2025-03-01,8,1234,Ad Calls,all,all ad calls,2',
      '2025-03-01,8,1234,Extended Ids,2,ID5,1',
    ]);
  });

  test('keeps at most maxHours hours', () => {
    const report = createReport({ maxHours: 2 });
    for (const h of ['00', '01', '02']) report.add(callWith({}), new Date(`2025-01-01T${h}:30:00Z`));
    expect(report.toJSON({ granularity: 'hour' }).rows.map((r) => r.hour)).toEqual([1, 2]);
    expect(report.toJSON().rows[0].calls).toBe(3);
  });
});

describe('network ids chosen by the caller', () => {
  // V8 hashes small integers without a seed: ids found offline share one bucket of a Map keyed by them, and each
  // lookup walks all of them. The report keys networks by a string, whose hash V8 seeds per process.
  test('report.add costs no more for 8,000 ids that V8 hashes alike than for 8,000 ordinary ids', () => {
    const at = new Date('2025-03-01T10:00:00Z');
    const calls = (ids: number[]) => ids.map((networkId) => callWith({ networkId, pid: 'p', eids: [ID5] }));
    const adding = (list: ReturnType<typeof calls>) => {
      const report = createReport();
      let i = 0;
      return () => report.add(list[i++ % list.length], at);
    };
    const colliding = calls(collidingIds(8_000, 13) as number[]);
    const ordinary = calls(Array.from({ length: 8_000 }, (_, i) => 1_000 + i));
    const { ratios, perOp } = interleavedRounds(
      { ordinary: adding(ordinary), colliding: adding(colliding) },
      { rounds: 9, iterations: 8_000, warmup: 16_000, cpu: true },
    );
    const ratio = quantile(ratios.colliding, 0.5);
    const ns = (k: 'ordinary' | 'colliding') => quantile(perOp[k], 0.5).toFixed(0);
    expect(ratio, `${ns('colliding')} vs ${ns('ordinary')} ns per add`).toBeLessThanOrEqual(2);
  });

  test('rows read back the network ids (and calls without one) from the string keys', () => {
    const report = createReport();
    const at = new Date('2025-03-01T10:00:00Z');
    const noNetwork = callWith({});
    delete noNetwork.networkId;
    for (const call of [callWith({ networkId: 2_147_483_647 }), callWith({ networkId: 1 }), noNetwork])
      report.add(call, at);
    expect(report.toJSON().rows.map((r) => r.networkId)).toEqual([null, 1, 2_147_483_647]);
  });
});
