import { describe, expect, test } from 'vitest';
import { inspect } from 'node:util';
import {
  AuthAttemptsExhaustedError,
  AuthenticationError,
  ConnectionError,
  CreationQuotaExceededError,
  DealApiClient,
  DealApiError,
  ForbiddenError,
  NotFoundError,
  PayloadTooLargeError,
  QuotaExceededError,
  RateLimitedError,
  ServerError,
  TimeoutError,
  UpdateQuotaExceededError,
  ValidationError,
} from '../../../src/deals/index.js';
import { Redactor } from '../../../src/deals/client/redact.js';
import { mapApiError } from '../../../src/deals/client/error-mapping.js';
import { PASS, SECRETS, clientOptions, connectionRefused, connectionReset, fakeApi, json, caught } from './fake.js';

const VALID = {
  name: 'Spring',
  isActive: true,
  beginDate: null,
  endDate: null,
  currency: 'EUR',
  pricingModel: 1,
  price: 2.5,
  minCompanyVendorCost: 0.1,
  buyerIds: [1],
  countryCodes: ['FR'],
};
const DEAL = { id: 7, dealId: 'EQ-7', ...VALID };

describe('retries', () => {
  test('retries a GET on 503, 502, 504, 408 and a dropped connection, then succeeds', async () => {
    const answers = [json({}, 503), json({}, 502), connectionReset(), json({}, 504), json({}, 408), json(DEAL)];
    const api = fakeApi((req) =>
      req.url.pathname.includes('/oauth') || req.url.pathname.endsWith('/authorize') ? PASS() : answers.shift()!,
    );
    const client = new DealApiClient({
      ...clientOptions(api.fetch),
      retries: { maxRetries: 5, baseDelayMs: 1, maxDelayMs: 2 },
    });
    expect(await client.deals.get(7)).toEqual(DEAL);
    expect(api.api()).toHaveLength(6);
  });

  test('gives up after maxRetries with the last error, naming method and path', async () => {
    const api = fakeApi((req) => (req.url.pathname.startsWith('/v1/deals') ? json({ message: 'down' }, 503) : PASS()));
    const err = await caught(new DealApiClient(clientOptions(api.fetch)).deals.get(7));
    expect(err).toBeInstanceOf(ServerError);
    expect(err.message).toBe('GET /v1/deals/7 failed with 503 Service Unavailable: down');
    expect(err.attempts).toBe(4);
    expect(api.api()).toHaveLength(4);
  });

  test('honours Retry-After on a 429 and waits at least that long', async () => {
    let n = 0;
    const api = fakeApi((req) =>
      req.url.pathname.startsWith('/v1/deals')
        ? n++ === 0
          ? json({ message: 'slow down' }, 429, { 'retry-after': '1' })
          : json(DEAL)
        : PASS(),
    );
    const client = new DealApiClient(clientOptions(api.fetch));
    await client.authenticate();
    const t0 = Date.now();
    await client.deals.get(7);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(990);
  });

  test('raises RateLimitedError at once when Retry-After exceeds the cap', async () => {
    const api = fakeApi((req) =>
      req.url.pathname.startsWith('/v1/deals') ? json({ message: 'later' }, 429, { 'retry-after': '120' }) : PASS(),
    );
    const err = await caught(new DealApiClient(clientOptions(api.fetch)).deals.get(7));
    expect(err).toBeInstanceOf(RateLimitedError);
    expect(err.retryAfterMs).toBe(120_000);
    expect(api.api()).toHaveLength(1);
  });

  test('never retries a create after a 503 or a dropped connection (it may have reached the service)', async () => {
    for (const answer of [() => json({}, 503), () => connectionReset(), () => json({}, 502)]) {
      const api = fakeApi((req) => (req.url.pathname === '/v1/deals' ? answer() : PASS()));
      const err = await caught(new DealApiClient(clientOptions(api.fetch)).deals.create(VALID));
      expect(err).toBeInstanceOf(DealApiError);
      expect(api.api().filter((r) => r.method === 'POST')).toHaveLength(1);
    }
  });

  test('retries a create refused before any connection, or rate limited with 429', async () => {
    const answers: (() => Response | Error)[] = [
      connectionRefused,
      () => json({ message: 'slow' }, 429, { 'retry-after': '0' }),
      () => json({ id: 9 }, 201, { location: '/v1/deals/9', 'x-historyid': 'h-1' }),
    ];
    const api = fakeApi((req) => (req.url.pathname === '/v1/deals' ? answers.shift()!() : PASS()));
    const created = await new DealApiClient(clientOptions(api.fetch)).deals.create(VALID);
    expect(created).toMatchObject({ id: 9, location: 'https://api.test/v1/deals/9', historyId: 'h-1' });
    expect(api.api()).toHaveLength(3);
  });

  test('does not retry quota errors', async () => {
    const api = fakeApi((req) =>
      req.url.pathname === '/v1/deals'
        ? json({ message: 'quota', code: 'CREATION_QUOTA_EXCEEDED' }, 429, { 'retry-after': '1' })
        : PASS(),
    );
    const err = await caught(new DealApiClient(clientOptions(api.fetch)).deals.create(VALID));
    expect(err).toBeInstanceOf(CreationQuotaExceededError);
    expect(err).toBeInstanceOf(QuotaExceededError);
    expect(err.quota).toBe('creation');
    expect(api.api()).toHaveLength(1);
  });

  test('times out an attempt and raises TimeoutError after the retries', async () => {
    const api = fakeApi(async (req) => {
      if (!req.url.pathname.startsWith('/v1/deals')) return PASS();
      await new Promise((r) => setTimeout(r, 200));
      return json(DEAL);
    });
    const err = await caught(
      new DealApiClient({
        ...clientOptions(api.fetch),
        timeoutMs: 20,
        retries: { maxRetries: 1, baseDelayMs: 1 },
      }).deals.get(7),
    );
    expect(err).toBeInstanceOf(TimeoutError);
    expect(err.message).toContain('timed out after 20 ms');
    expect(api.api()).toHaveLength(2);
  });

  test('a user abort stops the call and its retries', async () => {
    const api = fakeApi((req) => (req.url.pathname.startsWith('/v1/deals') ? json({}, 503) : PASS()));
    const client = new DealApiClient({
      ...clientOptions(api.fetch),
      retries: { maxRetries: 5, baseDelayMs: 1000, maxDelayMs: 1000 },
      random: () => 1,
    });
    const ac = new AbortController();
    setTimeout(() => ac.abort(new Error('stop')), 50);
    const err = await caught(client.deals.get(7, { signal: ac.signal }));
    expect(err.message).toBe('stop');
    expect(api.api()).toHaveLength(1);
  });
});

