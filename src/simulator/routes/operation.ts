/**
 * Route definitions: each route of the simulator is registered from one of these, which also says everything the
 * OpenAPI document needs about it (operationId, tag, parameters, body, every status with its headers and body).
 * The document (src/simulator/openapi.ts) is built from them and the zod schemas, never written by hand, and the
 * contract tests (test/contract) check live traffic against it. Guide: docs/simulator.md ("The OpenAPI document").
 */
import type { Context, Handler, Hono } from 'hono';
import { z } from 'zod';
import type { DealRuleId } from '../../deals/rules/index.js';
import type { ApiEnv } from './context.js';

/** A JSON Schema, as the document carries it. */
export type JsonSchema = Record<string, unknown>;

/** Response headers the simulator sends, by name. */
export const RESPONSE_HEADERS = {
  'Retry-After': { description: 'seconds to wait before trying again', schema: { type: 'integer', minimum: 1 } },
  'WWW-Authenticate': { description: 'the Bearer challenge', schema: { type: 'string', pattern: '^Bearer' } },
  'X-Pagination-Total-Count': {
    description: 'the number of items matching, over all pages',
    schema: { type: 'integer', minimum: 0 },
  },
  Link: { description: 'RFC 5988 links to the first, prev, next and last pages', schema: { type: 'string' } },
  Location: { description: 'the URL of the new deal', schema: { type: 'string', format: 'uri' } },
  'X-HistoryId': { description: 'history id of this change of the deal', schema: { type: 'integer', minimum: 1 } },
  Warning: {
    description: 'accepted but ignored input, e.g. frequency capping without a capable identity provider',
    schema: { type: 'string' },
  },
  'Cache-Control': { description: 'tokens are never cached', schema: { type: 'string', const: 'no-store' } },
  Connection: {
    description: 'the connection is closed after a refused oversized body',
    schema: { type: 'string', const: 'close' },
  },
} as const;

/** A response header name. */
export type ResponseHeader = keyof typeof RESPONSE_HEADERS;

/** A response body: a named component schema, an array of one, plain text, or nothing. */
export type ResponseBody = { ref: string } | { arrayOf: string } | { anyOf: string[] } | 'text' | 'json';

/** One status an operation can answer. */
export interface ResponseDef {
  description: string;
  body?: ResponseBody;
  headers?: ResponseHeader[];
}

/** One parameter (query, path or header). */
export interface ParameterDef {
  name: string;
  in: 'query' | 'path' | 'header';
  required?: boolean;
  description: string;
  schema: JsonSchema;
}

/** The request body: a JSON Schema (often a `$ref` to a component) and how the simulator reads it. */
export interface RequestBodyDef {
  description: string;
  required: boolean;
  schema: JsonSchema;
  /** The media types the body is declared with; default JSON, also read from any other type (`text/plain`). */
  mediaTypes?: string[];
}

/** One operation: where it is, what it takes and every answer it can give. */
export interface OperationDef {
  operationId: string;
  method: 'get' | 'post' | 'put' | 'delete';
  /** OpenAPI path template, e.g. `/deals/{id}`. */
  path: string;
  tag: 'auth' | 'deals' | 'domain lists' | 'lookups' | 'meta';
  summary: string;
  description: string;
  /** The token the call needs: none, the access token (GET /authorize) or the user token (everything else). */
  auth: 'none' | 'access' | 'user';
  parameters?: ParameterDef[];
  body?: RequestBodyDef;
  /** The statuses this route's handler answers; the ones every route shares are in SHARED_RESPONSES. */
  responses: Record<number, ResponseDef>;
}

/** Answers every operation can give, from the layers around the routes (app.ts, index.ts, the token check). */
export const SHARED_RESPONSES = {
  /** app.ts: the body limit, on every route (the body is refused unread). */
  413: {
    description: 'the request body is larger than the limit (1 MiB by default)',
    body: { ref: 'Error' },
    headers: ['Connection'],
  },
  /** index.ts: injected faults (`faults` option, `eidkit simulate --faults`). */
  429: {
    description: 'injected fault RATE_LIMITED (Retry-After: 1)',
    body: { ref: 'Error' },
    headers: ['Retry-After'],
  },
  /** app.ts: an internal error, e.g. a failed write of the data file; nothing was acknowledged. */
  500: { description: 'internal simulator error; nothing was changed', body: { ref: 'Error' } },
  /** index.ts: injected faults. */
  503: { description: 'injected fault SERVICE_UNAVAILABLE', body: { ref: 'Error' } },
} satisfies Record<number, ResponseDef>;

