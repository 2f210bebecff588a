/**
 * DealsResource (`client.deals`): list, read, create, replace, update, pause, resume and delete deals, attach and
 * detach domain lists, count them by status, validate them client-side, and `dryRun` every write.
 */
import {
  validateDeal,
  type CountBreakdown,
  type DealRead,
  type DealValidationContext,
  type DealValidationResult,
  type DealWriteInput,
  REDACTED,
} from '../rules/index.js';
import {
  ConnectionError,
  NotFoundError,
  ValidationError,
  DealApiError,
  markCreateOutcome,
  type FieldIssue,
} from './errors.js';
import { PagedList, type Page } from './paginate.js';
import { assertSameOrigin, parseLinkHeader } from './link-header.js';
import { createWithKey, withDealKeyMarker } from './keyed.js';
import type { HttpResponse } from './transport.js';
import type { ClientCore, Prepared } from './core.js';
import { isPlainObject } from '../../core/plain.js';
import { mergeDeal, sameJson, writableFields } from './merge.js';
import type {
  CallOptions,
  CreatedDeal,
  CreateOptions,
  DealListFilters,
  DealListOptions,
  DealPatch,
  PreparedRequest,
  UpdateOptions,
} from './options.js';

function dealId(id: number | string): string {
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

function isoDate(v: Date | string): string {
  return v instanceof Date ? v.toISOString() : v;
}

/** Options of a listing that are not filters of GET /deals. */
const NOT_FILTERS = new Set([
  'offset',
  'pageSize',
  'concurrency',
  'onProgress',
  'signal',
  'limit',
  'maxPages',
  'maxItems',
]);

/** Builds the query string of GET /deals from the filters. */
function dealQuery(filters: DealListFilters): URLSearchParams {
  const q = new URLSearchParams();
  for (const [key, value] of Object.entries(filters)) {
    if (value === undefined || value === null || NOT_FILTERS.has(key)) continue;
    if (Array.isArray(value)) q.set(key, value.join(','));
    else if (value instanceof Date) q.set(key, isoDate(value));
    else q.set(key, String(value));
  }
  return q;
}

/** Deal operations: `client.deals`. */
export class DealsResource {
  readonly #c: ClientCore;
  constructor(client: ClientCore) {
    this.#c = client;
  }

  /**
   * Every deal of the caller's company matching the filters, across pages.
   * @example
   * for await (const deal of client.deals.list({ isArchived: false, sortBy: 'id' })) console.log(deal.name);
   */
  list(options: DealListOptions = {}): PagedList<DealRead> {
    const c = this.#c;
    const pageSize = options.pageSize ?? 100;
    if (!Number.isInteger(pageSize) || pageSize < 1)
      throw new TypeError(`pageSize must be a positive integer, got ${pageSize}`);
    const base = new URL('deals', c.baseUrl);
    base.search = dealQuery(options).toString();
    const fetchPage = async (url: URL): Promise<Page<DealRead>> => {
      const res = await c.request({ method: 'GET', url, retry: 'idempotent', signal: options.signal });
      if (!Array.isArray(res.body))
        throw new DealApiError(`GET ${url.pathname}: expected a JSON array of deals`, {
          status: res.status,
          redact: c.redact,
        });
      const totalHeader = res.headers.get('x-pagination-total-count');
      const total = totalHeader !== null && /^\d+$/.test(totalHeader.trim()) ? Number(totalHeader) : undefined;
      const next = parseLinkHeader(res.headers.get('link'), url).next;
      if (next) assertSameOrigin(next, c.baseUrl);
      const offset = Number(url.searchParams.get('offset') ?? 0);
      return { items: res.body as DealRead[], offset, total, nextUrl: next, url };
    };
    return new PagedList<DealRead>(
      {
        pageSize,
        startOffset: options.offset ?? 0,
        fetchOffset: (offset, limit) => {
          const url = new URL(base);
          url.searchParams.set('limit', String(limit));
          url.searchParams.set('offset', String(offset));
          return fetchPage(url);
        },
        fetchUrl: fetchPage,
        keyOf: (deal) => deal.id,
      },
      {
        concurrency: options.concurrency ?? c.concurrency,
        onProgress: options.onProgress,
        limit: options.limit,
        maxPages: options.maxPages,
        maxItems: options.maxItems,
      },
    );
  }

  /** One deal by its service-side id. */
  async get(id: number | string, options: CallOptions = {}): Promise<DealRead> {
    const res = await this.#c.request({
      method: 'GET',
      url: new URL(`deals/${dealId(id)}`, this.#c.baseUrl),
      retry: 'idempotent',
      signal: options.signal,
    });
    return res.body as DealRead;
  }

  /**
   * Creates a deal after validating it client-side. Never retried once it may have reached the service: every
   * error carries `mayHaveCreated` (true after a 5xx, a timeout or a connection dropped once the request was sent).
   * A `201` whose body is cut still resolves when `Location` names the new deal (`deal` is then absent).
   * With `copyOf` (X-CopyOfDealId) `deal` holds only the fields the copy changes; `{}` copies the deal as it is.
   * @example
   * const { id, location, historyId } = await client.deals.create(deal);
   * const copy = await client.deals.create(deal, { copyOf: id });
   * // Safe to run again after a failure: the key finds the deal a lost answer created.
   * const { id: same, recovered } = await client.deals.create(deal, { key: 'spring-fr' });
   */
  async create(deal: DealWriteInput, options?: CreateOptions & { copyOf?: undefined }): Promise<CreatedDeal>;
  /** A copy of deal `copyOf` with the given fields changed (the `X-CopyOfDealId` header); `{}` copies it as it is. */
  async create(
    deal: Partial<DealWriteInput> | undefined,
    options: CreateOptions & { copyOf: number | string },
  ): Promise<CreatedDeal>;
  async create(deal: Partial<DealWriteInput> | undefined, options: CreateOptions = {}): Promise<CreatedDeal> {
    if (options.key !== undefined) {
      const c = this.#c;
      return createWithKey(
        {
          now: () => c.now(),
          maxRecoveries: c.maxRetries,
          send: (marked) =>
            this.create(marked, { ...options, key: undefined } as CreateOptions & { copyOf: number | string }),
          list: (since) => this.list({ createdOrModifiedSince: since, signal: options.signal }),
          urlOf: (id) => new URL(`deals/${id}`, c.baseUrl).href,
          warn: (message) => c.log('warn', message),
          signal: options.signal,
        },
        (deal ?? {}) as DealWriteInput,
        options.key,
      );
    }
    const prepared = await this.#prepareCreate(deal, options);
    let res: HttpResponse;
    try {
      res = await this.#c.send(prepared, options.signal);
    } catch (err) {
      throw err instanceof DealApiError ? markCreateOutcome(err) : err;
    }
    const location = res.headers.get('location') ?? '';
    const body = res.body as { id?: unknown } | null | undefined;
    const fromLocation = /(\d+)\/?$/.exec(location)?.[1];
    const id = typeof body?.id === 'number' ? body.id : fromLocation !== undefined ? Number(fromLocation) : undefined;
    if (id === undefined) {
      const why = res.bodyCut ? 'its body was cut' : 'it named no deal';
      throw markCreateOutcome(
        new ConnectionError(
          `POST ${prepared.url.pathname} answered ${res.status} without a Location header and ${why}`,
          true,
          {
            status: res.status,
            method: 'POST',
            url: prepared.url.href,
            attempts: res.attempts,
            redact: this.#c.redact,
          },
        ),
      );
    }
    const historyId = res.headers.get('x-historyid') ?? undefined;
    const out: CreatedDeal = {
      id,
      location: location ? new URL(location, this.#c.baseUrl).href : new URL(`deals/${id}`, this.#c.baseUrl).href,
      recovered: false,
    };
    if (historyId !== undefined) out.historyId = historyId;
    if (body && typeof body === 'object' && typeof body.id === 'number') out.deal = body as DealRead;
    return out;
  }

  /**
   * Replaces a deal (PUT): every field left out is reset to its default. Prefer {@link update}.
   * `stored` skips reading the deal for the immutability checks. See docs/deal-rules.md#a-put-replaces-the-whole-deal.
   */
  async replace(
    id: number | string,
    deal: DealWriteInput,
    options: CallOptions & { stored?: DealRead } = {},
  ): Promise<DealRead> {
    const prepared = await this.#prepareReplace(id, deal, options);
    return (await this.#c.send(prepared, options.signal)).body as DealRead;
  }

  /**
   * Reads the deal, merges the patch, validates the result and PUTs it, so fields left out of the patch keep
   * their stored values (a bare PUT would reset them). A patch that changes nothing sends no PUT.
   * @example
   * await client.deals.update(42, { name: 'Spring sale', apiCompliance: { isVpaidCompliant: true } });
   */
  async update(id: number | string, patch: DealPatch, options: UpdateOptions = {}): Promise<DealRead> {
    const prepared = await this.#prepareUpdate(id, patch, options);
    if (prepared.unchanged) return prepared.unchanged;
    return (await this.#c.send(prepared, options.signal)).body as DealRead;
  }

  /** Pauses a deal (`isActive` false). */
  pause(id: number | string, options: UpdateOptions = {}): Promise<DealRead> {
    return this.update(id, { isActive: false }, options);
  }

  /** Resumes a paused deal (`isActive` true). */
  resume(id: number | string, options: UpdateOptions = {}): Promise<DealRead> {
    return this.update(id, { isActive: true }, options);
  }

  /**
   * Deletes a deal. When a retry follows a failure that may have reached the service and the retry finds no deal,
   * the first attempt deleted it: that counts as success.
   */
  async delete(id: number | string, options: CallOptions = {}): Promise<void> {
    try {
      await this.#c.send(this.#prepareDelete(id), options.signal);
    } catch (err) {
      if (err instanceof NotFoundError && (err.attempts ?? 1) > 1) return;
      throw err;
    }
  }

  /** Attaches a domain list to a deal (403 for DSP callers). */
  async attachDomainList(id: number | string, domainListId: number, options: CallOptions = {}): Promise<void> {
    await this.#c.send(this.#prepareDomainList('POST', id, domainListId), options.signal);
  }

  /** Detaches a domain list from a deal (403 for DSP callers). */
  async detachDomainList(id: number | string, domainListId: number, options: CallOptions = {}): Promise<void> {
    try {
      await this.#c.send(this.#prepareDomainList('DELETE', id, domainListId), options.signal);
    } catch (err) {
      if (err instanceof NotFoundError && (err.attempts ?? 1) > 1) return;
      throw err;
    }
  }

  /** Counts of the caller's deals by status (GET /deals/countBreakdown). */
  async countBreakdown(options: CallOptions = {}): Promise<CountBreakdown> {
    const res = await this.#c.request({
      method: 'GET',
      url: new URL('deals/countBreakdown', this.#c.baseUrl),
      retry: 'idempotent',
      signal: options.signal,
    });
    return res.body as CountBreakdown;
  }

  /**
   * Validates a deal client-side as the service would: the pure rules first, then (with `referenceChecks`) the
   * rules that need the DSPs, buyers and identity providers it names. Resolves with the result; never throws for
   * an invalid deal.
   */
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

  /** The requests a write would send, validated, without sending them (`--dry-run`). */
  readonly dryRun = {
    create: async (deal: Partial<DealWriteInput> | undefined, options: CreateOptions = {}) => {
      const marked =
        options.key === undefined
          ? deal
          : { ...deal, callerDealIds: withDealKeyMarker(deal?.callerDealIds, options.key) };
      return this.#describe(await this.#prepareCreate(marked, options));
    },
    replace: async (id: number | string, deal: DealWriteInput, options: CallOptions & { stored?: DealRead } = {}) =>
      this.#describe(await this.#prepareReplace(id, deal, options)),
    update: async (id: number | string, patch: DealPatch, options: CallOptions = {}) =>
      this.#describe(await this.#prepareUpdate(id, patch, options)),
    pause: async (id: number | string, options: CallOptions = {}) =>
      this.#describe(await this.#prepareUpdate(id, { isActive: false }, options)),
    resume: async (id: number | string, options: CallOptions = {}) =>
      this.#describe(await this.#prepareUpdate(id, { isActive: true }, options)),
    delete: async (id: number | string) => this.#describe(this.#prepareDelete(id)),
    attachDomainList: async (id: number | string, domainListId: number) =>
      this.#describe(this.#prepareDomainList('POST', id, domainListId)),
    detachDomainList: async (id: number | string, domainListId: number) =>
      this.#describe(this.#prepareDomainList('DELETE', id, domainListId)),
  };

  #describe(p: Prepared): PreparedRequest | null {
    if (p.unchanged) return null;
    const headers: Record<string, string> = { authorization: `Bearer ${REDACTED}`, ...p.headers };
    if (p.json !== undefined) headers['content-type'] = 'application/json';
    const out: PreparedRequest = { method: p.method, url: p.url.href, headers, warnings: p.warnings };
    if (p.json !== undefined) out.body = JSON.parse(this.#c.redact(JSON.stringify(p.json)));
    return out;
  }

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

  async #prepareCreate(
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
    const source = await this.get(sourceId, options);
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

  async #prepareReplace(
    id: number | string,
    deal: DealWriteInput,
    options: CallOptions & { stored?: DealRead },
  ): Promise<Prepared> {
    const path = dealId(id);
    const pure = validateDeal(deal, { mode: 'update', now: this.#c.now() });
    if (!pure.ok) await this.#checked(deal, 'update', undefined); // throws with the issues, before any request
    const stored = options.stored ?? (await this.get(path, options));
    const { value, warnings } = await this.#checked(deal, 'update', stored, options.signal);
    return {
      method: 'PUT',
      url: new URL(`deals/${path}`, this.#c.baseUrl),
      json: { ...value, id: stored.id, dealId: stored.dealId },
      retry: 'idempotent',
      warnings,
    };
  }

  async #prepareUpdate(id: number | string, patch: DealPatch, options: UpdateOptions): Promise<Prepared> {
    const path = dealId(id);
    if (!isPlainObject(patch))
      throw new ValidationError(
        'the patch must be a plain object of deal fields',
        [{ path: '', message: 'must be an object' }],
        { attempts: 0 },
      );
    const stored = options.stored ?? (await this.get(path, options));
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

  #prepareDelete(id: number | string): Prepared {
    return {
      method: 'DELETE',
      url: new URL(`deals/${dealId(id)}`, this.#c.baseUrl),
      retry: 'idempotent',
      warnings: [],
    };
  }

  #prepareDomainList(method: 'POST' | 'DELETE', id: number | string, domainListId: number): Prepared {
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
}
