/**
 * The simulator's OpenAPI 3.1 document, built from the route definitions (routes/*: every operation, status,
 * header and body) and the zod schemas the rules validate with (JSON Schema by z.toJSONSchema), so it cannot say
 * something the simulator does not do. Guide: docs/simulator.md ("The OpenAPI document").
 */
import { z } from 'zod';
import {
  CountBreakdownSchema,
  DEAL_RULES,
  DealDateTimeSchema,
  DealReadSchema,
  DealWriteSchema,
  LOOKUP_ITEM_SCHEMAS,
  LOOKUP_RESOURCES,
  MANDATORY_DEAL_FIELDS,
  dealReadOnlyFields,
} from '../deals/rules/index.js';
import { GET_DOCUMENT, GET_TOKEN, GET_USER_TOKEN, tokenRequestSchema } from './routes/auth-operations.js';
import { COUNT_DEALS, LIST_DEALS } from './routes/deal-list.js';
import {
  ATTACH_DOMAIN_LIST,
  CREATE_DEAL,
  DELETE_DEAL,
  DETACH_DOMAIN_LIST,
  GET_DEAL,
  REPLACE_DEAL,
} from './routes/deal-operations.js';
import { LOOKUP_OPERATIONS, pascal } from './routes/lookups.js';
import {
  DomainListRefSchema,
  ErrorSchema,
  OAuthErrorSchema,
  RESPONSE_HEADERS,
  ROUTE_RULES,
  SHARED_RESPONSES,
  TokenResponseSchema,
  UNAUTHORIZED,
  ValidationErrorSchema,
  type JsonSchema,
  type OperationDef,
  type ResponseBody,
  type ResponseDef,
} from './routes/operation.js';

/** Every operation the simulator serves, in the document's order. */
export const OPERATIONS: readonly OperationDef[] = [
  GET_TOKEN,
  GET_USER_TOKEN,
  GET_DOCUMENT,
  LIST_DEALS,
  CREATE_DEAL,
  COUNT_DEALS,
  GET_DEAL,
  REPLACE_DEAL,
  DELETE_DEAL,
  ATTACH_DOMAIN_LIST,
  DETACH_DOMAIN_LIST,
  ...LOOKUP_OPERATIONS,
];

/** Headers sent only in some answers of a status (the others are always there). */
const OPTIONAL_HEADERS = new Set(['Warning', 'Connection']);

/** A deal the document shows as its example (and the contract tests send). */
export const EXAMPLE_DEAL = {
  name: 'Spring sale FR',
  isActive: true,
  beginDate: '2030-03-01',
  endDate: '2030-05-31T23:59:59Z',
  currency: 'EUR',
  pricingModel: 1,
  price: 2.5,
  buyerIds: [101],
  countryCodes: ['FR'],
} as const;

/** What a money field says in place of `multipleOf: 0.01`. */
const TWO_DECIMALS = 'At most 2 decimal places (rule two-decimals).';

/**
 * The JSON Schema of a zod schema. Two decimal places are said in words and in `x-rules` (two-decimals), not as
 * zod's `multipleOf: 0.01`: JSON Schema validators divide in floating point (1.15 / 0.01 = 114.99999999999999), so
 * Prism and others would refuse valid prices.
 */
