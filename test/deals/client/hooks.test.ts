import { describe, expect, test } from 'vitest';
import type { RequestEvent, ResponseEvent, RetryEvent } from '../../../src/deals/index.js';
import { startSimulator, VALID_DEAL } from './sim.js';

describe('client hooks', () => {
  test('request, response and retry events carry method, URL, status, attempt and elapsed ms, never a secret', async () => {
    const { client, sim, close } = await startSimulator(
      'in-process',
      { faults: { rate: 0.3, seed: 3, kinds: ['503'] } },
      { retries: { maxRetries: 8, baseDelayMs: 1, maxDelayMs: 2 } },
    );
    try {
      const requests: RequestEvent[] = [];
      const responses: ResponseEvent[] = [];
      const retries: RetryEvent[] = [];
      client
        .on('request', (e) => requests.push(e))
        .on('response', (e) => responses.push(e))
        .on('retry', (e) => retries.push(e));
      for await (const _ of client.deals.list()) {
        // drain every page
      }
      await client.deals.get((await client.deals.list().toArray({ limit: 1 }))[0]?.id ?? 1).catch(() => undefined);
      expect(requests.length).toBeGreaterThan(0);
      expect(responses).toHaveLength(requests.length);
      expect(requests.map((r) => r.method)).toContain('POST'); // the token request
      const deals = responses.filter((r) => new URL(r.url).pathname === '/current/deals');
      expect(deals.some((r) => r.status === 200)).toBe(true);
      for (const r of responses) {
        expect(r.elapsedMs).toBeGreaterThanOrEqual(0);
        expect(r.attempt).toBeGreaterThanOrEqual(1);
      }
      const failed = responses.filter((r) => r.status === 503);
      expect(failed.length).toBeGreaterThan(0);
      expect(retries.length).toBe(failed.length);
      expect(retries[0]).toMatchObject({
        status: 503,
        error: 'ServerError',
        attempt: expect.any(Number),
        delayMs: expect.any(Number),
      });
      const text = JSON.stringify([requests, responses, retries]);
      const user = sim.users.find((u) => u.kind === 'company')!;
      for (const secret of [user.password, user.clientSecret]) expect(text).not.toContain(secret);
      expect(text).not.toMatch(/Bearer/i);
    } finally {
      await close();
    }
  });

  test('a listener that throws breaks nothing, and off() removes a listener', async () => {
    const { client, close } = await startSimulator('in-process');
    try {
      let calls = 0;
      const listener = () => {
        calls++;
        throw new Error('telemetry down');
      };
      client.on('response', listener);
      const created = await client.deals.create(VALID_DEAL);
      expect(created.id).toBeGreaterThan(0);
      const seen = calls;
      expect(seen).toBeGreaterThan(0);
      client.off('response', listener);
      await client.deals.get(created.id);
      expect(calls).toBe(seen);
      expect(() => client.on('nope' as never, () => undefined)).toThrow(/unknown client event/);
    } finally {
      await close();
    }
  });

  test('a dropped connection is reported as a response event with error ConnectionError and no status', async () => {
    const { client, close } = await startSimulator(
      'in-process',
      { faults: { rate: 1, seed: 1, kinds: ['drop'] } },
      { retries: 0 },
    );
    try {
      const responses: ResponseEvent[] = [];
      client.on('response', (e) => responses.push(e));
      await client.deals
        .list()
        .toArray({ limit: 1 })
        .catch(() => undefined);
      expect(responses[0]).toMatchObject({ method: 'POST', error: 'ConnectionError' });
      expect(responses[0].status).toBeUndefined();
    } finally {
      await close();
    }
  });
});
