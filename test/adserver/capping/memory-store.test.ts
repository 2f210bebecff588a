// The in-memory cap store is bounded in bytes as well as in keys: users are chosen by callers, and an alternative
// id can be 2,048 characters, so 100,000 keys could hold over 200 MiB. Measured on the heap, after full collections.
import { describe, expect, test } from 'vitest';
import {
  DEFAULT_LIMITS,
  MemoryFrequencyCapStore,
  OptionsError,
  createFrequencyCapper,
  defineFrequencyCap,
} from '../../../src/adserver/index.js';
import { heapAfterGc, mib } from '../../support/heap.js';
import { callWith } from '../fixtures.js';

const MiB = 2 ** 20;
/** A distinct flat string of `length` characters, as JSON.parse makes one from a body. */
const idOf = (i: number, length: number) => JSON.parse(JSON.stringify(String(i).padStart(length, 'x'))) as string;

describe('the in-memory cap store holds at most maxBytes', () => {
  test('20,000 users of 2,048-character alternative ids through the capper keep its heap within maxBytes', async () => {
    const store = new MemoryFrequencyCapStore({ maxBytes: 8 * MiB });
    const capper = createFrequencyCapper({ store, alternativeIds: { 1234: 'id5-sync.com' } });
    const cap = defineFrequencyCap({ item: 'deal:1', max: 3, per: 'day' });
    const before = heapAfterGc();
    for (let i = 0; i < 20_000; i++) {
      const eids = [{ source: 'id5-sync.com', uids: [{ id: idOf(i, DEFAULT_LIMITS.maxIdLength) }] }];
      const decision = await capper.take(callWith({ eids }), cap);
      expect(decision.allowed).toBe(true);
    }
    const grown = heapAfterGc() - before;
    // Without the byte bound: 20,000 keys of ~2.4 KB each, 45 MiB.
    expect(grown, `heap grew by ${mib(grown)}`).toBeLessThanOrEqual(8 * MiB);
    expect(store.bytes).toBeLessThanOrEqual(8 * MiB);
    expect(store.size).toBeGreaterThan(1_000);
    expect(store.size).toBeLessThan(20_000);
  });

  test('the estimate is never under what V8 holds, whatever the key length and the impressions per key', () => {
    for (const [keyLength, impressions, keys] of [
      [20, 1, 20_000],
      [2_000, 1, 5_000],
      [20, 100, 2_000],
      [20, 1_000, 200],
    ]) {
      const store = new MemoryFrequencyCapStore({ maxKeys: 1e9, maxBytes: 2 ** 40 });
      const before = heapAfterGc();
      for (let i = 0; i < keys; i++) {
        const key = `alt:2:${idOf(i, keyLength)}|deal:1`;
        for (let t = 0; t < impressions; t++) store.record(key, 1_000 + t, 86_400_000);
      }
      const grown = heapAfterGc() - before;
      expect(store.bytes, `${keys} keys of ${keyLength} characters, ${impressions} impressions`).toBeGreaterThan(grown);
    }
  });

  test('evicts the least recently used keys past maxBytes, and counts what it holds', () => {
    const store = new MemoryFrequencyCapStore({ maxBytes: 3 * (2 * 100 + 320 + 16) });
    const key = (c: string) => c.repeat(100);
    for (const c of ['a', 'b', 'c']) store.record(key(c), 1, 1_000);
    store.record(key('a'), 2, 1_000); // a is the most recent now, and a little larger
    expect(store.size).toBe(2);
    expect(store.count(key('b'), 0)).toBe(0);
    expect(store.count(key('a'), 0)).toBe(2);
    expect(store.bytes).toBe(2 * (2 * 100 + 320) + 16 * 3);
  });

  test('maxBytes, maxKeys and maxEventsPerKey are whole numbers > 0, checked when the store is created', () => {
    for (const field of ['maxBytes', 'maxKeys', 'maxEventsPerKey']) {
      expect(() => new MemoryFrequencyCapStore({ [field]: 0 })).toThrow(OptionsError);
      expect(() => new MemoryFrequencyCapStore({ [field]: 1.5 })).toThrow(`${field} must be a whole number > 0`);
    }
  });
});