function schemaOf(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const out = z.toJSONSchema(schema, {
    io,
    unrepresentable: 'any',
    override: ({ jsonSchema }) => {
      if (jsonSchema.multipleOf !== 0.01) return;
      delete jsonSchema.multipleOf;
      jsonSchema.description = jsonSchema.description ? `${jsonSchema.description} ${TWO_DECIMALS}` : TWO_DECIMALS;
    },
  }) as JsonSchema;
  delete out.$schema;
  return out;
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

function rulesText(rules: Record<string, string>): string {
  return Object.entries(rules)
    .map(([id, text]) => `- \`${id}\`: ${text}`)
    .join('\n');
}

/** A deal body schema with the rules JSON Schema cannot say, listed in `x-rules` and in the description. */
function withRules(schema: JsonSchema, lead: string, rules: Record<string, string>): JsonSchema {
  return {
    ...schema,
    description:
      `${lead}\n\nBeyond each field's own shape, a body is refused (400, the rule named in errors[].rule) ` +
      `when it breaks:\n${rulesText(rules)}`,
    'x-rules': rules,
  };
}

function components(audience: string): Record<string, JsonSchema> {
  const write = schemaOf(DealWriteSchema, 'input');
  const writeProps = write.properties as Record<string, JsonSchema>;
  const readOnly = schemaOf(z.object(dealReadOnlyFields), 'output').properties as Record<string, JsonSchema>;
  const { 'matches-replaced-deal': matches, ...createRules } = DEAL_RULES;
  const lookupItems = Object.fromEntries(
    LOOKUP_RESOURCES.map((r) => [`${pascal(r)}Item`, schemaOf(LOOKUP_ITEM_SCHEMAS[r], 'output')]),
  );
  return {
    DealWrite: withRules(
      { ...write, required: [...MANDATORY_DEAL_FIELDS], examples: [EXAMPLE_DEAL] },
      'A complete deal, as created. Optional fields may be null (their default).',
      createRules,
    ),
    DealCopyOverrides: withRules(
      { ...write, required: [], 'x-requires-header': 'X-CopyOfDealId', examples: [{ price: 3.5 }] },
      'Fields laid over the deal X-CopyOfDealId names; any subset, {} included. Only with that header.',
      createRules,
    ),
    DealReplace: withRules(
      {
        ...write,
        required: [...MANDATORY_DEAL_FIELDS],
        examples: [EXAMPLE_DEAL],
        // The fields the service computes are accepted back and ignored (a client PUTs the deal it read, changed):
        // declared as plain properties, not `readOnly`, since a validating proxy drops `readOnly` properties from a
        // request schema and then refuses them as additional properties.
        properties: { ...writeProps, ...readOnly },
      },
      'The whole deal: omitted fields reset to their defaults; the fields the service computes (id, dealId, ' +
        'typeId, createdAt, …) may be sent back and are ignored, but id and dealId must be the deal’s own.',
      { ...createRules, 'matches-replaced-deal': matches, ...pick(ROUTE_RULES, 'archived-not-editable') },
    ),
    DealRead: schemaOf(DealReadSchema, 'output'),
    DateTime: {
      ...schemaOf(DealDateTimeSchema, 'input'),
      description: 'ISO 8601 date-time; without an offset it is read as UTC; a date alone is midnight UTC',
    },
    ...lookupItems,
    DomainListRef: withRules(
      schemaOf(DomainListRefSchema, 'input'),
      'A domain list, by id.',
      pick(ROUTE_RULES, 'known-domain-list', 'attached-domain-list'),
    ),
    TokenRequest: tokenRequestSchema(audience),
    TokenResponse: schemaOf(TokenResponseSchema, 'output'),
    CountBreakdown: schemaOf(CountBreakdownSchema, 'output'),
    Error: schemaOf(ErrorSchema, 'output'),
    ValidationError: schemaOf(ValidationErrorSchema, 'output'),
    OAuthError: schemaOf(OAuthErrorSchema, 'output'),
  };
}

function pick<T extends Record<string, string>, K extends keyof T>(rules: T, ...keys: K[]): Pick<T, K> {
  return Object.fromEntries(keys.map((k) => [k, rules[k]])) as Pick<T, K>;
}

function content(body: ResponseBody): Record<string, unknown> {
  if (body === 'text') return { 'text/plain': { schema: { type: 'string', minLength: 1 } } };
  if (body === 'json') return { 'application/json': { schema: { type: 'object' } } };
  const schema =
    'ref' in body
      ? ref(body.ref)
      : 'arrayOf' in body
        ? { type: 'array', items: ref(body.arrayOf) }
        : { anyOf: body.anyOf.map(ref) };
  return { 'application/json': { schema } };
}

function response(def: ResponseDef): Record<string, unknown> {
  const headers = Object.fromEntries(
    (def.headers ?? []).map((h) => [h, { ...RESPONSE_HEADERS[h], required: !OPTIONAL_HEADERS.has(h) }]),
  );
  return {
    description: def.description,
    ...(def.headers?.length ? { headers } : {}),
    ...(def.body ? { content: content(def.body) } : {}),
  };
}

/**
 * A text body holding JSON that `schema` describes. `contentSchema` only annotates (validators accept any text), so
 * the refusal of text that is not such JSON is a rule, listed.
 */
function jsonAsText(schema: JsonSchema): JsonSchema {
  return {
    type: 'string',
    contentMediaType: 'application/json',
    contentSchema: schema,
    description: `Read as JSON. Refused (400) when it breaks:\n${rulesText(pick(ROUTE_RULES, 'json-text'))}`,
    'x-rules': pick(ROUTE_RULES, 'json-text'),
  };
}

function operation(op: OperationDef): Record<string, unknown> {
  const responses: Record<number, ResponseDef> = { ...SHARED_RESPONSES };
  if (op.auth !== 'none') responses[401] = UNAUTHORIZED;
  Object.assign(responses, op.responses);
  const body = op.body;
  const requestBody = body && {
    required: body.required,
    description: body.description,
    content: Object.fromEntries<unknown>([
      ...(body.mediaTypes ?? ['application/json']).map((type): [string, unknown] => [type, { schema: body.schema }]),
      // The deal routes read any body as JSON; say so for text/plain, the other type clients send by mistake.
      ...(body.mediaTypes ? [] : [['text/plain', { schema: jsonAsText(body.schema) }] as [string, unknown]]),
    ]),
  };
  return {
    operationId: op.operationId,
    tags: [op.tag],
    summary: op.summary,
    description: op.description,
    ...(op.auth === 'none' ? { security: [] } : op.auth === 'access' ? { security: [{ accessToken: [] }] } : {}),
    ...(op.parameters?.length ? { parameters: op.parameters } : {}),
    ...(requestBody ? { requestBody } : {}),
    responses: Object.fromEntries(
      Object.entries(responses)
        .sort(([a], [b]) => Number(a) - Number(b))
        .map(([s, d]) => [s, response(d)]),
    ),
  };
}

const TAGS = [
  { name: 'auth', description: 'The two-step login: an access token, then the user token every other call needs.' },
  { name: 'deals', description: 'The caller company’s deals: list, count, read, create or copy, replace, delete.' },
  { name: 'domain lists', description: 'Attach or detach a deal’s domain list (not for DSP callers).' },
  { name: 'lookups', description: 'Reference data the deals refer to, by id.' },
  { name: 'meta', description: 'This document.' },
];

/**
 * Builds the OpenAPI 3.1 document of the simulator: every operation of OPERATIONS, the schemas of the deal rules,
 * and `origin` (e.g. `http://127.0.0.1:4010`) as the server, with `/current` as the second one.
 */
export function buildOpenApi(audience: string, origin = 'http://127.0.0.1:4010'): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of OPERATIONS) (paths[op.path] ??= {})[op.method] = operation(op);
  return {
    openapi: '3.1.0',
    info: {
      title: 'Deal management API (eidkit simulator)',
      version: '1.0.0',
      description:
        'The local simulator of the deal management API (docs/simulator.md in eidkit). Generated from the rules the ' +
        'simulator and the eidkit client validate with. Every path is also served under /current; lookup names are ' +
        'read in any letter case.',
      contact: { name: 'eidkit' },
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [
      { url: origin, description: 'this simulator' },
      { url: `${origin}/current`, description: 'the same API under /current, as the deal API’s base URL has it' },
    ],
    tags: TAGS,
    security: [{ userToken: [] }],
    paths,
    components: {
      securitySchemes: {
        userToken: { type: 'http', scheme: 'bearer', description: 'the user token from GET /authorize' },
        accessToken: { type: 'http', scheme: 'bearer', description: 'the access token from POST /oauth/token' },
      },
      schemas: components(audience),
    },
  };
}
