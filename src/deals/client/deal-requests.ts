/**
 * The deal writes as requests, validated and prepared but not sent: {@link DealRequests} checks each deal as the
 * service would and builds the request; `client.deals` (./deals.ts) sends it, its `dryRun` describes it.
 */
import {
  validateDeal,
  type DealRead,
  type DealValidationContext,
  type DealValidationResult,
  type DealWriteInput,
  REDACTED,
} from '../rules/index.js';
import { ValidationError, type FieldIssue } from './errors.js';
import type { ClientCore, Prepared } from './core.js';
import { isPlainObject } from '../../core/plain.js';
import { mergeDeal, sameJson, writableFields } from './merge.js';
import type { CallOptions, DealPatch, PreparedRequest, UpdateOptions } from './options.js';

/** The service-side deal id as a path segment; a ValidationError (nothing sent) for anything but a positive integer. */
export function dealId(id: number | string): string {
  const n = typeof id === 'string' && /^\d+$/.test(id) ? Number(id) : id;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n <= 0) {
    throw new ValidationError(
      `id must be a positive integer deal id (the service-side id, not dealId), got ${JSON.stringify(id)}`,
      [{ path: 'id', message: 'must be a positive integer' }],
      { attempts: 0 },
    );
  }
  return String(n);
}

/** GET /deals/{id}: one deal by its service-side id. */
export async function readDeal(c: ClientCore, id: number | string, options: CallOptions = {}): Promise<DealRead> {
  const res = await c.request({
    method: 'GET',
    url: new URL(`deals/${dealId(id)}`, c.baseUrl),
    retry: 'idempotent',
    signal: options.signal,
  });
  return res.body as DealRead;
}

/** Prepares the deal writes of one client. */
export class DealRequests {
  readonly #c: ClientCore;
  constructor(client: ClientCore) {
    this.#c = client;
  }

