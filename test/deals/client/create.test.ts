import { describe, expect, test } from 'vitest';
import {
  ConnectionError,
  DealApiClient,
  ServerError,
  TimeoutError,
  ValidationError,
} from '../../../src/deals/index.js';
import { validDeal } from '../fixtures.js';
import {
  PASS,
  caught,
  clientOptions,
  connectionRefused,
  connectionReset,
  fakeApi,
  json,
  type Handler,
} from './fake.js';

const VALID = validDeal() as never;

/** A client whose POST /deals is answered by `answer`; no retry delays. */
function clientFor(answer: Handler, extra: Record<string, unknown> = {}) {
  const api = fakeApi((req, n) =>
    req.url.pathname === '/v1/deals' && req.method === 'POST' ? answer(req, n) : PASS(),
  );
  return { api, client: new DealApiClient({ ...clientOptions(api.fetch), ...extra }) };
}

/** A 201 whose headers arrive and whose body then breaks off, as when the connection drops mid-body. */
function createdWithCutBody(headers: Record<string, string>): Response {
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode('{"id":42,"name":"Spr'));
      controller.error(Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }));
    },
  });
  return new Response(body, { status: 201, headers: { 'content-type': 'application/json', ...headers } });
}

describe('create outcomes that may have created the deal', () => {
  test.each([
    ['a 502', () => json({ message: 'bad gateway' }, 502), ServerError],
    ['a 504', () => json({}, 504), ServerError],
    ['a 500', () => json({ message: 'boom' }, 500), ServerError],
    ['a connection dropped after sending', () => connectionReset(), ConnectionError],
  ])('%s is marked mayHaveCreated and says so', async (_name, answer, type) => {
    const { client, api } = clientFor(answer);
    const err = await caught(client.deals.create(VALID));
    expect(err).toBeInstanceOf(type);
    expect(err.mayHaveCreated).toBe(true);
    expect(err.message).toMatch(/may have been created/);
    expect(JSON.parse(JSON.stringify(err)).mayHaveCreated).toBe(true);
    expect(api.api().filter((r) => r.method === 'POST')).toHaveLength(1); // never retried
  });

  test('a timeout after sending is marked mayHaveCreated', async () => {
    const { client } = clientFor(() => new Promise<Response>(() => undefined), { timeoutMs: 50 });
    const err = await caught(client.deals.create(VALID));
    expect(err).toBeInstanceOf(TimeoutError);
    expect(err.mayHaveCreated).toBe(true);
  });

  test('outcomes that cannot have created it are marked mayHaveCreated: false', async () => {
    const refused = await caught(clientFor(() => connectionRefused(), { retries: 0 }).client.deals.create(VALID));
    expect(refused).toBeInstanceOf(ConnectionError);
    expect(refused.mayHaveCreated).toBe(false);
    const invalid = await caught(
      clientFor(() =>
        json({ message: 'invalid', errors: [{ field: 'name', message: 'taken' }] }, 400),
      ).client.deals.create(VALID),
    );
    expect(invalid).toBeInstanceOf(ValidationError);
    expect(invalid.mayHaveCreated).toBe(false);
    expect(invalid.message).not.toMatch(/may have been created/);
  });

  test('a 201 whose body is cut resolves with the id Location gives', async () => {
    const { client } = clientFor(() => createdWithCutBody({ location: '/v1/deals/42', 'x-historyid': 'h-42' }));
    const created = await client.deals.create(VALID);
    expect(created).toEqual({ id: 42, location: 'https://api.test/v1/deals/42', historyId: 'h-42', recovered: false });
  });

  test('a 201 whose body is cut and that has no Location is a ConnectionError marked mayHaveCreated', async () => {
    const { client } = clientFor(() => createdWithCutBody({}));
    const err = await caught(client.deals.create(VALID));
    expect(err).toBeInstanceOf(ConnectionError);
    expect(err.mayHaveCreated).toBe(true);
    expect(err.status).toBe(201);
  });

  test('a GET whose body is cut is still a ConnectionError (only a create keeps a cut body)', async () => {
    const api = fakeApi((req) => (req.url.pathname === '/v1/deals/42' ? createdWithCutBody({}) : PASS()));
    const err = await caught(new DealApiClient({ ...clientOptions(api.fetch), retries: 0 }).deals.get(42));
    expect(err).toBeInstanceOf(ConnectionError);
  });
});
