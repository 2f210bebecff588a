import { describe, expect, test } from 'vitest';
import {
  AuthAttemptsExhaustedError,
  AuthenticationError,
  DealApiClient,
  InvalidGrantError,
  PASSWORD_REALM_GRANT,
  type CachedToken,
} from '../../../src/deals/index.js';
import { PASS, SECRETS, clientOptions, fakeApi, json, caught } from './fake.js';

const ok = (req: { url: URL }) => (req.url.pathname.startsWith('/v1/deals') ? json([], 200) : PASS());

describe('token flow', () => {
  test('sends the password-realm grant form, then GET /authorize with the access token, then the user token', async () => {
    const api = fakeApi(ok);
    await new DealApiClient(clientOptions(api.fetch)).deals.countBreakdown();
    const [token, authorize, call] = api.seen;
    expect(token.method).toBe('POST');
    expect(token.url.href).toBe('https://auth.test/oauth/token');
    expect(token.headers.get('content-type')).toBe('application/x-www-form-urlencoded');
    expect(Object.fromEntries(new URLSearchParams(token.body))).toEqual({
      grant_type: PASSWORD_REALM_GRANT,
      realm: 'Username-Password-Authentication',
      audience: 'https://api.test',
      username: SECRETS.username,
      password: SECRETS.password,
      client_id: SECRETS.clientId,
      client_secret: SECRETS.clientSecret,
    });
    expect(authorize.url.href).toBe('https://api.test/v1/authorize');
    expect(authorize.headers.get('authorization')).toBe('Bearer ACCESS-TOKEN-aaaa');
    // The user token is text/plain: a validating proxy (Prism) answers 406 to a request that accepts only JSON.
    expect(authorize.headers.get('accept')).toBe('text/plain, application/json;q=0.9');
    expect(call.headers.get('accept')).toBe('application/json');
    expect(call.headers.get('authorization')).toBe('Bearer USER-TOKEN-bbbb');
  });

  test('the client-credentials grant sends no username or password', async () => {
    const api = fakeApi(ok);
    await new DealApiClient({
      ...clientOptions(api.fetch),
      grant: 'client-credentials',
      credentials: { clientId: 'c', clientSecret: 's3cret' },
    }).deals.countBreakdown();
    expect(Object.fromEntries(new URLSearchParams(api.seen[0].body))).toEqual({
      grant_type: 'client_credentials',
      audience: 'https://api.test',
      client_id: 'c',
      client_secret: 's3cret',
    });
  });

  test('200 concurrent calls on a cold client make one token request and one authorize request', async () => {
    const api = fakeApi(async (req) => {
      await new Promise((r) => setTimeout(r, 5));
      return ok(req);
    });
    const client = new DealApiClient(clientOptions(api.fetch));
    await Promise.all(Array.from({ length: 200 }, () => client.deals.countBreakdown()));
    expect(api.tokenCount).toBe(1);
    expect(api.authorizeCount).toBe(1);
  });

  test('caches the token until shortly before expiry, then refreshes', async () => {
    let now = 1_000_000;
    const api = fakeApi(ok, { expiresIn: 600 });
    const client = new DealApiClient({ ...clientOptions(api.fetch), now: () => now });
    await client.deals.countBreakdown();
    now += 500_000; // 100 s before expiry: still good
    await client.deals.countBreakdown();
    expect(api.tokenCount).toBe(1);
    now += 50_000; // within the 60 s refresh margin
    await client.deals.countBreakdown();
    expect(api.tokenCount).toBe(2);
  });

  test('wrong credentials are never retried, and later calls fail without asking again', async () => {
    const api = fakeApi((req) =>
      req.url.pathname === '/oauth/token'
        ? json({ error: 'invalid_grant', error_description: 'Wrong email or password.' }, 403)
        : ok(req),
    );
    const client = new DealApiClient(clientOptions(api.fetch));
    const err = await caught(client.deals.countBreakdown());
    expect(err).toBeInstanceOf(InvalidGrantError);
    expect(err).toBeInstanceOf(AuthenticationError);
    await caught(client.deals.countBreakdown());
    expect(api.tokenCount).toBe(1);
  });

  test('a refused client id is an AuthenticationError', async () => {
    const api = fakeApi((req) =>
      req.url.pathname === '/oauth/token' ? json({ error: 'access_denied' }, 401) : ok(req),
    );
    const err = await caught(new DealApiClient(clientOptions(api.fetch)).deals.countBreakdown());
    expect(err).toBeInstanceOf(AuthenticationError);
    expect(err).not.toBeInstanceOf(InvalidGrantError);
    expect(err.code).toBe('access_denied');
  });

  test('the local budget fails fast before the service would refuse (9 attempts per 5 minutes)', async () => {
    let now = 0;
    // Every user token is refused, so every call needs a new access token.
    const api = fakeApi((req) => (req.url.pathname.startsWith('/v1/deals') ? json({ message: 'no' }, 401) : PASS()), {
      expiresIn: 1,
    });
    const client = new DealApiClient({ ...clientOptions(api.fetch), now: () => now, refreshSkewMs: 1_000 });
    for (let i = 0; i < 12; i++) {
      await caught(client.deals.countBreakdown());
      now += 1_000;
    }
    expect(api.tokenCount).toBe(9);
    const err = await caught(client.deals.countBreakdown());
    expect(err).toBeInstanceOf(AuthAttemptsExhaustedError);
    expect(err.attempts).toBe(0);
    expect(err.retryAfterMs).toBeGreaterThan(0);
    expect(err.retryAfterMs).toBeLessThanOrEqual(300_000);
    now += 300_000;
    await caught(client.deals.countBreakdown());
    expect(api.tokenCount).toBeGreaterThan(9);
  });

  test('the identity provider saying too_many_attempts is AuthAttemptsExhaustedError with its delay, not retried', async () => {
    const api = fakeApi((req) =>
      req.url.pathname === '/oauth/token'
        ? json({ error: 'too_many_attempts' }, 429, { 'retry-after': '120' })
        : ok(req),
    );
    const client = new DealApiClient(clientOptions(api.fetch));
    const err = await caught(client.deals.countBreakdown());
    expect(err).toBeInstanceOf(AuthAttemptsExhaustedError);
    expect(err.retryAfterMs).toBe(120_000);
    await caught(client.deals.countBreakdown());
    expect(api.tokenCount).toBe(1);
  });

  test('any other 429 of the identity provider (a rate limiter, with Retry-After) is retried, not a lock-out', async () => {
    let refused = 0;
    const api = fakeApi((req) =>
      req.url.pathname === '/oauth/token' && refused++ < 2
        ? json({ message: 'slow down', code: 'RATE_LIMITED' }, 429, { 'retry-after': '0' })
        : ok(req),
    );
    await new DealApiClient(clientOptions(api.fetch)).deals.countBreakdown();
    expect(api.tokenCount).toBe(3);
  });

  test('uses and fills a token cache', async () => {
    const saved: CachedToken[] = [];
    const api = fakeApi(ok);
    const cache = {
      load: () => ({ token: 'CACHED-TOKEN-cccc', expiresAt: Date.now() + 3_600_000 }),
      save: (t: CachedToken) => void saved.push(t),
    };
    await new DealApiClient({ ...clientOptions(api.fetch), tokenCache: cache }).deals.countBreakdown();
    expect(api.tokenCount).toBe(0);
    expect(api.api()[0].headers.get('authorization')).toBe('Bearer CACHED-TOKEN-cccc');

    const api2 = fakeApi(ok);
    await new DealApiClient({
      ...clientOptions(api2.fetch),
      tokenCache: {
        load: () => ({ token: 'OLD-TOKEN', expiresAt: Date.now() - 1 }),
        save: (t: CachedToken) => void saved.push(t),
      },
    }).deals.countBreakdown();
    expect(api2.tokenCount).toBe(1);
    expect(saved.map((s) => s.token)).toEqual(['USER-TOKEN-bbbb']);
  });
});