  /** Validates a deal as the service would: the pure rules, then (with `referenceChecks`) the reference rules. */
  async validate(
    deal: unknown,
    context: { mode: 'create' | 'update'; stored?: DealRead; signal?: AbortSignal },
  ): Promise<DealValidationResult> {
    const base = { mode: context.mode, stored: context.stored as DealValidationContext['stored'], now: this.#c.now() };
    const pure = validateDeal(deal, base);
    if (!pure.ok || !this.#c.referenceChecks) return pure;
    const reference = await this.#c.reference(deal as Record<string, unknown>, context.signal);
    return validateDeal(deal, { ...base, reference });
  }

  /** What a prepared request would send, the credentials masked; null for an update that changes nothing. */
  describe(p: Prepared): PreparedRequest | null {
    if (p.unchanged) return null;
    const headers: Record<string, string> = { authorization: `Bearer ${REDACTED}`, ...p.headers };
    if (p.json !== undefined) headers['content-type'] = 'application/json';
    const out: PreparedRequest = { method: p.method, url: p.url.href, headers, warnings: p.warnings };
    if (p.json !== undefined) out.body = JSON.parse(this.#c.redact(JSON.stringify(p.json)));
    return out;
  }

  /** POST /deals: the deal validated; with `copyOf`, the copied deal with the given fields over it validated. */
  async create(
    deal: DealWriteInput | Partial<DealWriteInput> | undefined,
    options: CallOptions & { copyOf?: number | string },
  ): Promise<Prepared> {
    const prepared = {
      method: 'POST',
      url: new URL('deals', this.#c.baseUrl),
      retry: 'unsent-only',
      keepCutBody: true,
    } as const;
    if (options.copyOf === undefined) {
      const { value, warnings } = await this.#checked(deal, 'create', undefined, options.signal);
      return { ...prepared, headers: {}, json: value, warnings };
    }
    // A copy (X-CopyOfDealId): the service copies the source deal and lays the body over it, field by field, so
    // that is what is validated; the body sent holds only the fields given (none copies the deal as it is).
    const sourceId = dealId(options.copyOf);
    const given = deal ?? {};
    if (!isPlainObject(given))
      throw new ValidationError(
        'the deal must be a plain object of deal fields',
        [{ path: '', message: 'must be an object' }],
        { attempts: 0 },
      );
    const source = await readDeal(this.#c, sourceId, options);
    const { value, warnings } = await this.#checked(
      { ...writableFields(source), ...given },
      'create',
      undefined,
      options.signal,
    );
    const body = Object.fromEntries(
      Object.keys(given)
        .filter((k) => value[k] !== undefined)
        .map((k) => [k, value[k]]),
    );
    return { ...prepared, headers: { 'x-copyofdealid': sourceId }, json: body, warnings };
  }

  /** PUT /deals/{id} of a whole deal, checked against the stored one. */
  async replace(
    id: number | string,
    deal: DealWriteInput,
    options: CallOptions & { stored?: DealRead },
  ): Promise<Prepared> {
    const path = dealId(id);
    const pure = validateDeal(deal, { mode: 'update', now: this.#c.now() });
    if (!pure.ok) await this.#checked(deal, 'update', undefined); // throws with the issues, before any request
    const stored = options.stored ?? (await readDeal(this.#c, path, options));
    const { value, warnings } = await this.#checked(deal, 'update', stored, options.signal);
    return {
      method: 'PUT',
      url: new URL(`deals/${path}`, this.#c.baseUrl),
      json: { ...value, id: stored.id, dealId: stored.dealId },
      retry: 'idempotent',
      warnings,
    };
  }

  /** PUT /deals/{id} of the stored deal with the patch merged; `unchanged` set when the patch changes nothing. */
  async update(id: number | string, patch: DealPatch, options: UpdateOptions): Promise<Prepared> {
    const path = dealId(id);
    if (!isPlainObject(patch))
      throw new ValidationError(
        'the patch must be a plain object of deal fields',
        [{ path: '', message: 'must be an object' }],
        { attempts: 0 },
      );
    const stored = options.stored ?? (await readDeal(this.#c, path, options));
    const current = writableFields(stored);
    const merged = mergeDeal(current, patch);
    const { value, warnings } = await this.#checked(merged, 'update', stored, options.signal);
    const prepared: Prepared = {
      method: 'PUT',
      url: new URL(`deals/${path}`, this.#c.baseUrl),
      json: { ...value, id: stored.id, dealId: stored.dealId },
      retry: 'idempotent',
      warnings,
    };
    // Nothing changed: no PUT, no update quota spent.
    if (sameJson(merged, current)) prepared.unchanged = stored;
    return prepared;
  }

  /** DELETE /deals/{id}. */
  delete(id: number | string): Prepared {
    return {
      method: 'DELETE',
      url: new URL(`deals/${dealId(id)}`, this.#c.baseUrl),
      retry: 'idempotent',
      warnings: [],
    };
  }

  /** POST (attach) or DELETE (detach) /deals/{id}/domainlists. */
  domainList(method: 'POST' | 'DELETE', id: number | string, domainListId: number): Prepared {
    if (!Number.isSafeInteger(domainListId) || domainListId <= 0) {
      throw new ValidationError(
        `domainListId must be a positive integer, got ${JSON.stringify(domainListId)}`,
        [{ path: 'domainListId', message: 'must be a positive integer' }],
        { attempts: 0 },
      );
    }
    // Attaching or detaching the same list twice leaves the same association: safe to retry.
    return {
      method,
      url: new URL(`deals/${dealId(id)}/domainlists`, this.#c.baseUrl),
      json: { domainListId },
      retry: 'idempotent',
      warnings: [],
    };
  }

  /** The deal validated for `mode`, its warnings logged; a ValidationError (nothing sent) when it is refused. */
  async #checked(
    deal: unknown,
    mode: 'create' | 'update',
    stored: DealRead | undefined,
    signal?: AbortSignal,
  ): Promise<{ value: Record<string, unknown>; warnings: FieldIssue[] }> {
    if (stored && (!stored.isEditable || stored.isArchived)) {
      // The service refuses every edit of an archived deal (its `isEditable` is false): no PUT, no quota spent.
      const why = stored.isArchived ? 'archived' : 'not editable';
      throw new ValidationError(
        `deal ${stored.id} is ${why} and cannot be changed`,
        [{ path: '', message: `the deal is ${why}` }],
        { attempts: 0, redact: this.#c.redact },
      );
    }
    const result = await this.validate(deal, { mode, stored, signal });
    if (!result.ok) {
      const list = result.issues.map((i) => `${i.path || '(deal)'}: ${i.message}`).join('; ');
      const summary = `the deal was refused before sending (${mode})`;
      throw new ValidationError(`${summary}: ${list}`, result.issues, { attempts: 0, redact: this.#c.redact, summary });
    }
    for (const w of result.warnings) this.#c.log('warn', `deal ${w.path}: ${w.message}`);
    return { value: result.value as Record<string, unknown>, warnings: result.warnings };
  }
}
