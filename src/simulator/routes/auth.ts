/**
 * The auth routes: the identity provider's token endpoint (step 1), the user-token exchange (step 2),
 * and the middleware that makes every later route need a user token (step 3). See docs/deal-rules.md#authentication.
 * The token endpoint takes anyone's requests: its body is capped and only its known fields are read, and every
 * request counts against the authentication limit (docs/simulator.md, "Authentication limit").
 */
import type { Context, Hono, MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { DEFAULT_REALM, PASSWORD_REALM_GRANT } from '../../deals/rules/index.js';
import { addressKey, sameSecret } from '../auth.js';
import type { SimulatorUser } from '../users.js';
import type { ApiEnv, AppContext } from './context.js';

/** The one answer to a password-realm request whose client secret, username or password is wrong. */
const REFUSED_LOGIN = { error: 'invalid_grant', error_description: 'Wrong email, password or client credentials.' };
/** The one answer to a client-credentials request whose client id or secret is wrong. */
const REFUSED_CLIENT = { error: 'access_denied', error_description: 'Unauthorized' };

/**
 * Largest token request body read: a real one is a few hundred bytes. Larger ones are refused unread, so that a
 * 1 MB body of 90,000 keys costs nothing before `grant_type` is read (docs/simulator.md "Authentication limit").
 */
export const MAX_TOKEN_BODY_BYTES = 16 * 1024;

/** The fields a token request may carry: nothing else of its body is read. */
const TOKEN_FIELDS = ['grant_type', 'client_id', 'client_secret', 'username', 'password', 'realm', 'audience'];

/** The token request's fields as text, from a JSON or form body already within its size cap; null when not JSON. */
function tokenForm(type: string, text: string): Record<string, string> | null {
  if (!type.includes('application/json')) {
    const params = new URLSearchParams(text);
    const form: Record<string, string> = {};
    for (const k of TOKEN_FIELDS) {
      const v = params.get(k);
      if (v !== null) form[k] = v;
    }
    return form;
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return null;
  }
  const form: Record<string, string> = {};
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return form;
  for (const k of TOKEN_FIELDS) {
    const v = (raw as Record<string, unknown>)[k];
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') form[k] = String(v);
  }
  return form;
}

/** Registers POST /oauth/token and GET /authorize on `api`; neither needs a user token. */
export function registerTokenRoutes(api: Hono<ApiEnv>, ctx: AppContext): void {
  const { auth } = ctx;

  // --- Login step 1: the identity provider's token endpoint. -------------------------------------------------
  // Every refusal counts against the caller's address (docs/simulator.md, "Authentication limit"), a body over its
  // cap included; an address over its limit is refused before its body is read.
  const refuse = (c: Context<ApiEnv>, address: string, status: 400 | 401 | 403 | 413, body: object) => {
    auth.failed(address);
    return c.json(body, status);
  };
  const tooMany = (c: Context<ApiEnv>, wait: number) => {
    c.header('Retry-After', String(wait));
    const description = `Too many authentication attempts; retry in ${wait} s`;
    return c.json({ error: 'too_many_attempts', error_description: description }, 429);
  };
  api.post(
    '/oauth/token',
    async (c, next) => {
      const wait = auth.addressWait(addressKey(c.env?.remoteAddress));
      if (wait !== null) return tooMany(c, wait);
      await next();
    },
    bodyLimit({
      maxSize: MAX_TOKEN_BODY_BYTES,
      onError: (raw) => {
        const c = raw as Context<ApiEnv>;
        c.header('Connection', 'close'); // the rest of the body would still arrive on this connection
        // The body every route answers a 413 with (routes/operation.ts, SHARED_RESPONSES), at this route's cap.
        const message = `The request body is larger than ${MAX_TOKEN_BODY_BYTES} bytes`;
        return refuse(c, addressKey(c.env?.remoteAddress), 413, { message, code: 'PAYLOAD_TOO_LARGE' });
      },
    }),
    async (c) => {
      const address = addressKey(c.env?.remoteAddress);
      const type = (c.req.header('content-type') ?? '').toLowerCase();
      const form = tokenForm(type, await c.req.text());
      if (!form)
        return refuse(c, address, 400, { error: 'invalid_request', error_description: 'The body is not valid JSON' });
      const grant = form.grant_type;
      if (!grant)
        return refuse(c, address, 400, {
          error: 'invalid_request',
          error_description: 'Missing required parameter: grant_type',
        });
      if (grant !== PASSWORD_REALM_GRANT && grant !== 'client_credentials') {
        const error_description = `Unsupported grant type: ${grant.slice(0, 100)}`;
        return refuse(c, address, 400, { error: 'unsupported_grant_type', error_description });
      }
      const required =
        grant === PASSWORD_REALM_GRANT
          ? ['client_id', 'client_secret', 'username', 'password', 'realm', 'audience']
          : ['client_id', 'client_secret', 'audience'];
      const missing = required.find((k) => !form[k]);
      if (missing)
        return refuse(c, address, 400, {
          error: 'invalid_request',
          error_description: `Missing required parameter: ${missing}`,
        });

      // What holds no secret is checked first, so its answer says nothing about one.
      if (form.audience !== ctx.audience) {
        const error_description = `Service not found: ${form.audience.slice(0, 200)}`;
        return refuse(c, address, 403, { error: 'access_denied', error_description });
      }
      if (grant === PASSWORD_REALM_GRANT && form.realm !== DEFAULT_REALM) {
        const error_description = `Unknown realm: ${form.realm.slice(0, 200)}`;
        return refuse(c, address, 400, { error: 'invalid_request', error_description });
      }

      // The service's limit: 10 attempts per 5 minutes per client id and user, successful or not, so a client that
      // logs in on every command is refused here as it would be there; a limited caller is refused unchecked.
      const login = auth.loginKey(form.client_id, grant === PASSWORD_REALM_GRANT ? form.username : undefined);
      const wait = auth.attemptWait(login, address);
      if (wait !== null) return tooMany(c, wait);
      auth.attempted(login);
      // Every secret is compared whatever the others gave, and any mismatch gets one answer: a right client secret
      // with an unknown user must not read differently from a wrong one.
      const clientOk = auth.clientSecretMatches(form.client_id, form.client_secret);
      let user: SimulatorUser | undefined;
      let ttl = auth.limits.tokenTtlSeconds;
      if (grant === PASSWORD_REALM_GRANT) {
        user = auth.user(form.username);
        const loginOk = sameLogin(user, form.password) && user?.clientId === form.client_id;
        if (!(clientOk && loginOk)) return refuse(c, address, 403, REFUSED_LOGIN);
      } else {
        if (!clientOk) return refuse(c, address, 401, REFUSED_CLIENT);
        // The client-credentials flavour maps the client to its first user (600 s tokens).
        user = auth.users.find((u) => u.clientId === form.client_id);
        ttl = auth.limits.clientCredentialsTtlSeconds;
      }
      const token = auth.issue('access', user!, ttl);
      c.header('Cache-Control', 'no-store');
      return c.json({ access_token: token, expires_in: ttl, token_type: 'Bearer' });
    },
  );

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
