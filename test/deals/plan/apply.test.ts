import { describe, expect, test } from 'vitest';
import { applyPlan, dealKeyOf, diffDeal, planDeals, utcDay, writableFields } from '../../../src/deals/index.js';
import { dealsFile, DEFAULTS, manyDeals, setup } from './helpers.js';

describe('apply under injected faults and the daily creation quota', () => {
  test.each([20260302, 7, 11])('a 40-deal file applied over three simulated days with 20 percent of requests failing (seed %i) ends with exactly the 40 deals of the file', async (seed) => {
    const { sim, client, nextDay } = setup({ faults: { rate: 0.2, seed } });
    const wanted = manyDeals(40);
    const file = dealsFile(wanted);
    const createdPerDay: number[] = [];
    let recovered = 0;
    for (let day = 0; day < 3; day++) {
      if (day > 0) nextDay();
      const plan = await planDeals(client, file);
      expect(plan.summary.create).toBe(Math.min(15, 40 - 15 * day));
      const result = await applyPlan(client, plan);
      expect(result.summary.failed).toBe(0);
      createdPerDay.push(result.summary.created);
      recovered += result.summary.recovered;
      if (day < 2) expect(result.nextDay).toBe(utcDay(client.now() + 86_400_000));
    }
    expect(createdPerDay).toEqual([15, 15, 10]);

    const live = sim.deals();
    expect(live).toHaveLength(40);
    const keys = live.map((d) => dealKeyOf(d)?.key).sort();
    expect(keys).toEqual(wanted.map((d) => d.key).sort());
    const byDay = new Map<string, number>();
    for (const d of live) byDay.set(d.createdAt.slice(0, 10), (byDay.get(d.createdAt.slice(0, 10)) ?? 0) + 1);
    expect([...byDay.values()]).toEqual([15, 15, 10]);
    for (const want of wanted) {
      const deal = live.find((d) => dealKeyOf(d)?.key === want.key)!;
      const { key, ...fields } = want;
      expect(writableFields(deal as never)).toMatchObject({ ...DEFAULTS, ...fields });
      // Every other write field holds its spec §4.3 default: nothing more, nothing less than the file.
      expect(diffDeal(deal as never, { ...DEFAULTS, ...fields })).toEqual([]);
    }
    // The faults really happened, drops after processing included.
    expect(sim.requests.filter((r) => r.fault === 'drop-after').length).toBeGreaterThan(0);
    expect(sim.requests.filter((r) => r.fault).length).toBeGreaterThan(10);

    const final = await planDeals(client, file);
    expect(final.changes).toBe(false);
    expect(final.summary).toMatchObject({ create: 0, update: 0, deferred: 0, noChange: 40 });

    // Updates under the same faults: PUTs are retried safely, each lands once.
    const repriced = dealsFile(wanted.map((d, i) => (i % 8 === 0 ? { ...d, price: 99.99 } : d)));
    const updated = await applyPlan(client, await planDeals(client, repriced));
    expect(updated.summary).toMatchObject({ updated: 5, created: 0, failed: 0, deferred: 0 });
    expect(sim.deals().filter((d) => d.price === 99.99)).toHaveLength(5);
    expect((await planDeals(client, repriced)).changes).toBe(false);
    console.log(`faults injected: ${sim.requests.filter((r) => r.fault).length} of ${sim.requests.length} requests; creates recovered by key: ${recovered}`);
  }, 180_000);
});