describe('error mapping', () => {
  const cases: [number, Record<string, unknown>, abstract new (...args: never[]) => Error][] = [
    [400, { message: 'bad', errors: [{ field: 'price', message: 'must be a number' }] }, ValidationError],
    [401, { message: 'no' }, AuthenticationError],
    [403, { message: 'DSP callers may not' }, ForbiddenError],
    [404, { message: 'no deal' }, NotFoundError],
    [413, { message: 'too big' }, PayloadTooLargeError],
    [429, { message: 'q', code: 'UPDATE_QUOTA_EXCEEDED' }, UpdateQuotaExceededError],
    [429, { message: 'q', code: 'TOO_MANY_AUTH_ATTEMPTS' }, AuthAttemptsExhaustedError],
    [500, { message: 'boom' }, ServerError],
  ];
  for (const [status, body, cls] of cases) {
    test(`maps ${status} ${body.code ?? ''} to ${cls.name}`, async () => {
      const api = fakeApi((req) => (req.url.pathname.startsWith('/v1/deals') ? json(body, status) : PASS()));
      const err = await caught(new DealApiClient({ ...clientOptions(api.fetch), retries: 0 }).deals.get(7));
      expect(err).toBeInstanceOf(cls);
      expect(err).toBeInstanceOf(DealApiError);
      expect(err.status).toBe(status);
      expect(err.name).toBe(cls.name);
      if (status === 400) expect(err.issues).toEqual([{ path: 'price', message: 'must be a number' }]);
    });
  }

  test('a connection that was never made is a ConnectionError that did not reach the service', async () => {
    const api = fakeApi(() => connectionRefused());
    const err = await caught(new DealApiClient({ ...clientOptions(api.fetch), retries: 0 }).deals.get(7));
    expect(err).toBeInstanceOf(ConnectionError);
    expect(err.mayHaveReachedServer).toBe(false);
    expect(err.cause).toBeInstanceOf(TypeError);
  });
});

