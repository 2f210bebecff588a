import { afterEach, describe, expect, test } from 'vitest';
import { inspect } from 'node:util';
import {
  AuthAttemptsExhaustedError,
  AuthenticationError,
  CreationQuotaExceededError,
  DealApiError,
  ForbiddenError,
  InvalidGrantError,
  NotFoundError,
  PayloadTooLargeError,
  UpdateQuotaExceededError,
  ValidationError,
} from '../../../src/deals/index.js';
import { apiRequests, startSimulator, VALID_DEAL, type Transport } from './sim.js';
import { caught } from './fake.js';

const open: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c()));
});
async function start(...args: Parameters<typeof startSimulator>) {
  const s = await startSimulator(...args);
  open.push(s.close);
  return s;
}

for (const transport of ['in-process', 'http'] as Transport[]) {
  describe(`client against the simulator (${transport})`, () => {
    test('create with copyOf validates the body laid over the source deal, and {} copies it as it is', async () => {
      const { client } = await start(transport);
      const source = await client.deals.create({ ...VALID_DEAL, price: 4.25, countryCodes: ['DE'] });
      const renamed = await client.deals.create({ name: 'Copy of spring' }, { copyOf: source.id });
      expect(await client.deals.get(renamed.id)).toMatchObject({
        name: 'Copy of spring',
        price: 4.25,
        countryCodes: ['DE'],
        buyerIds: [101],
      });
      const asIs = await client.deals.create({}, { copyOf: source.id });
      expect(await client.deals.get(asIs.id)).toMatchObject({ price: 4.25, countryCodes: ['DE'] });
      // A field that makes the copy invalid is refused before sending, naming the field.
      const err = await caught(client.deals.create({ price: -1 }, { copyOf: source.id }));
      expect(err).toBeInstanceOf(ValidationError);
      expect(err.attempts).toBe(0);
      expect(err.issues.map((i: { path: string }) => i.path)).toEqual(['price']);
      const missing = await caught(client.deals.create({ name: 'x' }, { copyOf: 999_999 }));
      expect(missing).toBeInstanceOf(NotFoundError);
    });

    test('create, get, list, update, pause, resume, domain lists, countBreakdown and delete round-trip', async () => {
      const { client, sim } = await start(transport);
      const created = await client.deals.create(VALID_DEAL);
      expect(created.id).toBeGreaterThan(0);
      expect(created.location).toMatch(new RegExp(`/current/deals/${created.id}$`));
      expect(created.historyId).toMatch(/^\d+$/);

      const got = await client.deals.get(created.id);
      expect(got).toMatchObject({ ...VALID_DEAL, id: created.id });
      expect(got.dealId).not.toBe(String(got.id));

      const copy = await client.deals.create({ ...VALID_DEAL, name: 'Copy' }, { copyOf: created.id });
      expect(copy.id).not.toBe(created.id);

      const updated = await client.deals.update(created.id, { name: 'Renamed', countryCodes: ['DE'] });
      expect(updated).toMatchObject({
        name: 'Renamed',
        countryCodes: ['DE'],
        price: 2.5,
        minCompanyVendorCost: 0.1,
        buyerIds: [101],
      });

      expect((await client.deals.pause(created.id)).isActive).toBe(false);
      expect((await client.deals.resume(created.id)).isActive).toBe(true);

      await client.deals.attachDomainList(created.id, 1);
      expect((await client.deals.get(created.id)).domainListId).toBe(1);
      await client.deals.detachDomainList(created.id, 1);
      expect((await client.deals.get(created.id)).domainListId).toBeNull();

      const counts = await client.deals.countBreakdown();
      expect(counts.total).toBe(2);

      const replaced = await client.deals.replace(copy.id, { ...VALID_DEAL, name: 'Replaced', countryCodes: ['IT'] });
      expect(replaced).toMatchObject({ name: 'Replaced', countryCodes: ['IT'] });

      await client.deals.delete(created.id);
      expect(await caught(client.deals.get(created.id))).toBeInstanceOf(NotFoundError);
      expect(sim.deals().map((d) => d.id)).toEqual([copy.id]);
    });

    test('lists several pages: every deal once, with the total count', async () => {
      const { client, sim } = await start(transport, { seed: { deals: 345 } });
      const page = await client.deals.list().firstPage();
      expect(page.total).toBe(345);
      const ids: number[] = [];
      for await (const d of client.deals.list({ sortBy: 'id', sortAsc: true })) ids.push(d.id);
      expect(ids).toEqual(
        sim
          .deals()
          .map((d) => d.id)
          .sort((a, b) => a - b),
      );
      const sequential = await client.deals
        .list({ concurrency: 1, sortBy: 'id', sortAsc: true })
        .toArray({ limit: 1000 });
      expect(sequential.map((d) => d.id)).toEqual(ids);
      expect(await client.deals.list().toArray({ limit: 120 })).toHaveLength(120);
    });

    test('lookups list across pages, by ids and by search', async () => {
      const { client, sim } = await start(transport);
      const countries = await client.lookups.list('countries', { pageSize: 50 }).toArray({ limit: 1000 });
      expect(countries.length).toBe(sim.reference.countries.length);
      expect(countries.length).toBeGreaterThan(200);
      const two = await client.lookups.list('DSPs', { ids: [1, 4] }).toArray({ limit: 10 });
      expect(two.map((d) => d.id)).toEqual([1, 4]);
      const found = await client.lookups.list('dsps', { search: 'amazon' }).toArray({ limit: 10 });
      expect(found.map((d) => d.name)).toEqual(['Amazon DSP']);
    });

    test('refuses an invalid deal before sending any request (not even for a token)', async () => {
      const { client, sim } = await start(transport);
      const bad = [
        { ...VALID_DEAL, dspIds: [1] }, // both buyerIds and dspIds
        { ...VALID_DEAL, partnerIds: [1] },
        { ...VALID_DEAL, countryCodes: [], buyerIds: [101] }, // no targeting
        { ...VALID_DEAL, regionIds: [1] }, // two geo types
        { ...VALID_DEAL, videoCompletionTargetingPercentage: 120 },
      ];
      for (const deal of bad) {
        const err = await caught(client.deals.create(deal as any));
        expect(err).toBeInstanceOf(ValidationError);
        expect(err.attempts).toBe(0);
        expect(err.issues.length).toBeGreaterThan(0);
      }
      const err = await caught(client.deals.create({ ...VALID_DEAL, price: 'cheap' } as any));
      expect(err.issues).toContainEqual({ path: 'price', message: expect.any(String) });
      expect(sim.requests).toHaveLength(0);
    });

    test('refuses a DSP without multiple-buyer support using the looked-up DSP, before the POST', async () => {
      const { client, sim } = await start(transport);
      const forbidden = sim.reference.dsps.find((d) => d.isMultiBuyerDealForbidden)!;
      const err = await caught(
        client.deals.create({ ...VALID_DEAL, buyerIds: undefined, dspIds: [forbidden.id] } as any),
      );
      expect(err).toBeInstanceOf(ValidationError);
      expect(err.message).toContain(String(forbidden.id));
      expect(sim.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/deals'))).toHaveLength(0);
      expect(sim.deals()).toHaveLength(0);
    });

    test('update refuses a change of an immutable field before the PUT', async () => {
      const { client, sim } = await start(transport);
      const { id } = await client.deals.create(VALID_DEAL);
      const err = await caught(client.deals.update(id, { currency: 'USD' }));
      expect(err).toBeInstanceOf(ValidationError);
      expect(err.issues.map((i: { path: string }) => i.path)).toContain('currency');
      expect(sim.requests.filter((r) => r.method === 'PUT')).toHaveLength(0);
    });

    test('an update that changes nothing sends no PUT', async () => {
      const { client, sim } = await start(transport);
      const { id } = await client.deals.create(VALID_DEAL);
      await client.deals.update(id, { name: VALID_DEAL.name });
      await client.deals.resume(id);
      expect(sim.requests.filter((r) => r.method === 'PUT')).toHaveLength(0);
    });

    test('maps every service error to its class', async () => {
      const { client, make, sim } = await start(transport, {
        quotas: { creationsPerDay: 1, updatesPerDay: 1 },
        maxBodyBytes: 2_000,
      });
      expect(await caught(client.deals.get(999_999))).toBeInstanceOf(NotFoundError);
      const { id } = await client.deals.create(VALID_DEAL);
      const quota = await caught(client.deals.create(VALID_DEAL));
      expect(quota).toBeInstanceOf(CreationQuotaExceededError);
      expect(quota.retryAfterMs).toBeGreaterThan(0);
      await client.deals.update(id, { name: 'one' });
      expect(await caught(client.deals.update(id, { name: 'two' }))).toBeInstanceOf(UpdateQuotaExceededError);
      const big = await caught(
        client.deals.replace(id, {
          ...VALID_DEAL,
          callerDealIds: Array.from({ length: 300 }, (_, i) => `caller-deal-${i}`),
        }),
      );
      expect(big).toBeInstanceOf(PayloadTooLargeError);

      const dsp = make({
        credentials: {
          ...sim.users.find((u) => u.kind === 'dsp')!,
          username: sim.users.find((u) => u.kind === 'dsp')!.username,
        },
      });
      expect(await caught(dsp.lookups.list('domainLists').toArray({ limit: 1 }))).toBeInstanceOf(ForbiddenError);
      expect(await caught(dsp.deals.attachDomainList(id, 1))).toBeInstanceOf(ForbiddenError);

      const wrong = make({
        credentials: {
          clientId: 'eidkit-demo-client',
          clientSecret: 'eidkit-demo-secret',
          username: 'demo@eidkit.test',
          password: 'not-the-password',
        },
      });
      const invalid = await caught(wrong.deals.countBreakdown());
      expect(invalid).toBeInstanceOf(InvalidGrantError);
      const badClient = make({
        credentials: { clientId: 'nope', clientSecret: 'nope-secret', username: 'demo@eidkit.test', password: 'x' },
      });
      const denied = await caught(badClient.deals.countBreakdown());
      // The simulator answers a wrong client as it answers a wrong password (no oracle for client secrets).
      expect(denied).toBeInstanceOf(InvalidGrantError);
      const fixed = make({ token: 'sim_ut_not-a-real-token' });
      expect(await caught(fixed.deals.countBreakdown())).toBeInstanceOf(AuthenticationError);
    });

    test('auth storm: 200 concurrent calls on a cold client make one token and one authorize request', async () => {
      const { client, sim } = await start(transport, { seed: { deals: 3 } });
      await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          i % 2 ? client.deals.countBreakdown() : client.deals.get(sim.deals()[0].id),
        ),
      );
      expect(sim.requests.filter((r) => r.path.endsWith('/oauth/token'))).toHaveLength(1);
      expect(sim.requests.filter((r) => r.path.endsWith('/authorize'))).toHaveLength(1);
      expect(apiRequests(sim)).toHaveLength(200);
    });

    test('the service auth limit: the local budget stops before the service refuses, then the service 429 is typed', async () => {
      const { make, sim } = await start(transport);
      const wrong = () =>
        make({
          credentials: {
            clientId: 'eidkit-demo-client',
            clientSecret: 'eidkit-demo-secret',
            username: 'demo@eidkit.test',
            password: 'wrong-password',
          },
        });
      // Ten fresh clients each spend one attempt: the service's window is now full.
      for (let i = 0; i < 10; i++)
        expect(await caught(wrong().deals.countBreakdown())).toBeInstanceOf(InvalidGrantError);
      const limited = await caught(make().deals.countBreakdown());
      expect(limited).toBeInstanceOf(AuthAttemptsExhaustedError);
      expect(limited.retryAfterMs).toBeGreaterThan(0);
      expect(sim.requests.filter((r) => r.path.endsWith('/oauth/token'))).toHaveLength(11);
    });
  });
}

