/**
 * The auth routes (spec 5): the identity provider's token endpoint (step 1), the user-token exchange (step 2),
 * and the middleware that makes every later route need a user token (step 3).
 */
import type { Hono, MiddlewareHandler } from 'hono';
import { PASSWORD_REALM_GRANT, REALM, sameSecret } from '../auth.js';
import type { SimulatorUser } from '../users.js';
import type { ApiEnv, AppContext } from './context.js';

/** Registers POST /oauth/token and GET /authorize on `api`; neither needs a user token. */
export function registerTokenRoutes(api: Hono<ApiEnv>, ctx: AppContext): void {
  const { auth } = ctx;

  // --- Spec 5 step 1: the identity provider's token endpoint. -------------------------------------------------
  api.post('/oauth/token', async (c) => {
    const type = (c.req.header('content-type') ?? '').toLowerCase();
    const text = await c.req.text();
    let form: Record<string, string>;
    if (type.includes('application/json')) {
      try {
        const raw = JSON.parse(text) as Record<string, unknown>;
        form = Object.fromEntries(Object.entries(raw ?? {}).map(([k, v]) => [k, String(v)]));
      } catch {
        return c.json({ error: 'invalid_request', error_description: 'The body is not valid JSON' }, 400);
      }
    } else {
      form = Object.fromEntries(new URLSearchParams(text));
    }
    const grant = form.grant_type;
    if (!grant) return c.json({ error: 'invalid_request', error_description: 'Missing required parameter: grant_type' }, 400);
    if (grant !== PASSWORD_REALM_GRANT && grant !== 'client_credentials') {
      return c.json({ error: 'unsupported_grant_type', error_description: `Unsupported grant type: ${grant}` }, 400);
    }
    const required = grant === PASSWORD_REALM_GRANT
      ? ['client_id', 'client_secret', 'username', 'password', 'realm', 'audience']
      : ['client_id', 'client_secret', 'audience'];
    const missing = required.find((k) => !form[k]);
    if (missing) return c.json({ error: 'invalid_request', error_description: `Missing required parameter: ${missing}` }, 400);

    // Spec 5 / 8: 10 attempts per 5 minutes per user, counted whether or not they succeed.
    const key = grant === PASSWORD_REALM_GRANT ? `user:${form.username.toLowerCase()}` : `client:${form.client_id}`;
    const wait = auth.countAttempt(key);
    if (wait !== null) {
      c.header('Retry-After', String(wait));
      return c.json({ error: 'too_many_attempts', error_description: `Too many authentication attempts; retry in ${wait} s` }, 429);
    }
    if (!auth.knowsClient(form.client_id)) return c.json({ error: 'access_denied', error_description: 'Unauthorized' }, 401);
    if (!auth.clientSecretMatches(form.client_id, form.client_secret)) {
      return c.json({ error: 'invalid_client', error_description: 'Client authentication failed' }, 401);
    }
    if (form.audience !== ctx.audience) {
      return c.json({ error: 'access_denied', error_description: `Service not found: ${form.audience}` }, 403);
    }
    let user: SimulatorUser | undefined;
    let ttl = auth.limits.tokenTtlSeconds;
    if (grant === PASSWORD_REALM_GRANT) {
      if (form.realm !== REALM) return c.json({ error: 'invalid_request', error_description: `Unknown realm: ${form.realm}` }, 400);
      user = auth.user(form.username);
      const good = !!user && user.clientId === form.client_id && sameLogin(user, form.password);
      if (!good) return c.json({ error: 'invalid_grant', error_description: 'Wrong email or password.' }, 403);
    } else {
      // The client-credentials flavour maps the client to its first user (domain notes: 600 s tokens).
      user = auth.users.find((u) => u.clientId === form.client_id);
      ttl = auth.limits.clientCredentialsTtlSeconds;
    }
    const token = auth.issue('access', user!, ttl);
    c.header('Cache-Control', 'no-store');
    return c.json({ access_token: token, expires_in: ttl, token_type: 'Bearer' });
  });

  const sameLogin = (user: SimulatorUser, password: string) => sameSecret(user.password, password);

  // --- Spec 5 step 2: the user token. ---------------------------------------------------------------------------
  api.get('/authorize', (c) => {
    const r = auth.check(c.req.header('authorization'), 'access');
    if (!r.ok) {
      c.header('WWW-Authenticate', 'Bearer error="invalid_token"');
      return c.json({ message: r.message, code: r.code }, 401);
    }
    const token = auth.issue('user', r.user, auth.limits.tokenTtlSeconds);
    c.header('Cache-Control', 'no-store');
    return c.text(token);
  });
}

/** The middleware every other call passes: a valid user token (spec 5 step 3), whose user it sets on the context. */
export function requireUserToken(ctx: AppContext): MiddlewareHandler<ApiEnv> {
  const { auth } = ctx;
  return async (c, next) => {
    const r = auth.check(c.req.header('authorization'), 'user');
    if (!r.ok) {
      c.header('WWW-Authenticate', 'Bearer error="invalid_token"');
      return c.json({ message: r.message, code: r.code }, 401);
    }
    c.set('user', r.user);
    await next();
  };
}