describe('401 handling', () => {
  test('a 401 triggers one refresh and one replay', async () => {
    let n = 0;
    const api = fakeApi((req) =>
      req.url.pathname.startsWith('/v1/deals') ? (n++ === 0 ? json({ message: 'expired' }, 401) : json(DEAL)) : PASS(),
    );
    const client = new DealApiClient(clientOptions(api.fetch));
    expect(await client.deals.get(7)).toEqual(DEAL);
    expect(api.authorizeCount).toBe(2);
    expect(api.tokenCount).toBe(1); // the access token is still good: only the user token is renewed
  });

  test('a second 401 is final, never a loop', async () => {
    const api = fakeApi((req) => (req.url.pathname.startsWith('/v1/deals') ? json({ message: 'no' }, 401) : PASS()));
    const err = await caught(new DealApiClient(clientOptions(api.fetch)).deals.get(7));
    expect(err).toBeInstanceOf(AuthenticationError);
    expect(api.api()).toHaveLength(2);
  });
});

describe('redaction', () => {
  test('errors, logs, inspect and JSON of client and errors hold no secret or token', async () => {
    const lines: string[] = [];
    const logger = {
      debug: (m: string) => lines.push(m),
      info: (m: string) => lines.push(m),
      warn: (m: string) => lines.push(m),
    };
    // A hostile service that echoes every header and body into its errors and responses.
    const echoing = (mode: 'throw' | 'respond') =>
      fakeApi((req) => {
        if (!req.url.pathname.startsWith('/v1/deals')) return PASS();
        const echo = `${[...req.headers].join(' ')} ${req.body} ${SECRETS.password} ${SECRETS.clientSecret}`;
        return mode === 'throw'
          ? Object.assign(new TypeError(`fetch failed: ${echo}`), { cause: new Error(echo) })
          : json({ message: echo }, 500);
      });
    const outputs: string[] = [];
    for (const mode of ['throw', 'respond'] as const) {
      const client = new DealApiClient({
        ...clientOptions(echoing(mode).fetch),
        logger,
        retries: { maxRetries: 1, baseDelayMs: 1 },
      });
      const err = await caught(client.deals.get(7));
      expect(err).toBeInstanceOf(mode === 'throw' ? ConnectionError : ServerError);
      if (mode === 'throw') expect(err.cause).toBeInstanceOf(TypeError);
      outputs.push(
        err.message,
        err.stack,
        inspect(err, { depth: 5, showHidden: true }),
        JSON.stringify(err),
        inspect(client, { showHidden: true, depth: 5 }),
        JSON.stringify(client),
        String(client),
      );
      expect(err.message).toContain('[REDACTED]');
    }
    outputs.push(...lines);
    for (const out of outputs) {
      for (const secret of [SECRETS.password, SECRETS.clientSecret, 'ACCESS-TOKEN-aaaa', 'USER-TOKEN-bbbb'])
        expect(out).not.toContain(secret);
    }
    expect(lines.length).toBeGreaterThan(2);
  });

  test('secrets with special characters are scrubbed in their form-encoded and JSON-escaped spellings too', async () => {
    const password = 'p@ss wörd&x=1"\\/+%';
    const clientSecret = 'sec ret+/=?"\\é';
    // An identity provider that echoes the form it received (and a JSON dump of it) in its error.
    const echoing = fakeApi((req) => {
      if (!req.url.pathname.endsWith('/oauth/token')) return PASS();
      const form = Object.fromEntries(new URLSearchParams(req.body));
      return json(
        {
          error: 'server_error',
          message: `bad request: ${req.body} ${JSON.stringify(form)} ${encodeURIComponent(password)}`,
        },
        500,
      );
    });
    const lines: string[] = [];
    const logger = {
      debug: (m: string) => lines.push(m),
      info: (m: string) => lines.push(m),
      warn: (m: string) => lines.push(m),
    };
    const options = clientOptions(echoing.fetch);
    const client = new DealApiClient({
      ...options,
      credentials: { ...options.credentials, password, clientSecret },
      logger,
      retries: { maxRetries: 0 },
    });
    const err = await caught(client.deals.get(7));
    expect(err).toBeInstanceOf(ServerError);
    expect(err.message).toContain('[REDACTED]');
    const spellings = [password, clientSecret].flatMap((s) => [
      s,
      encodeURIComponent(s),
      new URLSearchParams({ s }).toString().slice(2),
      JSON.stringify(s).slice(1, -1),
    ]);
    for (const out of [err.message, err.stack, inspect(err, { depth: 5 }), JSON.stringify(err), ...lines]) {
      for (const spelling of spellings) expect(out).not.toContain(spelling);
    }
  });
});

