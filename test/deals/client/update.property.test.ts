import { afterAll, beforeAll, expect, test } from 'vitest';
import fc from 'fast-check';
import { DEAL_WRITE_FIELDS, ValidationError, mergeDeal, type DealApiClient } from '../../../src/deals/index.js';
import { startSimulator } from './sim.js';

let ctx: Awaited<ReturnType<typeof startSimulator>>;
let client: DealApiClient;
beforeAll(async () => {
  ctx = await startSimulator('in-process', { seed: { deals: 60, seed: 11 }, quotas: { updatesPerDay: 100_000 } });
  client = ctx.client;
});
afterAll(() => ctx.close());

/** Patches over fields whose valid values do not depend on the rest of the deal. */
const patchArb = fc.record(
  {
    name: fc.string({ minLength: 1, maxLength: 40 }).filter((s) => s.trim().length > 0 && s.trim() === s),
    isActive: fc.boolean(),
    callerDealIds: fc.array(fc.stringMatching(/^[a-z0-9-]{1,12}$/), { maxLength: 4 }),
    viewabilityTargetingPercentage: fc.option(fc.integer({ min: 0, max: 100 })),
    videoCompletionTargetingPercentage: fc.option(fc.integer({ min: 0, max: 100 })),
    platformIds: fc.uniqueArray(fc.integer({ min: 1, max: 6 }), { minLength: 1, maxLength: 6 }),
    creativeSizes: fc.array(fc.constantFrom('300*250', '728*90', '160*600', '320*50'), { maxLength: 3 }),
    apiCompliance: fc.record({ isVpaidCompliant: fc.boolean(), isOmSdkCompliant: fc.boolean() }),
  },
  { requiredKeys: [] },
);

test('update changes exactly the patched fields and preserves every other field (property)', async () => {
  const ids = ctx.sim.deals().map((d) => d.id);
  let applied = 0;
  await fc.assert(
    fc.asyncProperty(fc.constantFrom(...ids), patchArb, async (id, patch) => {
      const before = await client.deals.get(id);
      const putsBefore = ctx.sim.requests.filter((r) => r.method === 'PUT').length;
      let after;
      try {
        after = await client.deals.update(id, patch);
      } catch (err) {
        // A patch the rules refuse leaves the deal untouched and sends no PUT.
        expect(err).toBeInstanceOf(ValidationError);
        expect(ctx.sim.requests.filter((r) => r.method === 'PUT').length).toBe(putsBefore);
        expect(await client.deals.get(id)).toEqual(before);
        return;
      }
      applied++;
      const stored = await client.deals.get(id);
      const expected = mergeDeal(before as Record<string, unknown>, patch);
      for (const field of DEAL_WRITE_FIELDS) {
        expect(stored[field], field).toEqual(expected[field]);
        expect(after[field], field).toEqual(expected[field]);
      }
      expect(stored.dealId).toBe(before.dealId);
      expect(stored.createdAt).toBe(before.createdAt);
    }),
    { numRuns: 60, seed: 20250101 },
  );
  expect(applied).toBeGreaterThan(30); // the property is about updates that went through
});

test('mergeDeal: undefined leaves a field, null clears it, arrays replace, objects merge', () => {
  fc.assert(
    fc.property(
      fc.dictionary(fc.string(), fc.jsonValue()),
      fc.dictionary(fc.string(), fc.jsonValue()),
      (base, patch) => {
        const merged = mergeDeal(base, patch);
        for (const key of Object.keys(base)) if (!(key in patch)) expect(merged[key]).toEqual(base[key]);
        for (const [key, value] of Object.entries(patch)) {
          const isObj = (v: unknown) => v !== null && typeof v === 'object' && !Array.isArray(v);
          if (!isObj(value) || !isObj(base[key])) expect(merged[key]).toEqual(value);
        }
      },
    ),
  );
  expect(mergeDeal({ a: { x: 1, y: 2 }, b: [1, 2], c: 3 }, { a: { y: 5 }, b: [9], c: null, d: undefined })).toEqual({
    a: { x: 1, y: 5 },
    b: [9],
    c: null,
  });
});

test('mergeDeal keeps a "__proto__" patch key as a plain field and never changes the prototype', () => {
  const merged = mergeDeal({ name: 'n' }, JSON.parse('{"__proto__": {"polluted": true}, "x": 0}'));
  expect(Object.getPrototypeOf(merged)).toBe(Object.prototype);
  expect(Object.hasOwn(merged, '__proto__')).toBe(true);
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  expect(JSON.stringify(merged)).toBe('{"name":"n","__proto__":{"polluted":true},"x":0}');
});
