import { describe, expect, test } from 'vitest';
import { applyPlan, dealKeyOf, planDeals, PlanRefusedError } from '../../../src/deals/index.js';
import { dealsFile, DEFAULTS, manyDeals, setup } from './helpers.js';

const mutations = (sim: { requests: { method: string; path: string }[] }) =>
  sim.requests.filter(
    (r) => (r.method === 'POST' || r.method === 'PUT' || r.method === 'DELETE') && !r.path.endsWith('/oauth/token'),
  );

describe('plan', () => {
  test('an invalid deal is refused with its key and field; apply refuses to start unless skipInvalid', async () => {
    const { sim, client } = setup();
    const deals = manyDeals(3);
    deals[1] = { ...deals[1], price: 0, countryCodes: ['FR', 'XX'] };
    const file = dealsFile(deals);
    const plan = await planDeals(client, file);
    const refused = plan.items.find((i) => i.action === 'refused')!;
    expect(refused.key).toBe('deal-02');
    expect(refused.issues).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: 'price', message: 'must be above 0 for a fixed price deal' }),
        expect.objectContaining({ path: 'countryCodes[1]' }),
      ]),
    );
    expect(plan.summary).toMatchObject({ create: 2, refused: 1 });

    const err = await applyPlan(client, plan).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PlanRefusedError);
    expect(err.message).toMatch(/deal-02.*--skip-invalid/);
    expect(mutations(sim)).toHaveLength(0);

    const result = await applyPlan(client, plan, { skipInvalid: true });
    expect(result.summary).toMatchObject({ created: 2, skipped: 1, failed: 0 });
    expect(result.complete).toBe(false);
    expect(
      sim
        .deals()
        .map((d) => dealKeyOf(d)?.key)
        .sort(),
    ).toEqual(['deal-01', 'deal-03']);
  });

  test('an issue in a field taken from defaults says so', async () => {
    const { client } = setup();
    const plan = await planDeals(
      client,
      dealsFile(manyDeals(1), {
        defaults: { isActive: true, beginDate: null, endDate: null, currency: 'euro', pricingModel: 1 },
      }),
    );
    expect(plan.items[0].issues).toContainEqual({
      path: 'currency',
      message: 'must be an ISO 4217 currency code such as EUR or USD (from defaults)',
    });
  });

  test('a deal edited by another client shows as drift with the changed fields, and apply puts it back', async () => {
    const { sim, client, make } = setup();
    const file = dealsFile(manyDeals(2));
    await applyPlan(client, await planDeals(client, file));
    const target = sim.deals().find((d) => dealKeyOf(d)?.key === 'deal-02')!;
    await make().deals.update(target.id, { price: 9.99, countryCodes: ['BE'] });

    const plan = await planDeals(client, file);
    const item = plan.items.find((i) => i.key === 'deal-02')!;
    expect(item).toMatchObject({ action: 'update', id: target.id, drift: true });
    expect(item.changes).toEqual([
      { field: 'price', from: 9.99, to: 1.25 },
      { field: 'countryCodes', from: ['BE'], to: ['DE'] },
    ]);
    expect(plan.items.find((i) => i.key === 'deal-01')).toMatchObject({ action: 'no-change' });
    expect(plan.items.find((i) => i.key === 'deal-01')!.drift).toBeUndefined();

    const result = await applyPlan(client, plan);
    expect(result.summary).toMatchObject({ updated: 1, created: 0 });
    expect(sim.deals().find((d) => d.id === target.id)).toMatchObject({ price: 1.25, countryCodes: ['DE'] });
    expect((await planDeals(client, file)).changes).toBe(false);
  });

  test('a file change (not drift) is an update without the drift flag', async () => {
    const { client } = setup();
    await applyPlan(client, await planDeals(client, dealsFile(manyDeals(1))));
    const plan = await planDeals(client, dealsFile([{ ...manyDeals(1)[0], name: 'Renamed' }]));
    expect(plan.items[0]).toMatchObject({
      action: 'update',
      changes: [{ field: 'name', from: 'Deal 1', to: 'Renamed' }],
    });
    expect(plan.items[0].drift).toBeUndefined();
  });

  test('a field the file omits is reset to its default; listed as unmanaged, the live value is kept', async () => {
    const { sim, client, make } = setup();
    const file = dealsFile(manyDeals(1));
    await applyPlan(client, await planDeals(client, file));
    const id = sim.deals()[0].id;
    await make().deals.update(id, { viewabilityTargetingPercentage: 70, platformIds: [2] });

    const plan = await planDeals(client, file);
    expect(plan.items[0].changes).toEqual([
      { field: 'platformIds', from: [2], to: [1, 3] },
      { field: 'viewabilityTargetingPercentage', from: 70, to: null },
    ]);
    const kept = await planDeals(client, dealsFile(manyDeals(1), { unmanaged: ['viewabilityTargetingPercentage'] }));
    expect(kept.items[0].changes).toEqual([{ field: 'platformIds', from: [2], to: [1, 3] }]);

    await applyPlan(client, plan);
    expect(sim.deals()[0]).toMatchObject({ viewabilityTargetingPercentage: null, platformIds: [1, 3] });
  });

  test('an isActive-only change is shown as pause or resume', async () => {
    const { client } = setup();
    await applyPlan(client, await planDeals(client, dealsFile(manyDeals(2))));
    const paused = manyDeals(2).map((d, i) => (i === 0 ? { ...d, isActive: false } : d));
    const plan = await planDeals(client, dealsFile(paused));
    expect(plan.items[0]).toMatchObject({ action: 'pause', changes: [{ field: 'isActive', from: true, to: false }] });
    await applyPlan(client, plan);
    const back = await planDeals(client, dealsFile(manyDeals(2)));
    expect(back.items[0]).toMatchObject({ action: 'resume' });
  });

  test('a second apply right after is a no-op: no write is sent', async () => {
    const { sim, client } = setup();
    const file = dealsFile(manyDeals(5));
    await applyPlan(client, await planDeals(client, file));
    const before = mutations(sim).length;
    const again = await applyPlan(client, await planDeals(client, file));
    expect(again.items).toHaveLength(0);
    expect(again.complete).toBe(true);
    expect(mutations(sim)).toHaveLength(before);
  });

  test('prune: a key that left the file is left alone, paused or deleted; deals without a marker are never touched', async () => {
    const { sim, client } = setup({ seed: { deals: 5 } });
    await applyPlan(client, await planDeals(client, dealsFile(manyDeals(3))));
    const smaller = dealsFile(manyDeals(2));
    const gone = sim.deals().find((d) => dealKeyOf(d)?.key === 'deal-03')!;

    const kept = await planDeals(client, smaller);
    expect(kept.items.at(-1)).toMatchObject({ key: 'deal-03', action: 'orphan', id: gone.id });
    expect(kept.changes).toBe(false);

    const pause = await planDeals(client, smaller, { prune: 'pause' });
    expect(pause.items.at(-1)).toMatchObject({ key: 'deal-03', action: 'pause', reason: 'key no longer in the file' });
    await applyPlan(client, pause);
    expect(sim.deals().find((d) => d.id === gone.id)).toMatchObject({ isActive: false, name: 'Deal 3', price: 1.5 });
    expect((await planDeals(client, smaller, { prune: 'pause' })).changes).toBe(false);
    // Back in the file: a resume, not drift (the pause rewrote the marker's hash).
    const back = (await planDeals(client, dealsFile(manyDeals(3)))).items.find((i) => i.key === 'deal-03')!;
    expect(back).toMatchObject({ action: 'resume', changes: [{ field: 'isActive', from: false, to: true }] });
    expect(back.drift).toBeUndefined();

    const del = await planDeals(client, smaller, { prune: 'delete' });
    expect(del.items.filter((i) => i.action === 'delete').map((i) => i.id)).toEqual([gone.id]);
    await applyPlan(client, del);
    expect(sim.deals()).toHaveLength(5 + 2);
    expect(sim.deals().filter((d) => !dealKeyOf(d))).toHaveLength(5);
  });

  test("two live deals with one key: the oldest is the key's deal, the other is pruned as a duplicate", async () => {
    const { sim, client, make } = setup();
    const file = dealsFile(manyDeals(1));
    await applyPlan(client, await planDeals(client, file));
    const first = sim.deals()[0];
    const { id, dealId, createdAt, updatedAt, ...rest } = first as Record<string, unknown>;
    const writable = Object.fromEntries(
      Object.entries(rest).filter(
        ([k]) =>
          ![
            'expirationDateUtc',
            'isDisabledByRegulator',
            'isParentDeal',
            'isArchived',
            'isEditable',
            'isExclusive',
            'isDealPlus',
            'typeId',
            'priorityId',
            'dealCriticalityId',
            'throttlingRate',
            'customVendorCost',
            'keywordTargeting',
            'keywordIdsTargeting',
            'semanticSegmentsDataCost',
            'audienceSegmentsDataCost',
            'viewabilityDataCost',
            'videoCompletionDataCost',
          ].includes(k),
      ),
    );
    const copy = await make().deals.create(writable as never);
    const plan = await planDeals(client, file, { prune: 'delete' });
    expect(plan.items).toEqual([
      expect.objectContaining({ key: 'deal-01', action: 'no-change', id: first.id }),
      expect.objectContaining({
        key: 'deal-01',
        action: 'delete',
        id: copy.id,
        reason: `duplicate of key deal-01 (deal ${first.id} is kept)`,
      }),
    ]);
  });
});

