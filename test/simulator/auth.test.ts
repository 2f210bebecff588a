import { afterAll, describe, expect, test } from 'vitest';
import { request as httpRequest } from 'node:http';
import { addressKey, AttemptLimiter, AuthService } from '../../src/simulator/auth.js';
import type { AuthLimits } from '../../src/simulator/auth.js';
import { passwordRealmForm } from '../../src/simulator/index.js';
import { DEFAULT_REALM as REALM, PASSWORD_REALM_GRANT } from '../../src/deals/index.js';
import { COMPANY, DSP, api, clock, inProcess, login, overHttp, sim, type Fetcher } from './helpers.js';

const listeners: (() => Promise<void>)[] = [];
afterAll(async () => {
  await Promise.all(listeners.map((close) => close()));
});

async function transport(kind: 'in-process' | 'http', s: ReturnType<typeof sim>): Promise<Fetcher> {
  if (kind === 'in-process') return inProcess(s);
  const { url, close } = await s.listen({ port: 0, host: '127.0.0.1' });
  listeners.push(close);
  return overHttp(url);
}

const token = (f: Fetcher, form: URLSearchParams) => f('/oauth/token', { method: 'POST', body: form });
const AUTH_LIMITS: AuthLimits = {
  attempts: 10,
  windowMs: 300_000,
  maxTrackedAddresses: 10_000,
  maxTokens: 10_000,
  tokenTtlSeconds: 36_000,
  clientCredentialsTtlSeconds: 600,
};

