import { describe, expect, test } from 'vitest';
import { applyPlan, dealKeyOf, diffDeal, planDeals, utcDay, writableFields } from '../../../src/deals/index.js';
import { dealsFile, DEFAULTS, manyDeals, setup } from './helpers.js';

describe('apply under injected faults and the daily creation quota', () => {
  test.each([20260302, 7, 11])(
    'a 40-deal file applied over three simulated days with 20 percent of requests failing (seed %i) ends with exactly the 40 deals of the file',
    async (seed) => {
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
        // Every other write field holds its default: nothing more, nothing less than the file.
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
      console.log(
        `faults injected: ${sim.requests.filter((r) => r.fault).length} of ${sim.requests.length} requests; creates recovered by key: ${recovered}`,
      );
    },
    180_000,
  );
});

describe('several deals files and scripts on one account', () => {
  test('two namespaced deals files and a script keep to their own deals, even with --prune delete', async () => {
    const { sim, client } = setup();
    const script = await client.deals.create(
      { ...DEFAULTS, name: 'Made by a script', price: 2, buyerIds: [101], countryCodes: ['FR'] },
      { key: 'it-script' },
    );
    const teamA = dealsFile(manyDeals(2), { namespace: 'team-a' });
    const teamB = dealsFile(manyDeals(3), { namespace: 'team-b' });
    const plain = dealsFile(manyDeals(1));
    for (const file of [teamA, teamB, plain]) await applyPlan(client, await planDeals(client, file));
    expect(sim.deals()).toHaveLength(1 + 2 + 3 + 1);
    expect(
      sim
        .deals()
        .map((d) => dealKeyOf(d)?.key)
        .sort(),
    ).toEqual([
      'deal-01',
      'it-script',
      'team-a/deal-01',
      'team-a/deal-02',
      'team-b/deal-01',
      'team-b/deal-02',
      'team-b/deal-03',
    ]);

    // Each file sees only its own deals: no orphans from the others, nothing to change.
    for (const file of [teamA, teamB, plain]) {
      const plan = await planDeals(client, file, { prune: 'delete' });
      expect(plan.summary).toMatchObject({ create: 0, update: 0, delete: 0, orphan: 0 });
      expect(plan.changes).toBe(false);
    }

    // Team A drops a deal and prunes: only its own deal goes; team B's, the plain file's and the script's stay.
    const shrunk = dealsFile(manyDeals(1), { namespace: 'team-a' });
    const plan = await planDeals(client, shrunk, { prune: 'delete' });
    expect(plan.namespace).toBe('team-a');
    expect(plan.items.filter((i) => i.action === 'delete').map((i) => i.key)).toEqual(['team-a/deal-02']);
    const result = await applyPlan(client, plan);
    expect(result.summary.deleted).toBe(1);
    expect(
      sim
        .deals()
        .map((d) => dealKeyOf(d)?.key)
        .sort(),
    ).toEqual(['deal-01', 'it-script', 'team-a/deal-01', 'team-b/deal-01', 'team-b/deal-02', 'team-b/deal-03']);
    expect(sim.deals().some((d) => d.id === script.id)).toBe(true);
  });

  test("a file without a namespace never lists a script's keyed deal as an orphan", async () => {
    const { client } = setup();
    await client.deals.create(
      { ...DEFAULTS, name: 'Made by a script', price: 2, buyerIds: [101], countryCodes: ['FR'] },
      { key: 'it-script' },
    );
    const plan = await planDeals(client, dealsFile(manyDeals(1)), { prune: 'pause' });
    expect(plan.items.map((i) => [i.key, i.action])).toEqual([['deal-01', 'create']]);
  });

  test('a namespace must be a plain name', () => {
    expect(dealsFile(manyDeals(1), { namespace: 'a/b' }).issues).toEqual([
      {
        path: 'namespace',
        message: 'must be 1-100 letters, digits, ".", "_" or "-" starting with a letter or digit, got "a/b"',
      },
    ]);
  });
});