describe('plan and apply within the daily quotas', () => {
  test("creations beyond today's 15 are deferred with the day they can go", async () => {
    const { client } = setup();
    const plan = await planDeals(client, dealsFile(manyDeals(35)));
    expect(plan.quota).toMatchObject({
      day: '2026-03-02',
      creationsLeft: 15,
      creationsPerDay: 15,
      updatesLeft: 500,
      resetsAt: '2026-03-03T00:00:00.000Z',
    });
    expect(plan.summary).toMatchObject({ create: 15, deferred: 20 });
    expect(plan.items.slice(15, 30).every((i) => i.deferredUntil === '2026-03-03')).toBe(true);
    expect(plan.items.slice(30).every((i) => i.deferredUntil === '2026-03-04')).toBe(true);
  });

  test('creations made today are counted: after 12 today, 3 are left', async () => {
    const { client } = setup();
    await applyPlan(client, await planDeals(client, dealsFile(manyDeals(12))));
    const plan = await planDeals(client, dealsFile(manyDeals(20)));
    expect(plan.quota.creationsLeft).toBe(3);
    expect(plan.summary).toMatchObject({ create: 3, deferred: 5, noChange: 12 });
  });

  test('updates are scheduled against the update quota, and a service refusal defers the rest of them', async () => {
    const { sim, client } = setup({ quotas: { updatesPerDay: 2 } });
    await applyPlan(client, await planDeals(client, dealsFile(manyDeals(4))));
    const renamed = dealsFile(manyDeals(4).map((d) => ({ ...d, name: `${d.name} v2` })));
    const planned = await planDeals(client, renamed, { quotas: { updatesPerDay: 3 } });
    expect(planned.summary).toMatchObject({ update: 3, deferred: 1 });
    expect(planned.items[3]).toMatchObject({ action: 'update', deferredUntil: '2026-03-03' });
    // The service allows 2, not the 3 the plan assumed: the third update is deferred, not failed.
    const result = await applyPlan(client, planned);
    expect(result.summary).toMatchObject({ updated: 2, deferred: 2, failed: 0 });
    expect(result.items.map((i) => i.status)).toEqual(['done', 'done', 'deferred', 'deferred']);
    expect(sim.deals().filter((d) => d.name.endsWith('v2'))).toHaveLength(2);
  });

  test('when the service says the quota is spent before the estimate, apply stops creating cleanly and defers the rest', async () => {
    const { sim, client, make } = setup();
    // Deals created and deleted today spent quota the listing cannot see.
    const other = make();
    for (let i = 0; i < 4; i++) {
      const { id } = await other.deals.create({
        ...DEFAULTS,
        name: `temp ${i}`,
        price: 2,
        buyerIds: [101],
        countryCodes: ['FR'],
      });
      await other.deals.delete(id);
    }
    const plan = await planDeals(client, dealsFile(manyDeals(15)));
    expect(plan.summary.create).toBe(15);
    const result = await applyPlan(client, plan);
    expect(result.summary).toMatchObject({ created: 11, deferred: 4, failed: 0 });
    expect(result.nextDay).toBe('2026-03-03');
    expect(result.items.filter((i) => i.status === 'deferred').every((i) => i.deferredUntil === '2026-03-03')).toBe(
      true,
    );
    expect(sim.deals()).toHaveLength(11);
  });
});