describe.each(['in-process', 'http'] as const)('auth (%s)', (kind) => {
  test('the password-realm grant returns a Bearer access token valid 36000 s, and /authorize returns the user token as plain text', async () => {
    const s = sim();
    const f = await transport(kind, s);
    const res = await token(f, passwordRealmForm(COMPANY));
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ expires_in: 36000, token_type: 'Bearer' });
    expect(typeof body.access_token).toBe('string');
    const auth = await f('/authorize', { headers: { authorization: `Bearer ${body.access_token}` } });
    expect(auth.status).toBe(200);
    expect(auth.headers.get('content-type')).toMatch(/text\/plain/);
    const userToken = await auth.text();
    expect(userToken).not.toBe(body.access_token);
    expect((await api(f, userToken)('/countries?limit=1')).status).toBe(200);
  });

  test('wrong username or password is refused with 403 invalid_grant', async () => {
    const f = await transport(kind, sim());
    for (const form of [
      passwordRealmForm({ ...COMPANY, password: 'nope' }),
      passwordRealmForm({ ...COMPANY, username: 'ghost@x.test' }),
    ]) {
      const res = await token(f, form);
      expect(res.status).toBe(403);
      expect(await res.json()).toMatchObject({ error: 'invalid_grant' });
    }
  });

  test('a wrong client id, client secret, username or password all get one answer, status and body alike', async () => {
    const f = await transport(kind, sim({ authLimit: { attempts: 100 } }));
    const answers = new Set<string>();
    for (const wrong of [
      { clientSecret: 'wrong' }, // wrong secret, known user
      { username: 'ghost@x.test' }, // right secret, unknown user: answered 403 where a wrong secret got 401
      { clientSecret: 'wrong', username: 'ghost@x.test' },
      { clientId: 'who' },
      { clientId: 'who', username: 'ghost@x.test' },
      { password: 'nope' },
      { clientId: DSP.clientId, clientSecret: DSP.clientSecret }, // another client's right secret
    ]) {
      const res = await token(f, passwordRealmForm({ ...COMPANY, ...wrong }));
      answers.add(`${res.status} ${await res.text()}`);
    }
    const refusal = { error: 'invalid_grant', error_description: 'Wrong email, password or client credentials.' };
    expect([...answers]).toEqual([`403 ${JSON.stringify(refusal)}`]);
    const s = sim();
    const g = await transport(kind, s);
    const { audience } = s;
    const form = (id: string, secret: string) =>
      new URLSearchParams({ grant_type: 'client_credentials', client_id: id, client_secret: secret, audience });
    const unknownClient = await token(g, form('who', COMPANY.clientSecret));
    const wrongSecret = await token(g, form(COMPANY.clientId, 'wrong'));
    expect([unknownClient.status, await unknownClient.text()]).toEqual([wrongSecret.status, await wrongSecret.text()]);
    expect(unknownClient.status).toBe(401);
  });

  test('a wrong audience, a wrong realm or a missing field is refused', async () => {
    const f = await transport(kind, sim());
    expect((await token(f, passwordRealmForm(COMPANY, 'https://elsewhere'))).status).toBe(403);
    const realm = passwordRealmForm(COMPANY);
    realm.set('realm', 'Other');
    expect((await token(f, realm)).status).toBe(400);
    const missing = passwordRealmForm(COMPANY);
    missing.delete('password');
    const res = await token(f, missing);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error_description: string }).error_description).toMatch(/password/);
  });

  test('the client-credentials grant is accepted as an alternative', async () => {
    const s = sim();
    const f = await transport(kind, s);
    const res = await token(
      f,
      new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: COMPANY.clientId,
        client_secret: COMPANY.clientSecret,
        audience: s.audience,
      }),
    );
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ expires_in: 600, token_type: 'Bearer' });
  });

  test('over 10 failures in 5 minutes get 429 and Retry-After, even for the right password', async () => {
    const c = clock();
    const f = await transport(kind, sim({ now: c.now }));
    for (let i = 0; i < 10; i++)
      expect((await token(f, passwordRealmForm({ ...COMPANY, password: `bad${i}` }))).status).toBe(403);
    const refused = await token(f, passwordRealmForm(COMPANY));
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ error: 'too_many_attempts' });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(300);
    // The window slides: once the failures are 5 minutes old, the right password is accepted again.
    c.advance(5 * 60_000 + 1);
    expect((await token(f, passwordRealmForm(COMPANY))).status).toBe(200);
  });

  test('rotating usernames gets no more guesses: the limit counts client id and address, not the name', async () => {
    const f = await transport(kind, sim());
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++) {
      const guess = passwordRealmForm({ ...COMPANY, username: `guess${i}@x.test`, clientSecret: `guess${i}` });
      statuses.push((await token(f, guess)).status);
    }
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(403));
    expect(new Set(statuses.slice(10))).toEqual(new Set([429]));
  });

  test('every login counts, as the service counts it: the 11th in 5 minutes is refused, another user is not', async () => {
    const c = clock();
    const f = await transport(kind, sim({ now: c.now }));
    // A client that logs in on every command, which the service locks out: the simulator does too.
    for (let i = 0; i < 10; i++) expect((await token(f, passwordRealmForm(COMPANY))).status).toBe(200);
    const refused = await token(f, passwordRealmForm(COMPANY));
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ error: 'too_many_attempts' });
    expect(Number(refused.headers.get('retry-after'))).toBe(300);
    // Successful logins are no failures of the address: another user (another client) still logs in from it.
    expect((await token(f, passwordRealmForm(DSP))).status).toBe(200);
    c.advance(5 * 60_000 + 1);
    expect((await token(f, passwordRealmForm(COMPANY))).status).toBe(200);
  });

  test('a malformed or oversized token request is refused unread past 16 KB, and counts against its address', async () => {
    const f = await transport(kind, sim());
    const huge = JSON.stringify(Object.fromEntries(Array.from({ length: 90_000 }, (_, i) => [`k${i}`, i % 10])));
    const json = { 'content-type': 'application/json' };
    const started = performance.now();
    const tooLarge = await f('/oauth/token', { method: 'POST', headers: json, body: huge });
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(tooLarge.status).toBe(413);
    expect(await tooLarge.json()).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
    const malformed = ['{', '{"grant_type":"nope"}', '[]', JSON.stringify({ grant_type: { a: 1 } })];
    for (const body of malformed)
      expect((await f('/oauth/token', { method: 'POST', headers: json, body })).status).toBe(400);
    for (let i = 0; i < 5; i++) await token(f, new URLSearchParams({ grant_type: 'client_credentials' }));
    // Ten refusals from this address: even the right password waits now.
    expect((await token(f, passwordRealmForm(COMPANY))).status).toBe(429);
  });

  test('a JSON token request is read by its known fields only, whatever else it holds', async () => {
    const s = sim();
    const f = await transport(kind, s);
    const form = Object.fromEntries(passwordRealmForm(COMPANY));
    const extra = Object.fromEntries(Array.from({ length: 400 }, (_, i) => [`k${i}`, { nested: [i] }]));
    const res = await f('/oauth/token', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...extra, ...form }),
    });
    expect(res.status).toBe(200);
  });
});

