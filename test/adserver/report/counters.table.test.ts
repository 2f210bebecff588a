// What one fact adds to the report, as a table (its rows in counter-facts.ts: the fact, its time, the counters
// expected with their amounts, and why): the rule both reports count through, checked row by row.
import { describe, expect, test } from 'vitest';
import { periodsOf } from '../../../src/adserver/report/counters.js';
import { AT, call, incrementsOf, outcome, rows, xp } from './counter-facts.js';

describe('what one fact adds to the report', () => {
  test('the table has at least 20 rows, each with its reason', () => {
    expect(rows.length).toBeGreaterThanOrEqual(20);
    for (const r of rows) expect(r.reason.length).toBeGreaterThan(10);
  });

  test.each(rows)('$name: $reason', (row) => {
    const { networkId, fields, amounts } = incrementsOf(row.fact, row.dmps);
    expect(networkId).toBe(row.networkId);
    expect(new Set(fields).size).toBe(fields.length); // each counter once per fact
    if (amounts) expect(amounts).toHaveLength(fields.length);
    expect(Object.fromEntries(fields.map((f, i) => [f, amounts?.[i] ?? 1]))).toEqual(row.adds);
    const { day, hour } = periodsOf(row.at ?? AT);
    expect([day, hour]).toEqual([row.day ?? '2026-03-01', row.hour ?? '2026-03-01T15']);
  });

  test('an outcome that is not one throws a typed error naming the field, whatever the call', () => {
    const c = call({ experiments: [xp('x1', 'control', ['uidapi.com'])] });
    expect(() => incrementsOf(outcome(c, { revenue: -1 }))).toThrow(/outcome\.revenue/);
    expect(() => incrementsOf(outcome(call({}), { impression: 'yes' as never }))).toThrow(/outcome\.impression/);
  });
});