describe('a 429 on the token endpoint that is not the lock-out', () => {
  test("an injected 429 (a rate limiter's, Retry-After: 1) at login is retried like any 429; the login succeeds", async () => {
    // Every other request of this seed's run is refused with an injected 429, the token request among them.
    const { make, sim } = await start('in-process', { faults: { rate: 0.5, kinds: ['429'], seed: 3 } });
    const results = await Promise.all(
      Array.from({ length: 6 }, () =>
        make({ retries: { maxRetries: 8, baseDelayMs: 5, maxDelayMs: 40 } }).deals.countBreakdown(),
      ),
    );
    expect(results.every((r) => typeof r.total === 'number')).toBe(true);
    const tokenFaults = sim.requests.filter((r) => r.path.endsWith('/oauth/token') && r.fault === '429');
    expect(tokenFaults.length).toBeGreaterThan(0);
  });
});

describe('faults (simulator injecting 20 % failures: 503, dropped connections, 429 with Retry-After)', () => {
  test('listing returns every deal exactly once and no deal is ever created twice', async () => {
    const { client, sim } = await start(
      'in-process',
      { seed: { deals: 1500 }, faults: { rate: 0.2, seed: 7 }, quotas: { creationsPerDay: 1000 } },
      { retries: { maxRetries: 10, baseDelayMs: 5, maxDelayMs: 40 } },
    );
    const seeded = sim
      .deals()
      .map((d) => d.id)
      .sort((a, b) => a - b);
    const ids: number[] = [];
    for await (const d of client.deals.list({ sortBy: 'id', sortAsc: true })) ids.push(d.id);
    expect(ids).toEqual(seeded);
    expect(sim.requests.filter((r) => r.fault).length).toBeGreaterThan(2);

    const outcomes = await Promise.allSettled(
      Array.from({ length: 40 }, (_, i) => client.deals.create({ ...VALID_DEAL, name: `fault test ${i}` })),
    );
    const names = sim
      .deals()
      .map((d) => d.name)
      .filter((n) => n.startsWith('fault test'));
    expect(new Set(names).size).toBe(names.length); // never twice
    outcomes.forEach((o, i) => {
      if (o.status === 'fulfilled') expect(names).toContain(`fault test ${i}`);
      else expect(o.reason).toBeInstanceOf(DealApiError);
    });
    expect(outcomes.filter((o) => o.status === 'fulfilled').length).toBeGreaterThan(20);
  });
});

describe('redaction against the simulator', () => {
  test('no password, secret or token appears in errors, logs, inspect or JSON', async () => {
    const lines: string[] = [];
    const logger = {
      debug: (m: string) => lines.push(m),
      info: (m: string) => lines.push(m),
      warn: (m: string) => lines.push(m),
    };
    const { client, credentials, sim } = await start('http', { faults: { rate: 0.3, seed: 3 } }, { logger });
    const errors: unknown[] = [];
    for (let i = 0; i < 5; i++) errors.push(await caught(client.deals.get(999_999)));
    const seen = [
      ...errors.flatMap((e) => [
        String(e),
        (e as Error).stack,
        inspect(e, { depth: 6, showHidden: true }),
        JSON.stringify(e),
      ]),
      inspect(client, { depth: 6, showHidden: true }),
      JSON.stringify(client),
      ...lines,
    ].join('\n');
    const tokens = sim.requests.length; // the tokens themselves are random: check every Bearer value is masked
    expect(tokens).toBeGreaterThan(0);
    for (const secret of [credentials.password, credentials.clientSecret]) expect(seen).not.toContain(secret);
    expect(seen).not.toMatch(/sim_(at|ut)_/);
  });
});
