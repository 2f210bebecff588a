import { afterAll, describe, expect, test } from 'vitest';
import { PASSWORD_REALM_GRANT, REALM, passwordRealmForm } from '../../src/simulator/index.js';
import { COMPANY, DSP, api, clock, inProcess, login, overHttp, sim, type Fetcher } from './helpers.js';

const listeners: Array<() => Promise<void>> = [];
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
    for (const form of [passwordRealmForm({ ...COMPANY, password: 'nope' }), passwordRealmForm({ ...COMPANY, username: 'ghost@x.test' })]) {
      const res = await token(f, form);
      expect(res.status).toBe(403);
      expect(await res.json()).toMatchObject({ error: 'invalid_grant' });
    }
  });

  test('an unknown client gets 401 access_denied and a bad secret 401 invalid_client', async () => {
    const f = await transport(kind, sim());
    const unknown = await token(f, passwordRealmForm({ ...COMPANY, clientId: 'who' }));
    expect(unknown.status).toBe(401);
    expect(await unknown.json()).toMatchObject({ error: 'access_denied' });
    const badSecret = await token(f, passwordRealmForm({ ...COMPANY, clientSecret: 'wrong' }));
    expect(badSecret.status).toBe(401);
    expect(await badSecret.json()).toMatchObject({ error: 'invalid_client' });
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
    const res = await token(f, new URLSearchParams({ grant_type: 'client_credentials', client_id: COMPANY.clientId, client_secret: COMPANY.clientSecret, audience: s.audience }));
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ expires_in: 600, token_type: 'Bearer' });
  });

  test('more than 10 attempts in 5 minutes for one user get 429 too_many_attempts with Retry-After', async () => {
    const c = clock();
    const f = await transport(kind, sim({ now: c.now }));
    for (let i = 0; i < 10; i++) expect((await token(f, passwordRealmForm({ ...COMPANY, password: `bad${i}` }))).status).toBe(403);
    const refused = await token(f, passwordRealmForm(COMPANY));
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ error: 'too_many_attempts' });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(300);
    // Another user is not affected; the same user may try again once the window has passed.
    expect((await token(f, passwordRealmForm(DSP))).status).toBe(200);
    c.advance(5 * 60_000 + 1);
    expect((await token(f, passwordRealmForm(COMPANY))).status).toBe(200);
  });
});

describe('tokens', () => {
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
