import { describe, expect, test } from 'vitest';
import { DmpConfigError, createReport, dmpIds, parseDmpConfig } from '../../../src/adserver/index.js';
import { ID5, UID2, callWith } from '../fixtures.js';

const LOTAME = {
  source: 'crwdcntrl.net',
  uids: [
    { id: 'lotame-1', atype: 1 },
    { id: 'lotame-2', atype: 1 },
  ],
};
const dmps = [
  { dmp: 'lotame', source: 'crwdcntrl.net' },
  { dmp: 'uid-dmp', source: 'UIDAPI.com' },
  { dmp: 'permutive', source: 'permutive.com' },
];

describe('parseDmpConfig', () => {
  test('accepts one provider per DMP from the registry', () => {
    expect(parseDmpConfig(dmps)).toEqual(dmps);
  });

  test.each([
    [
      'two providers for one DMP',
      [dmps[0], { dmp: 'Lotame', source: 'id5-sync.com' }],
      'dmps[1].dmp: "Lotame" already has a preferred provider (dmps[0]); one per DMP',
    ],
    [
      'a source not in the registry',
      [dmps[0], { dmp: 'x', source: 'nope.example' }],
      'dmps[1].source ("nope.example"): is not a registered provider source',
    ],
    ['an entry without a dmp name', [{ dmp: ' ', source: 'id5-sync.com' }], 'dmps[0].dmp: must be a non-empty name'],
    ['an unknown key', [{ dmp: 'a', source: 'id5-sync.com', sources: [] }], 'dmps[0]'],
    ['not an array', { lotame: 'crwdcntrl.net' }, 'dmps'],
  ])('refuses %s with an error naming the entry', (_name, input, message) => {
    let error: unknown;
    try {
      parseDmpConfig(input);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(DmpConfigError);
    expect((error as DmpConfigError).message).toContain(message);
  });
});

describe('dmpIds', () => {
  test("gives each DMP its preferred provider's first uid, or undefined when the call has none", () => {
    expect(dmpIds(callWith({ eids: [ID5, LOTAME, UID2] }), dmps)).toEqual({
      lotame: 'lotame-1',
      'uid-dmp': UID2.uids[0].id,
      permutive: undefined,
    });
    expect(dmpIds(callWith({ eids: [] }), dmps)).toEqual({
      lotame: undefined,
      'uid-dmp': undefined,
      permutive: undefined,
    });
  });
});

describe('report', () => {
  test('counts Has DMP Id per DMP, in JSON and CSV', () => {
    const report = createReport({ dmps });
    const at = new Date('2025-03-01T08:00:00Z');
    report.add(callWith({ eids: [LOTAME, UID2] }), at);
    report.add(callWith({ eids: [LOTAME] }), at);
    report.add(callWith({ eids: [ID5] }), at);
    expect(report.toJSON().rows[0].hasDmpId).toEqual({
      lotame: { with: 2, without: 1 },
      'uid-dmp': { with: 1, without: 2 },
      permutive: { with: 0, without: 3 },
    });
    const csv = report.toCSV();
    expect(csv).toContain('2025-03-01,1234,Has DMP Id,lotame,with lotame id,2\r\n');
    expect(csv).toContain('2025-03-01,1234,Has DMP Id,lotame,without lotame id,1\r\n');
  });

  test('a report without DMPs has no Has DMP Id dimension', () => {
    const report = createReport();
    report.add(callWith({ eids: [LOTAME] }));
    expect(report.toJSON().rows[0]).not.toHaveProperty('hasDmpId');
    expect(report.toCSV()).not.toContain('Has DMP Id');
  });
});