describe('auth limit over HTTP from several source addresses (127.0.0.x)', () => {
  /** POSTs a token request to `url` from the local address `from`. */
  function tokenFrom(url: string, from: string, form: URLSearchParams): Promise<number> {
    return new Promise((resolve, reject) => {
      const headers = { 'content-type': 'application/x-www-form-urlencoded' };
      const req = httpRequest(`${url}/oauth/token`, { method: 'POST', localAddress: from, headers }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode!));
      });
      req.on('error', reject);
      req.end(form.toString());
    });
  }

  test('failures from one address do not lock out a user of another client from another address', async () => {
    const s = sim();
    const { url, close } = await s.listen({ port: 0, host: '127.0.0.1' });
    listeners.push(close);
    for (let i = 0; i < 10; i++) {
      await tokenFrom(url, '127.0.0.2', passwordRealmForm({ ...COMPANY, username: `x${i}@x.test` }));
    }
    expect(await tokenFrom(url, '127.0.0.2', passwordRealmForm(DSP))).toBe(429);
    expect(await tokenFrom(url, '127.0.0.3', passwordRealmForm(DSP))).toBe(200);
  });

  test('rotating addresses gets no more guesses at one client secret than the client id allows', async () => {
    const s = sim();
    const { url, close } = await s.listen({ port: 0, host: '127.0.0.1' });
    listeners.push(close);
    const statuses: number[] = [];
    for (let i = 0; i < 20; i++) {
      const guess = passwordRealmForm({ ...COMPANY, clientSecret: `guess${i}` });
      statuses.push(await tokenFrom(url, `127.0.0.${10 + i}`, guess));
    }
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(403));
    expect(new Set(statuses.slice(10))).toEqual(new Set([429]));
  });
});

