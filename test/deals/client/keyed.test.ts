import { describe, expect, test } from 'vitest';
import { ConnectionError, dealKeyOf, ValidationError } from '../../../src/deals/index.js';
import { createDealApiSimulator, IN_PROCESS_ORIGIN } from '../../../src/simulator/index.js';
import { DealApiClient } from '../../../src/deals/index.js';
import { createWithKey } from '../../../src/deals/client/keyed.js';
import { markCreateOutcome } from '../../../src/deals/client/errors.js';
import { caught } from './fake.js';
import { VALID_DEAL } from './sim.js';

/** A client whose fetch drops the first `drops` POST /deals: after the simulator processed them, or before. */
function droppingClient(drops: number, when: 'after' | 'before', maxRetries = 3) {
  const sim = createDealApiSimulator();
  const user = sim.users.find((u) => u.kind === 'company')!;
  let left = drops;
  const fetchImpl = async (input: string | URL | Request, init?: RequestInit) => {
    const isCreate = init?.method === 'POST' && String(input).endsWith('/deals');
    if (isCreate && left > 0) {
      left--;
      if (when === 'after') await sim.fetch(input, init);
      throw new TypeError('fetch failed', {
        cause: Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }),
      });
    }
    return sim.fetch(input, init);
  };
  const client = new DealApiClient({
    baseUrl: `${IN_PROCESS_ORIGIN}/current/`,
    authUrl: IN_PROCESS_ORIGIN,
    audience: sim.audience,
    credentials: {
      clientId: user.clientId,
      clientSecret: user.clientSecret,
      username: user.username,
      password: user.password,
    },
    fetch: fetchImpl,
    retries: { maxRetries, baseDelayMs: 1, maxDelayMs: 5 },
  });
  return { sim, client };
}

describe('client.deals.create(deal, { key })', () => {
  test("writes the key marker eidkit:<key> into callerDealIds, after the caller's own ids", async () => {
    const { sim, client } = droppingClient(0, 'after');
    const created = await client.deals.create({ ...VALID_DEAL, callerDealIds: ['crm-1'] }, { key: 'spring-fr' });
    expect(created.recovered).toBe(false);
    expect(sim.deals()[0].callerDealIds).toEqual(['crm-1', 'eidkit:spring-fr']);
    expect(dealKeyOf(sim.deals()[0])).toEqual({ key: 'spring-fr' });
  });

  test('when the answer is lost after the deal was created, returns that deal (recovered) and creates nothing more', async () => {
    const { sim, client } = droppingClient(1, 'after');
    const created = await client.deals.create(VALID_DEAL, { key: 'spring-fr' });
    expect(created.recovered).toBe(true);
    expect(sim.deals()).toHaveLength(1);
    expect(created.id).toBe(sim.deals()[0].id);
    expect(created.deal?.name).toBe(VALID_DEAL.name);
    const lookup = sim.requests.find((r) => r.method === 'GET' && r.path.endsWith('/deals'));
    expect(lookup).toBeDefined();
  });

  test('when the request was lost before the service acted, looks the key up, finds nothing and sends it again: one deal', async () => {
    const { sim, client } = droppingClient(2, 'before');
    const created = await client.deals.create(VALID_DEAL, { key: 'spring-fr' });
    expect(created.recovered).toBe(false);
    expect(sim.deals()).toHaveLength(1);
    expect(sim.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/deals'))).toHaveLength(1);
    expect(sim.requests.filter((r) => r.method === 'GET' && r.path.endsWith('/deals'))).toHaveLength(2);
  });

  test('without a key, a lost answer is a ConnectionError that may have reached the service, never retried', async () => {
    const { sim, client } = droppingClient(1, 'after');
    const err = await caught(client.deals.create(VALID_DEAL));
    expect(err).toBeInstanceOf(ConnectionError);
    expect((err as ConnectionError).mayHaveReachedServer).toBe(true);
    expect(sim.deals()).toHaveLength(1);
    expect(sim.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/deals'))).toHaveLength(1);
  });

  test('gives up after the retries when every answer is lost, with the last ConnectionError', async () => {
    const { sim, client } = droppingClient(10, 'before');
    const err = await caught(client.deals.create(VALID_DEAL, { key: 'spring-fr' }));
    expect(err).toBeInstanceOf(ConnectionError);
    expect(sim.deals()).toHaveLength(0);
  });

  test('with retries off, a lost answer is still looked up (found: recovered), but a create not found is not sent again', async () => {
    const after = droppingClient(1, 'after', 0);
    expect((await after.client.deals.create(VALID_DEAL, { key: 'a' })).recovered).toBe(true);
    const before = droppingClient(1, 'before', 0);
    expect(await caught(before.client.deals.create(VALID_DEAL, { key: 'a' }))).toBeInstanceOf(ConnectionError);
    expect(before.sim.deals()).toHaveLength(0);
  });

  test('dryRun.create with a key shows the marker in the body it would send', async () => {
    const { sim, client } = droppingClient(0, 'after');
    const req = await client.deals.dryRun.create(VALID_DEAL, { key: 'spring-fr' });
    expect((req!.body as { callerDealIds: string[] }).callerDealIds).toEqual(['eidkit:spring-fr']);
    expect(sim.deals()).toHaveLength(0);
  });

  test('refuses an invalid key before sending anything', async () => {
    const { sim, client } = droppingClient(0, 'after');
    const err = await caught(client.deals.create(VALID_DEAL, { key: 'no spaces' }));
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as ValidationError).issues[0].path).toBe('key');
    expect(sim.requests).toHaveLength(0);
  });
});

describe('createWithKey', () => {
  test('an abort during the wait between recoveries ends the create at once (the wait grows to 2 s)', async () => {
    const controller = new AbortController();
    let lookups = 0;
    const lost = () => markCreateOutcome(new ConnectionError('connection closed', true, { attempts: 1 }));
    const create = createWithKey(
      {
        now: () => Date.now(),
        maxRecoveries: 10,
        send: () => {
          if (controller.signal.aborted) return Promise.reject(controller.signal.reason as Error);
          return Promise.reject(lost());
        },
        list: () => {
          // After the fourth look-up the client waits 400 ms before sending again; abort 20 ms into that wait.
          if (++lookups === 4) setTimeout(() => controller.abort(new Error('stopped by the caller')), 20);
          return (async function* () {
            // No deal carries the key.
          })();
        },
        urlOf: (id) => `https://deals.test/deals/${id}`,
        warn: () => undefined,
        signal: controller.signal,
      },
      VALID_DEAL,
      'spring-fr',
    );
    const settled = create.then(
      () => 'resolved',
      (err: unknown) => (err as Error).message,
    );
    await new Promise<void>((resolve) => controller.signal.addEventListener('abort', () => resolve(), { once: true }));
    // A timer started at the abort expires well before the 400 ms wait started 20 ms earlier: the create must settle
    // first (the old wait ignored the signal, so the create then ran until its next send).
    const outcome = await Promise.race([settled, new Promise((r) => setTimeout(() => r('still waiting'), 100))]);
    expect(outcome).toBe('stopped by the caller');
    expect(lookups).toBe(4);
  });
});
