import { describe, expect, test } from 'vitest';
import {
  createFrequencyCapper,
  createRedisFrequencyCapStore,
  createRedisReport,
  defineFrequencyCap,
  periodStart,
  resolveCap,
} from '../../../src/adserver/index.js';
import type { FrequencyCap, RedisClientLike } from '../../../src/adserver/index.js';
import { callWith } from '../fixtures.js';

// Only shape matters here: configuration is refused before any command is sent.
const client = {
  evalSha: () => Promise.reject(new Error('unused')),
  hIncrBy: () => Promise.reject(new Error('unused')),
} as unknown as RedisClientLike;

describe('bad configuration fails when the cap or store is created, naming the setting', () => {
  test.each([
    [
      { item: 'deal:1', max: 3, windowMs: -5 },
      'frequency cap "deal:1": windowMs must be a number of milliseconds > 0 (got -5)',
    ],
    [
      { item: 'deal:1', max: 3, windowMs: 0 },
      'frequency cap "deal:1": windowMs must be a number of milliseconds > 0 (got 0)',
    ],
    [
      {
        item: 'deal:1',
        windows: [
          { max: 3, per: 'day' },
          { max: 9, per: 'fortnight' },
        ],
      },
      'frequency cap "deal:1": windows[1].per must be one of day, week, month, lifetime (got "fortnight")',
    ],
    [{ max: 3, per: 'day' }, 'frequency cap: item must be a non-empty string'],
    [{ item: '', max: 3, per: 'day' }, 'frequency cap: item must be a non-empty string'],
    [{ item: 'deal:1', max: 0, per: 'day' }, 'frequency cap "deal:1": max must be an integer >= 1 (got 0)'],
    [{ item: 'deal:1', max: 3 }, 'frequency cap "deal:1": per or windowMs is required'],
    [{ item: 'deal:1', windows: [] }, 'frequency cap "deal:1": windows must be a non-empty array'],
    [
      { item: 'deal:1', max: 2, per: 'day', windows: [{ max: 3, per: 'week' }] },
      'give either windows or one inline window',
    ],
    [{ item: 'deal:1', max: 2, per: 'day', windowMs: 1000 }, 'frequency cap "deal:1": windowMs and per are exclusive'],
  ])('cap %j', (cap, message) => {
    expect(() => defineFrequencyCap(cap as unknown as FrequencyCap)).toThrow(message);
  });

  test('stores, cappers and reports check their options at creation', () => {
    expect(() => createRedisFrequencyCapStore(client, { prefix: 'fc:{x}' })).toThrow(
      'prefix must be a string without { or }',
    );
    expect(() => createRedisFrequencyCapStore(client, { maxEventsPerKey: 0 })).toThrow(
      'maxEventsPerKey must be an integer >= 1 (got 0)',
    );
    expect(() => createRedisFrequencyCapStore({} as RedisClientLike)).toThrow(
      /client must be a node-redis or ioredis client/,
    );
    expect(() => createFrequencyCapper({ timeoutMs: 0 })).toThrow(
      'timeoutMs must be a number of milliseconds > 0 (got 0)',
    );
    expect(() => createFrequencyCapper({ onStoreError: 'maybe' as 'serve' })).toThrow(
      `onStoreError must be 'serve' or 'block' (got "maybe")`,
    );
    expect(() => createRedisReport(client, { flushMs: 0 })).toThrow('flushMs must be a number > 0 (got 0)');
    expect(() => createRedisReport(client, { maxBuffered: -1 })).toThrow(
      'maxBuffered must be a whole number > 0 (got -1)',
    );
    expect(() => createRedisReport(client, { retentionDays: Number.NaN })).toThrow(/retentionDays/);
  });

  test('a capper refuses a bad cap before asking the store', async () => {
    const capper = createFrequencyCapper({
      store: {
        count: () => {
          throw new Error('store asked');
        },
        record: () => {},
      },
    });
    await expect(capper.take(callWith({ pid: 'p' }), { item: 'x', max: 1, per: 'year' as 'day' })).rejects.toThrow(
      /per must be one of/,
    );
  });

  test('a defined cap is frozen and resolves to its windows, the longest one setting how long impressions are kept', () => {
    const cap = defineFrequencyCap({
      item: 'deal:1',
      windows: [
        { max: 3, per: 'day' },
        { max: 10, per: 'week', rolling: true },
        { max: 20, per: 'lifetime' },
      ],
    });
    expect(Object.isFrozen(cap) && Object.isFrozen(cap.windows)).toBe(true);
    const r = resolveCap(cap);
    expect(r.windows.map((w) => w.label)).toEqual(['3/day', '10/rolling week', '20/lifetime']);
    expect(r.keepMs).toBe(366 * 86_400_000);
  });
});

describe('calendar periods (UTC)', () => {
  test('a day starts at UTC midnight, an ISO week on Monday, a month on the 1st', () => {
    const t = Date.UTC(2025, 5, 1, 13, 30); // Sunday 1 June 2025
    expect(new Date(periodStart('day', t)).toISOString()).toBe('2025-06-01T00:00:00.000Z');
    expect(new Date(periodStart('week', t)).toISOString()).toBe('2025-05-26T00:00:00.000Z');
    expect(new Date(periodStart('week', Date.UTC(2025, 5, 2))).toISOString()).toBe('2025-06-02T00:00:00.000Z');
    expect(new Date(periodStart('month', t)).toISOString()).toBe('2025-06-01T00:00:00.000Z');
  });
});
