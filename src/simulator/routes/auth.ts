/**
 * The auth routes: the identity provider's token endpoint (step 1), the user-token exchange (step 2),
 * and the middleware that makes every later route need a user token (step 3). See docs/deal-rules.md#authentication.
 */
import type { Hono, MiddlewareHandler } from 'hono';
import { addressKey, PASSWORD_REALM_GRANT, REALM, sameSecret } from '../auth.js';
import type { SimulatorUser } from '../users.js';
import type { ApiEnv, AppContext } from './context.js';

/** The one answer to a password-realm request whose client secret, username or password is wrong. */
const REFUSED_LOGIN = { error: 'invalid_grant', error_description: 'Wrong email, password or client credentials.' };
/** The one answer to a client-credentials request whose client id or secret is wrong. */
const REFUSED_CLIENT = { error: 'access_denied', error_description: 'Unauthorized' };

/** Registers POST /oauth/token and GET /authorize on `api`; neither needs a user token. */
export function registerTokenRoutes(api: Hono<ApiEnv>, ctx: AppContext): void {
  const { auth } = ctx;

  // --- Login step 1: the identity provider's token endpoint. -------------------------------------------------
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
    if (!grant)
      return c.json({ error: 'invalid_request', error_description: 'Missing required parameter: grant_type' }, 400);
    if (grant !== PASSWORD_REALM_GRANT && grant !== 'client_credentials') {
      return c.json({ error: 'unsupported_grant_type', error_description: `Unsupported grant type: ${grant}` }, 400);
    }
    const required =
      grant === PASSWORD_REALM_GRANT
        ? ['client_id', 'client_secret', 'username', 'password', 'realm', 'audience']
        : ['client_id', 'client_secret', 'audience'];
    const missing = required.find((k) => !form[k]);
    if (missing)
      return c.json({ error: 'invalid_request', error_description: `Missing required parameter: ${missing}` }, 400);

    // What holds no secret is checked first, so its answer says nothing about one.
    if (form.audience !== ctx.audience) {
      return c.json({ error: 'access_denied', error_description: `Service not found: ${form.audience}` }, 403);
    }
    if (grant === PASSWORD_REALM_GRANT && form.realm !== REALM) {
      return c.json({ error: 'invalid_request', error_description: `Unknown realm: ${form.realm}` }, 400);
    }

    // 10 failed attempts per 5 minutes per client id and per source address (docs/simulator.md, "Authentication
    // limit"): never per claimed username, which a guesser would rotate. A limited caller is refused unchecked.
    const address = addressKey(c.env?.remoteAddress);
    const wait = auth.attemptWait(form.client_id, address);
    if (wait !== null) {
      c.header('Retry-After', String(wait));
      const description = `Too many authentication attempts; retry in ${wait} s`;
      return c.json({ error: 'too_many_attempts', error_description: description }, 429);
    }
    // Every secret is compared whatever the others gave, and any mismatch gets one answer: a right client secret
    // with an unknown user must not read differently from a wrong one.
    const clientOk = auth.clientSecretMatches(form.client_id, form.client_secret);
    let user: SimulatorUser | undefined;
    let ttl = auth.limits.tokenTtlSeconds;
    if (grant === PASSWORD_REALM_GRANT) {
      user = auth.user(form.username);
      const loginOk = sameLogin(user, form.password) && user?.clientId === form.client_id;
      if (!(clientOk && loginOk)) {
        auth.attemptFailed(form.client_id, address);
        return c.json(REFUSED_LOGIN, 403);
      }
    } else {
      if (!clientOk) {
        auth.attemptFailed(form.client_id, address);
        return c.json(REFUSED_CLIENT, 401);
      }
      // The client-credentials flavour maps the client to its first user (600 s tokens).
      user = auth.users.find((u) => u.clientId === form.client_id);
      ttl = auth.limits.clientCredentialsTtlSeconds;
    }
    const token = auth.issue('access', user!, ttl);
    c.header('Cache-Control', 'no-store');
    return c.json({ access_token: token, expires_in: ttl, token_type: 'Bearer' });
  });

  // An unknown user costs the same comparison as a known one.
  const sameLogin = (user: SimulatorUser | undefined, password: string) =>
    sameSecret(user?.password ?? '\0unknown', password) && !!user;

  // --- Login step 2: the user token. --------------------------------------------------------------------------
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

/** The middleware every other call passes: a valid user token (login step 3), whose user it sets on the context. */
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
