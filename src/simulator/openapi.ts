/** The simulator's OpenAPI 3.1 document, generated from the same zod schemas the rules use. */
import { z } from 'zod';
import { DealReadSchema, DealWriteSchema, LOOKUP_ITEM_SCHEMAS, LOOKUP_RESOURCES, DSP_FORBIDDEN_LOOKUPS } from '../deals/rules/index.js';
import { PASSWORD_REALM_GRANT, REALM } from './auth.js';
import { SORT_KEYS, MAX_PAGE_SIZE } from './routes/deal-list.js';

function schemaOf(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const out = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;
  delete out.$schema;
  return out;
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: unknown) => ({ 'application/json': { schema } });
const errorResponse = (description: string) => ({ description, content: json(ref('Error')) });

/** Builds the OpenAPI 3.1 document describing every route of the simulator. */
export function buildOpenApi(audience: string): Record<string, unknown> {
  const lookupSchemas = Object.fromEntries(
    LOOKUP_RESOURCES.map((r) => [`${r[0].toUpperCase()}${r.slice(1)}Item`, schemaOf(LOOKUP_ITEM_SCHEMAS[r], 'output')]),
  );
  const intList = { type: 'string', pattern: '^\\d+(,\\d+)*$', description: 'comma-separated integers' };
  const q = (name: string, schema: unknown, description?: string) => ({ name, in: 'query', required: false, schema, ...(description ? { description } : {}) });
  const idParam = { name: 'id', in: 'path', required: true, schema: { type: 'integer' }, description: 'service-side deal id (field id), not dealId' };
  const common = {
    '401': errorResponse('missing, invalid or expired user token'),
    '429': { ...errorResponse('rate limited; see Retry-After'), headers: { 'Retry-After': { schema: { type: 'integer' } } } },
  };
  const paths: Record<string, unknown> = {
    '/oauth/token': {
      post: {
        summary: 'Token request (spec 5 step 1)',
        security: [],
        requestBody: {
          required: true,
          content: {
            'application/x-www-form-urlencoded': {
              schema: {
                type: 'object',
                required: ['grant_type', 'client_id', 'client_secret', 'audience'],
                properties: {
                  grant_type: { type: 'string', enum: [PASSWORD_REALM_GRANT, 'client_credentials'] },
                  realm: { type: 'string', const: REALM },
                  audience: { type: 'string', const: audience },
                  username: { type: 'string' },
                  password: { type: 'string', format: 'password' },
                  client_id: { type: 'string' },
                  client_secret: { type: 'string', format: 'password' },
                },
              },
            },
          },
        },
        responses: {
          '200': { description: 'access token', content: json(ref('TokenResponse')) },
          '400': { description: 'malformed request', content: json(ref('OAuthError')) },
          '401': { description: 'unknown client or bad secret', content: json(ref('OAuthError')) },
          '403': { description: 'wrong username or password, or unknown audience', content: json(ref('OAuthError')) },
          '429': { description: 'more than 10 attempts in 5 minutes', content: json(ref('OAuthError')) },
        },
      },
    },
    '/authorize': {
      get: {
        summary: 'User token request (spec 5 step 2), with the access token as Bearer',
        responses: { '200': { description: 'the user token alone', content: { 'text/plain': { schema: { type: 'string' } } } }, '401': errorResponse('bad access token') },
      },
    },
    '/deals': {
      get: {
        summary: 'List the caller company’s deals (spec 4.2)',
        parameters: [
          q('createdOrModifiedSince', { type: 'string', format: 'date-time' }),
          q('isArchived', { type: 'boolean' }),
          q('isSoonExpired', { type: 'boolean' }, 'expiring within 7 days'),
          q('isParentDeal', { type: 'boolean' }),
          q('sortBy', { type: 'string', enum: [...SORT_KEYS] }),
          q('sortAsc', { type: 'boolean' }),
          q('metricsBeginDate', { type: 'string', format: 'date-time' }),
          q('metricsEndDate', { type: 'string', format: 'date-time' }),
          ...['buyerIds', 'dspIds', 'partnerIds', 'formatIds', 'platformIds'].map((n) => q(n, intList)),
          q('limit', { type: 'integer', minimum: 1 }, `values above ${MAX_PAGE_SIZE} are clamped to ${MAX_PAGE_SIZE}`),
          q('offset', { type: 'integer', minimum: 0 }),
        ],
        responses: {
          '200': {
            description: 'one page of deals',
            headers: { 'X-Pagination-Total-Count': { schema: { type: 'integer' } }, Link: { schema: { type: 'string' }, description: 'RFC 5988: first, prev, next, last' } },
            content: json({ type: 'array', items: ref('DealRead') }),
          },
          '400': errorResponse('invalid query parameter'),
          ...common,
        },
      },
      post: {
        summary: 'Create a deal (spec 4); 15 per company per UTC day',
        parameters: [{ name: 'X-CopyOfDealId', in: 'header', required: false, schema: { type: 'integer' }, description: 'create as a copy of this deal; body fields override' }],
        requestBody: { required: true, content: json(ref('DealWrite')) },
        responses: {
          '201': {
            description: 'created',
            headers: { Location: { schema: { type: 'string' } }, 'X-HistoryId': { schema: { type: 'integer' } } },
            content: json(ref('DealRead')),
          },
          '400': errorResponse('validation failed or broken JSON'),
          '403': errorResponse('DSP callers cannot set domainListId'),
          '413': errorResponse('body too large'),
          ...common,
        },
      },
    },
    '/deals/countBreakdown': {
      get: { summary: 'Counts of the caller company’s deals by status', responses: { '200': { description: 'counts', content: json(ref('CountBreakdown')) }, ...common } },
    },
    '/deals/{id}': {
      parameters: [idParam],
      get: { summary: 'Read a deal', responses: { '200': { description: 'the deal', content: json(ref('DealRead')) }, '404': errorResponse('no such deal'), ...common } },
      put: {
        summary: 'Replace a deal (spec 4.3): omitted fields reset to defaults; 500 per company per UTC day',
        requestBody: { required: true, content: json(ref('DealWrite')) },
        responses: { '200': { description: 'the updated deal', content: json(ref('DealRead')) }, '400': errorResponse('validation failed'), '404': errorResponse('no such deal'), ...common },
      },
      delete: { summary: 'Delete a deal', responses: { '204': { description: 'deleted' }, '404': errorResponse('no such deal'), ...common } },
    },
    '/deals/{id}/domainlists': {
      parameters: [idParam],
      post: {
        summary: 'Attach a domain list (refused to DSP callers)',
        requestBody: { required: true, content: json({ type: 'object', required: ['domainListId'], additionalProperties: false, properties: { domainListId: { type: 'integer' } } }) },
        responses: { '204': { description: 'attached' }, '400': errorResponse('bad domainListId'), '403': errorResponse('DSP caller'), '404': errorResponse('no such deal'), ...common },
      },
      delete: {
        summary: 'Detach the domain list (refused to DSP callers); an optional body {domainListId} must name the attached list',
        responses: { '204': { description: 'detached' }, '403': errorResponse('DSP caller'), '404': errorResponse('no such deal'), ...common },
      },
    },
  };
  for (const r of LOOKUP_RESOURCES) {
    paths[`/${r}`] = {
      get: {
        summary: `Lookup: ${r} (name matched case-insensitively)${DSP_FORBIDDEN_LOOKUPS.includes(r) ? '; refused to DSP callers' : ''}`,
        parameters: [q('ids', intList), q('extendedSearch', { type: 'string' }), q('limit', { type: 'integer', minimum: 0 }), q('offset', { type: 'integer', minimum: 0 })],
        responses: {
          '200': { description: 'items', content: json({ type: 'array', items: ref(`${r[0].toUpperCase()}${r.slice(1)}Item`) }) },
          ...(DSP_FORBIDDEN_LOOKUPS.includes(r) ? { '403': errorResponse('DSP caller') } : {}),
          ...common,
        },
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Deal management API (eidkit simulator)', version: '1.0.0', description: 'Local simulator of the deal management API. Spec: deal-api.md.' },
    servers: [{ url: '/' }],
    security: [{ bearer: [] }],
    paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'the user token from GET /authorize' } },
      schemas: {
        DealWrite: schemaOf(DealWriteSchema, 'input'),
        DealRead: schemaOf(DealReadSchema, 'output'),
        ...lookupSchemas,
        Error: {
          type: 'object',
          required: ['message'],
          properties: {
            message: { type: 'string' },
            code: { type: 'string' },
            errors: { type: 'array', items: { type: 'object', required: ['field', 'message'], properties: { field: { type: 'string' }, message: { type: 'string' } } } },
          },
        },
        OAuthError: { type: 'object', required: ['error'], properties: { error: { type: 'string' }, error_description: { type: 'string' } } },
        TokenResponse: {
          type: 'object',
          required: ['access_token', 'expires_in', 'token_type'],
          properties: { access_token: { type: 'string' }, expires_in: { type: 'integer' }, token_type: { type: 'string', const: 'Bearer' } },
        },
        CountBreakdown: {
          type: 'object',
          properties: {
            total: { type: 'integer' }, active: { type: 'integer' }, paused: { type: 'integer' }, archived: { type: 'integer' }, expiringSoon: { type: 'integer' },
            byType: { type: 'object', properties: { PrivateAuction: { type: 'integer' }, DirectDeal: { type: 'integer' }, GuaranteedDeal: { type: 'integer' } } },
          },
        },
      },
    },
  };
}