describe('error text cut to length', () => {
  const secrets = ['R3p@ss w0rd&=%', 'correct horse battery staple', 'sec+ret/=?"\\é€'];
  const spellingsOf = (s: string) => [
    s,
    encodeURIComponent(s),
    new URLSearchParams({ s }).toString().slice(2),
    JSON.stringify(s).slice(1, -1),
  ];
  /** Every prefix of 3 or more characters of every spelling: none may survive in an error message. */
  const leaks = (text: string) =>
    secrets
      .flatMap(spellingsOf)
      .flatMap((sp) => [...Array(sp.length - 2).keys()].map((i) => sp.slice(0, i + 3)))
      .filter((p) => text.includes(p));

  test('a bearer credential in JSON text is scrubbed and the JSON stays JSON (an escaped quote after it is kept)', () => {
    const redact = new Redactor().redact;
    const body = JSON.stringify({ message: 'missing "Authorization: Bearer <token>" header', seen: 'Bearer abc.def' });
    const scrubbed = redact(body);
    expect(JSON.parse(scrubbed)).toEqual({
      message: 'missing "Authorization: Bearer [REDACTED]" header',
      seen: 'Bearer [REDACTED]',
    });
  });

  test('a secret straddling the 200-character cut of an echoed body is scrubbed whole, at every cut position', () => {
    const redactor = new Redactor();
    for (const s of secrets) redactor.add(s);
    const req = { method: 'POST' as const, url: new URL('https://idp.test/oauth/token'), retry: 'none' as const };
    let checked = 0;
    for (const secret of secrets) {
      for (const spelling of spellingsOf(secret)) {
        for (let start = 200 - spelling.length; start <= 200; start++) {
          const body = `${'x'.repeat(Math.max(0, start - 'password='.length))}password=${spelling}&client_id=abc`;
          const err = mapApiError(
            { status: 502, statusText: 'Bad Gateway', headers: new Headers(), body, attempts: 1 },
            req,
            redactor.redact,
          );
          expect(err).toBeInstanceOf(ServerError);
          expect(leaks(err.message)).toEqual([]);
          expect(err.message).not.toMatch(/\[REDA?C?T?E?D?…/); // the cut never splits the marker
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(200);
  });

  test('an identity provider echoing the token form in a 502 text body leaks no part of the password', async () => {
    for (const password of secrets) {
      const encoded = new URLSearchParams({ s: password }).toString().slice(2);
      for (let inside = 1; inside < encoded.length; inside++) {
        // Padding that puts the cut `inside` characters into the form-encoded password.
        const echo = (body: string) => `${'x'.repeat(200 - inside - body.indexOf(encoded))}${body}`;
        const echoing = fakeApi((req) =>
          req.url.pathname.endsWith('/oauth/token') ? new Response(echo(req.body), { status: 502 }) : PASS(),
        );
        const options = clientOptions(echoing.fetch);
        const client = new DealApiClient({
          ...options,
          credentials: { ...options.credentials, password },
          retries: { maxRetries: 0 },
        });
        const err = await caught(client.deals.get(7));
        expect(err).toBeInstanceOf(ServerError);
        expect(leaks(err.message)).toEqual([]);
      }
    }
  });
});

describe('error messages say each thing once', () => {
  const req = { method: 'POST' as const, url: new URL('https://api.test/v1/deals'), retry: 'none' as const };
  const answer = (body: unknown) =>
    mapApiError({ status: 400, statusText: 'Bad Request', headers: new Headers(), body, attempts: 1 }, req, (s) => s);
  const count = (text: string, part: string) => text.split(part).length - 1;

  test('a 400 whose message restates its field errors names each issue once', () => {
    const err = answer({
      message: 'The deal is invalid: price: must be at least 0 (and 1 more)',
      errors: [
        { field: 'price', message: 'must be at least 0' },
        { field: 'name', message: 'is required' },
      ],
    }) as ValidationError;
    expect(count(err.message, 'must be at least 0')).toBe(1);
    expect(count(err.message, 'is required')).toBe(1);
    expect(err.summary).toBe('POST /v1/deals failed with 400 Bad Request');
  });

  test('a 400 whose message says something else keeps it, once, before the list', () => {
    const err = answer({
      message: 'Deal rejected by policy',
      errors: [{ field: 'price', message: 'too low' }],
    }) as ValidationError;
    expect(err.message).toBe('POST /v1/deals failed with 400 Bad Request: Deal rejected by policy (price: too low)');
    expect(err.summary).toBe('POST /v1/deals failed with 400 Bad Request: Deal rejected by policy');
  });
});
