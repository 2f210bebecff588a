/**
 * An independent check of HTTP exchanges against an OpenAPI 3.1 document: ajv (JSON Schema 2020-12, with
 * ajv-formats) over the dereferenced document. It knows nothing of the simulator's code, only the document.
 *
 * A violation is any of: a status, header or body the document does not declare for the operation; a request the
 * document refuses that the simulator answered with success; a request the document accepts that the simulator
 * refused with 400 for a reason the request body schema does not list in its `x-rules`.
 */
import Ajv2020Module, { type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { SimulatorExchange } from '../../src/simulator/index.js';

const Ajv2020 = Ajv2020Module as unknown as typeof Ajv2020Module.default;
type Ajv2020 = InstanceType<typeof Ajv2020>;
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => void;

type Json = Record<string, unknown>;
type Schema = Json | boolean;

/** One disagreement between the document and an exchange. */
export interface Violation {
  operation: string;
  message: string;
  exchange: string;
}

/** An operation of the document, with its path template matcher. */
export interface Operation {
  id: string;
  method: string;
  path: string;
  matcher: RegExp;
  paramNames: string[];
  op: Json;
}

/** Replaces every local `$ref` by a copy of what it points to (the document has no cycles). */
export function dereference<T>(doc: T): T {
  const root = doc as unknown as Json;
  const resolve = (pointer: string): unknown =>
    pointer
      .replace(/^#\//, '')
      .split('/')
      .reduce<unknown>((node, key) => (node as Json)[key.replace(/~1/g, '/').replace(/~0/g, '~')], root);
  const walk = (node: unknown, depth: number): unknown => {
    if (depth > 64) throw new Error('the document nests too deep (a $ref cycle?)');
    if (Array.isArray(node)) return node.map((n) => walk(n, depth + 1));
    if (node === null || typeof node !== 'object') return node;
    const obj = node as Json;
    if (typeof obj.$ref === 'string') {
      const { $ref, ...siblings } = obj;
      return walk({ ...(resolve($ref) as Json), ...siblings }, depth + 1);
    }
    return Object.fromEntries(Object.entries(obj).map(([k, v]) => [k, walk(v, depth + 1)]));
  };
  return walk(doc, 0) as T;
}

/** Response headers every HTTP stack adds, which no document lists. */
const TRANSPORT_HEADERS = new Set([
  'content-type',
  'content-length',
  'date',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'vary',
]);

/** Reads the validator's verdicts from a (dereferenced) OpenAPI document. */
export class ContractValidator {
  readonly ajv: Ajv2020;
  readonly operations: Operation[] = [];
  readonly doc: Json;
  private readonly cache = new Map<unknown, ValidateFunction>();
  private readonly prefixes: string[];

  constructor(document: Json) {
    this.doc = dereference(document);
    // No `multipleOfPrecision`: numbers are checked as other JSON Schema validators (Prism's too) check them.
    this.ajv = new Ajv2020({ allErrors: true, strict: true, validateFormats: true });
    addFormats(this.ajv);
    // OpenAPI's own keywords and our extension: annotations, not assertions.
    this.ajv.addVocabulary(['x-rules', 'x-requires-header']);
    this.ajv.addFormat('password', true);
    const servers = (this.doc.servers ?? []) as { url: string }[];
    this.prefixes = servers.map((s) => new URL(s.url, 'http://x').pathname.replace(/\/$/, ''));
    for (const [path, item] of Object.entries(this.doc.paths as Record<string, Json>)) {
      for (const [method, op] of Object.entries(item)) {
        if (!['get', 'post', 'put', 'delete', 'patch'].includes(method)) continue;
        const paramNames: string[] = [];
        const source = path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{(\w+)\}/g, (_, n: string) => {
          paramNames.push(n);
          return '([^/]+)';
        });
        const id = (op as Json).operationId as string;
        this.operations.push({ id, method, path, matcher: new RegExp(`^${source}$`), paramNames, op: op as Json });
      }
    }
  }

  /** Compiles (once) and runs a schema; returns the error messages. */
  errors(schema: Schema, value: unknown): string[] {
    let fn = this.cache.get(schema);
    if (!fn) {
      fn = this.ajv.compile(schema);
      this.cache.set(schema, fn);
    }
    return fn(value) ? [] : (fn.errors ?? []).map((e) => `${e.instancePath || '(root)'} ${e.message ?? 'is invalid'}`);
  }

  /** True when `schema` accepts the text `raw` or a number or boolean it spells. */
  accepts(schema: Schema, raw: string): boolean {
    return coercions(raw).some((v) => this.errors(schema, v).length === 0);
  }

  /** The operation serving `method` and `pathname` (under any server's path; lookups in any letter case). */
  find(method: string, pathname: string): { operation: Operation; params: Record<string, string> } | undefined {
    const m = method.toLowerCase();
    const under = this.prefixes.filter((p) => p && pathname.startsWith(`${p}/`));
    const candidates = [pathname, ...under.map((p) => pathname.slice(p.length))];
    for (const caseless of [false, true]) {
      for (const path of candidates) {
        for (const operation of this.operations) {
          if (operation.method !== m) continue;
          const lookup = ((operation.op.tags ?? []) as string[]).includes('lookups');
          const hit = new RegExp(operation.matcher.source, caseless && lookup ? 'i' : '').exec(path);
          if (!hit) continue;
          const params = Object.fromEntries(operation.paramNames.map((n, i) => [n, decodeURIComponent(hit[i + 1])]));
          return { operation, params };
        }
      }
    }
    return undefined;
  }

  /** Why the document refuses this request (empty when it accepts it). */
  requestErrors(
    operation: Operation,
    request: SimulatorExchange['request'],
    pathParams: Record<string, string>,
  ): string[] {
    const out: string[] = [];
    const url = new URL(request.url);
    const headers = lower(request.headers);
    const security = (operation.op.security ?? this.doc.security) as unknown[];
    if (security.length > 0 && !/^bearer\s+\S+/i.test(headers.authorization ?? '')) out.push('no Bearer token');
    for (const p of (operation.op.parameters ?? []) as Json[]) {
      const name = p.name as string;
      const raw =
        p.in === 'path'
          ? pathParams[name]
          : p.in === 'query'
            ? (url.searchParams.get(name) ?? undefined)
            : headers[name.toLowerCase()];
      if (raw === undefined) {
        if (p.required) out.push(`${p.in} parameter ${name} is missing`);
        continue;
      }
      if (!this.accepts(p.schema as Schema, raw)) out.push(`${p.in} parameter ${name}=${JSON.stringify(raw)} invalid`);
    }
    const rb = operation.op.requestBody as Json | undefined;
    const text = request.body;
    if (!rb) return text === '' ? out : [...out, 'a request body where the document declares none'];
    if (text === '') {
      if (rb.required) out.push('the request body is missing');
      return out;
    }
    const type = (headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
    const media = (rb.content as Record<string, Json>)[type];
    if (!media) return [...out, `request content type ${JSON.stringify(type)} is not declared`];
    const schema = media.schema as Json;
    let value: unknown = text;
    if (type === 'application/x-www-form-urlencoded') value = Object.fromEntries(new URLSearchParams(text));
    else if (schema.type !== 'string') {
      try {
        value = JSON.parse(text);
      } catch {
        return [...out, 'the request body is not JSON'];
      }
    }
    // A text body (`contentSchema`) is checked as validators check it: as text; contentSchema only annotates.
    return [...out, ...this.errors(schema, value).map((e) => `request body ${e}`)];
  }

  /**
   * True when a text body declared with `contentSchema` (and the `json-text` rule) is not JSON that contentSchema
   * accepts: the rule then explains a refusal, whatever the simulator's errors name.
   */
  textRefused(operation: Operation, request: SimulatorExchange['request']): boolean {
    const type = (lower(request.headers)['content-type'] ?? '').split(';')[0].trim().toLowerCase();
    const content = ((operation.op.requestBody as Json | undefined)?.content ?? {}) as Record<string, Json>;
    const schema = content[type]?.schema as Json | undefined;
    if (!schema?.contentSchema || !(schema['x-rules'] as Json | undefined)?.['json-text']) return false;
    try {
      return this.errors(schema.contentSchema as Json, JSON.parse(request.body)).length > 0;
    } catch {
      return true;
    }
  }

  /** Why the response disagrees with the document (empty when it conforms). */
  responseErrors(operation: Operation, response: SimulatorExchange['response']): string[] {
    const declared = (operation.op.responses as Record<string, Json>)[String(response.status)];
    if (!declared) return [`status ${response.status} is not declared`];
    const out: string[] = [];
    const headers = lower(response.headers);
    const declaredHeaders = lower((declared.headers ?? {}) as Record<string, Json>);
    for (const [name, value] of Object.entries(headers)) {
      if (TRANSPORT_HEADERS.has(name) && !declaredHeaders[name]) continue;
      const h = declaredHeaders[name];
      if (!h) out.push(`header ${name} is not declared`);
      else if (!this.accepts(h.schema as Schema, value)) out.push(`header ${name}: ${JSON.stringify(value)} invalid`);
    }
    for (const [name, h] of Object.entries(declaredHeaders)) {
      if (h.required && headers[name] === undefined) out.push(`header ${name} is missing`);
    }
    const content = declared.content as Record<string, Json> | undefined;
    if (!content) return response.body === '' ? out : [...out, 'a body where the document declares none'];
    const type = (headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
    const media = content[type];
    if (!media) return [...out, `response content type ${JSON.stringify(type)} is not declared`];
    let value: unknown = response.body;
    if (type === 'application/json') {
      try {
        value = JSON.parse(response.body);
      } catch {
        return [...out, 'the response body is not JSON'];
      }
    }
    return [...out, ...this.errors(media.schema as Schema, value).map((e) => `response body ${e}`)];
  }

  /** The rules the request body schema lists as reasons a body it accepts may still be refused. */
  rules(operation: Operation): Set<string> {
    const out = new Set<string>();
    const visit = (node: unknown) => {
      if (!node || typeof node !== 'object') return;
      const obj = node as Json;
      if (obj['x-rules']) for (const k of Object.keys(obj['x-rules'])) out.add(k);
      for (const k of ['anyOf', 'oneOf', 'allOf']) if (Array.isArray(obj[k])) (obj[k] as unknown[]).forEach(visit);
      if (obj.contentSchema) visit(obj.contentSchema);
    };
    const content = ((operation.op.requestBody as Json | undefined)?.content ?? {}) as Record<string, Json>;
    for (const media of Object.values(content)) visit(media.schema);
    return out;
  }

  /** Every violation of one exchange. */
  check(exchange: SimulatorExchange): Violation[] {
    const { request, response } = exchange;
    const url = new URL(request.url);
    const label = `${request.method} ${url.pathname}${url.search} → ${response.status}`;
    const found = this.find(request.method, url.pathname);
    if (!found) {
      // A path the document does not have: the simulator must say it has no such route.
      return response.status === 404 || response.status === 401
        ? []
        : [{ operation: '(none)', message: `no such operation, answered ${response.status}`, exchange: label }];
    }
    const { operation, params } = found;
    const violation = (message: string): Violation => ({ operation: operation.id, message, exchange: label });
    const out = this.responseErrors(operation, response).map(violation);
    const refusals = this.requestErrors(operation, request, params);
    if (refusals.length > 0 && response.status < 300) {
      out.push(violation(`the document refuses this request (${refusals.join('; ')}) but it succeeded`));
    }
    if (refusals.length === 0 && response.status === 400) {
      const rules = this.rules(operation);
      const errors = parseErrors(response.body);
      const unexplained = this.textRefused(operation, request)
        ? []
        : errors.filter((e) => !e.rule || !rules.has(e.rule));
      if (errors.length === 0 || unexplained.length > 0) {
        const why = unexplained.map((e) => `${e.field}: ${e.message}`).join('; ') || response.body.slice(0, 200);
        out.push(violation(`the document accepts this request but it was refused: ${why}`));
      }
    }
    return out;
  }
}

function parseErrors(body: string): { field: string; message: string; rule?: string }[] {
  try {
    const parsed = JSON.parse(body) as { errors?: { field: string; message: string; rule?: string }[] };
    return Array.isArray(parsed.errors) ? parsed.errors : [];
  } catch {
    return [];
  }
}

function lower<T>(record: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(record).map(([k, v]) => [k.toLowerCase(), v]));
}

/** The values a text parameter may stand for: itself, a number, a boolean. */
function coercions(raw: string): unknown[] {
  const out: unknown[] = [raw];
  if (/^-?\d+(\.\d+)?$/.test(raw.trim())) out.push(Number(raw));
  if (raw === 'true' || raw === 'false') out.push(raw === 'true');
  return out;
}