describe('AttemptLimiter (src/simulator/auth.ts)', () => {
  test('remembers at most maxKeys keys under 100,000 distinct ones, and forgets expired keys', () => {
    const c = clock();
    const limiter = new AttemptLimiter(c.now, { attempts: 10, windowMs: 300_000, maxKeys: 1_000 });
    let most = 0;
    for (let i = 0; i < 100_000; i++) {
      limiter.count(`10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`);
      if (i % 10_000 === 0) c.advance(1);
      most = Math.max(most, limiter.size);
    }
    expect(most).toBe(1_000);
    c.advance(300_000);
    limiter.count('192.0.2.1');
    expect(limiter.size).toBe(1);
  });

  test('a key is limited after `attempts` failures in the window, and free again when the first one expires', () => {
    const c = clock();
    const limiter = new AttemptLimiter(c.now, { attempts: 3, windowMs: 60_000, maxKeys: 10 });
    for (let i = 0; i < 3; i++) {
      expect(limiter.waitSeconds('k')).toBeNull();
      limiter.count('k');
      c.advance(10_000);
    }
    expect(limiter.waitSeconds('k')).toBe(30);
    c.advance(30_000);
    expect(limiter.waitSeconds('k')).toBeNull();
  });

  test('addresses are counted as IPv4, IPv4-mapped as IPv4, IPv6 by /64, in-process alone', () => {
    expect(addressKey('203.0.113.7')).toBe('203.0.113.7');
    expect(addressKey('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(addressKey('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:db8:1:2:ffff:ffff:ffff:ffff')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(addressKey('::1')).toBe('0:0:0:0::/64');
    expect(addressKey(undefined)).toBe('in-process');
  });
});

describe('tokens', () => {
  test('at most maxTokens live tokens are kept, the oldest forgotten first', async () => {
    const f = inProcess(sim({ authLimit: { attempts: 1_000, maxTokens: 20 } }));
    const tokens: string[] = [];
    for (let i = 0; i < 30; i++) tokens.push(await login(f));
    // 30 logins issued 60 tokens (access and user): the 20 most recent are kept.
    for (const t of tokens.slice(-10)) expect((await api(f, t)('/countries?limit=1')).status).toBe(200);
    expect((await api(f, tokens[19])('/countries?limit=1')).status).toBe(401);
  });

  test('expired tokens are swept as new ones are issued: 100,000 logins over a day hold no more than live ones', () => {
    const c = clock();
    const limits = { ...AUTH_LIMITS, maxTokens: 1_000_000 };
    const auth = new AuthService([COMPANY], c.now, limits);
    let most = 0;
    for (let i = 0; i < 100_000; i++) {
      auth.issue('access', COMPANY, 600);
      c.advance(1_000); // one a second: 600 live at a time
      most = Math.max(most, auth.tokenCount);
    }
    expect(most).toBeLessThanOrEqual(601);
    const capped = new AuthService([COMPANY], c.now, { ...AUTH_LIMITS, maxTokens: 50 });
    for (let i = 0; i < 1_000; i++) capped.issue('user', COMPANY, 36_000);
    expect(capped.tokenCount).toBe(50);
  });

  test('every API call without a valid user token gets 401', async () => {
    const s = sim();
    const f = inProcess(s);
    expect((await f('/deals')).status).toBe(401);
    expect((await f('/deals', { headers: { authorization: 'Bearer nonsense' } })).status).toBe(401);
    const res = await f('/oauth/token', { method: 'POST', body: passwordRealmForm(COMPANY) });
    const { access_token } = (await res.json()) as { access_token: string };
    const withAccess = await f('/deals', { headers: { authorization: `Bearer ${access_token}` } });
    expect(withAccess.status).toBe(401);
    expect(((await withAccess.json()) as { message: string }).message).toMatch(/user token/);
  });

  test('/authorize refuses a missing, invalid or user token', async () => {
    const f = inProcess(sim());
    expect((await f('/authorize')).status).toBe(401);
    expect((await f('/authorize', { headers: { authorization: 'Bearer x' } })).status).toBe(401);
    const userToken = await login(f);
    expect((await f('/authorize', { headers: { authorization: `Bearer ${userToken}` } })).status).toBe(401);
  });

  test('both tokens expire after 10 hours', async () => {
    const c = clock();
    const f = inProcess(sim({ now: c.now }));
    const res = await f('/oauth/token', { method: 'POST', body: passwordRealmForm(COMPANY) });
    const { access_token } = (await res.json()) as { access_token: string };
    const userToken = await (await f('/authorize', { headers: { authorization: `Bearer ${access_token}` } })).text();
    c.advance(36_000_000 - 1000);
    expect((await api(f, userToken)('/deals')).status).toBe(200);
    c.advance(2000);
    const expired = await api(f, userToken)('/deals');
    expect(expired.status).toBe(401);
    expect(await expired.json()).toMatchObject({ code: 'TOKEN_EXPIRED' });
    expect((await f('/authorize', { headers: { authorization: `Bearer ${access_token}` } })).status).toBe(401);
  });

  test('tokens, passwords and secrets never appear in the request log', async () => {
    const s = sim();
    const f = inProcess(s);
    const t = await login(f);
    await api(f, t)('/deals');
    const log = JSON.stringify(s.requests);
    for (const secret of [COMPANY.password, COMPANY.clientSecret, t]) expect(log).not.toContain(secret);
    expect(s.requests.filter((r) => r.path === '/oauth/token')).toHaveLength(1);
    expect(s.requests.filter((r) => r.path === '/authorize')).toHaveLength(1);
  });

  test('form fields are read form-encoded as Auth0 expects, grant type and realm included', () => {
    const form = passwordRealmForm(COMPANY);
    expect(form.get('grant_type')).toBe(PASSWORD_REALM_GRANT);
    expect(form.get('realm')).toBe(REALM);
  });
});
