/**
 * The route definitions of the auth routes (routes/auth.ts, login steps 1 and 2) and of the document itself:
 * what the OpenAPI document says about them. The token endpoint's refusals are described generically: which of
 * 401 and 403 a refused credential gets is the identity provider's business, not a contract to build on.
 */
import { DEFAULT_REALM, PASSWORD_REALM_GRANT } from '../../deals/rules/index.js';
import type { JsonSchema, OperationDef } from './operation.js';

/** POST /oauth/token. */
export const GET_TOKEN: OperationDef = {
  operationId: 'requestAccessToken',
  method: 'post',
  path: '/oauth/token',
  tag: 'auth',
  summary: 'Request an access token (step 1 of the login)',
  description:
    'The identity provider’s token endpoint: the password-realm grant (a user) or client credentials ' +
    '(600 s tokens). ' +
    'Form-encoded; a JSON object with the same fields is accepted too. At most 10 attempts per 5 minutes.',
  auth: 'none',
  body: {
    required: true,
    description: 'The grant, form-encoded (or the same fields as a JSON object).',
    schema: { $ref: '#/components/schemas/TokenRequest' },
    mediaTypes: ['application/x-www-form-urlencoded', 'application/json'],
  },
  responses: {
    200: { description: 'the access token', body: { ref: 'TokenResponse' }, headers: ['Cache-Control'] },
    400: {
      description: 'a malformed request: a missing field, an unknown grant type or realm',
      body: { ref: 'OAuthError' },
    },
    401: { description: 'the client or user credentials are refused', body: { ref: 'OAuthError' } },
    403: { description: 'the credentials or the audience are refused', body: { ref: 'OAuthError' } },
    429: {
      description: 'too many attempts (error too_many_attempts), or an injected RATE_LIMITED',
      body: { anyOf: ['OAuthError', 'Error'] },
      headers: ['Retry-After'],
    },
  },
};

/** GET /authorize. */
export const GET_USER_TOKEN: OperationDef = {
  operationId: 'requestUserToken',
  method: 'get',
  path: '/authorize',
  tag: 'auth',
  summary: 'Exchange the access token for a user token (step 2 of the login)',
  description: 'With the access token as Bearer, answers the user token alone, as text; every other call needs it.',
  auth: 'access',
  responses: { 200: { description: 'the user token', body: 'text', headers: ['Cache-Control'] } },
};

/** GET /openapi.json. */
export const GET_DOCUMENT: OperationDef = {
  operationId: 'getOpenApiDocument',
  method: 'get',
  path: '/openapi.json',
  tag: 'meta',
  summary: 'This OpenAPI document',
  description: 'The OpenAPI 3.1 document of the simulator, generated from the rules it validates with.',
  auth: 'none',
  responses: { 200: { description: 'the document', body: 'json' } },
};

const field = (description: string, extra: JsonSchema = {}): JsonSchema => ({
  type: 'string',
  minLength: 1,
  description,
  ...extra,
});

/** The token request: one branch per grant type, each with its required fields. */
export function tokenRequestSchema(audience: string): JsonSchema {
  const common = {
    audience: field('the API’s audience', { const: audience }),
    client_id: field('the client id'),
    client_secret: field('the client secret', { format: 'password' }),
  };
  return {
    oneOf: [
      {
        title: 'PasswordRealmGrant',
        type: 'object',
        required: ['grant_type', 'realm', 'username', 'password', 'client_id', 'client_secret', 'audience'],
        properties: {
          grant_type: { type: 'string', const: PASSWORD_REALM_GRANT },
          realm: { type: 'string', const: DEFAULT_REALM },
          username: field('the user’s login, in any letter case'),
          password: field('the user’s password', { format: 'password' }),
          ...common,
        },
      },
      {
        title: 'ClientCredentialsGrant',
        type: 'object',
        required: ['grant_type', 'client_id', 'client_secret', 'audience'],
        properties: { grant_type: { type: 'string', const: 'client_credentials' }, ...common },
      },
    ],
  };
}