/** The 401 of a missing, invalid or expired token (routes/auth.ts). */
export const UNAUTHORIZED: ResponseDef = {
  description: 'missing, invalid or expired token: code MISSING_TOKEN, INVALID_TOKEN or TOKEN_EXPIRED',
  body: { ref: 'Error' },
  headers: ['WWW-Authenticate'],
};

/** Error codes of the `{ message, code }` bodies. */
export const ERROR_CODES = [
  'NOT_FOUND',
  'PAYLOAD_TOO_LARGE',
  'FORBIDDEN_FOR_DSP',
  'MISSING_TOKEN',
  'INVALID_TOKEN',
  'TOKEN_EXPIRED',
  'CREATION_QUOTA_EXCEEDED',
  'UPDATE_QUOTA_EXCEEDED',
  'RATE_LIMITED',
  'SERVICE_UNAVAILABLE',
  'INTERNAL',
] as const;

/** Cross-field refusals of the routes themselves (beside DEAL_RULES): they depend on the stored deal. */
export const ROUTE_RULES = {
  'archived-not-editable': 'an archived deal (ended more than 30 days ago) can no longer be replaced',
  'known-domain-list': 'domainListId names an existing domain list (GET /domainLists)',
  'attached-domain-list': 'a domainListId in the body of DELETE /deals/{id}/domainlists names the attached list',
  'json-text':
    'a body sent as another type than application/json (text/plain) is read as JSON: text that is not JSON, or JSON ' +
    'the application/json schema refuses (contentSchema), is refused as that body would be',
} as const;

/** The id of a refusal that depends on stored state or on cross-field rules. */
export type RuleId = DealRuleId | keyof typeof ROUTE_RULES;

/** The `{ message, code }` error body. */
export const ErrorSchema = z.object({ message: z.string(), code: z.enum(ERROR_CODES) });
/** The `{ message, errors }` body of a refused request: each field in error, with the rule broken if any. */
export const ValidationErrorSchema = z.object({
  message: z.string(),
  errors: z.array(z.object({ field: z.string(), message: z.string(), rule: z.string().optional() })),
});
/** The token endpoint's error body (OAuth 2.0). */
export const OAuthErrorSchema = z.object({ error: z.string(), error_description: z.string() });
/** The token endpoint's answer. */
export const TokenResponseSchema = z.object({
  access_token: z.string().min(1),
  expires_in: z.int().positive(),
  token_type: z.literal('Bearer'),
});
/** The body of POST /deals/{id}/domainlists (and, optional, of DELETE). */
export const DomainListRefSchema = z.strictObject({ domainListId: z.int().positive() });

/** Registers `handler` for the operation's method and path (the path template read as a hono pattern). */
export function route(api: Hono<ApiEnv>, op: OperationDef, handler: Handler<ApiEnv>): void {
  api.on(op.method.toUpperCase(), op.path.replace(/\{(\w+)\}/g, ':$1'), handler);
}

/** One route: its operation (method, path and the schema of what it takes and answers) and the handler that answers. */
export interface RouteDef<Deps> {
  operation: OperationDef;
  handler: (c: Context<ApiEnv>, deps: Deps) => Response | Promise<Response>;
}

/** Registers `routes` in order, each handler called with `deps` (what the routes of one file share). */
export function registerRoutes<Deps>(api: Hono<ApiEnv>, routes: readonly RouteDef<Deps>[], deps: Deps): void {
  for (const { operation, handler } of routes) route(api, operation, (c) => handler(c, deps));
}

/** A JSON Schema for a string that matches `words` in any letter case (patterns take no flags). */
export function anyCase(words: readonly string[]): JsonSchema {
  const letters = (w: string) =>
    // eslint-disable-next-line @typescript-eslint/no-misused-spread -- code points are what a pattern matches
    [...w].map((ch) => (/[a-z]/i.test(ch) ? `[${ch.toUpperCase()}${ch.toLowerCase()}]` : ch)).join('');
  return { type: 'string', pattern: `^(${words.map(letters).join('|')})$` };
}

/** A query parameter. */
export function query(name: string, schema: JsonSchema, description: string): ParameterDef {
  return { name, in: 'query', required: false, description, schema };
}

/** A comma-separated list of integers; blanks around the numbers are allowed, a blank list is no filter. */
export const ID_LIST: JsonSchema = { type: 'string', pattern: '^\\s*(\\d+\\s*(,\\s*\\d+\\s*)*)?$' };
/** `true` or `false`, in any letter case. */
export const BOOLEAN_QUERY: JsonSchema = { anyOf: [{ type: 'boolean' }, anyCase(['true', 'false'])] };
