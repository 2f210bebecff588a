/**
 * DealApiClient: the deal management API (spec ../shared/spec/deal-api.md) from Node.
 */
import { inspect } from 'node:util';
import {
  DEAL_WRITE_FIELDS,
  LOOKUP_RESOURCES,
  validateDeal,
  type DealRead,
  type DealReference,
  type DealValidationResult,
  type DealWriteInput,
  type LookupItem,
} from '../rules/index.js';
import { TokenManager, DEFAULT_REALM, type AuthBudget, type Credentials, type Grant, type TokenCache } from './auth.js';
import { ConnectionError, ForbiddenError, NotFoundError, ValidationError, DealApiError, markCreateOutcome, type FieldIssue } from './errors.js';
import { PagedList, assertSameOrigin, parseLinkHeader, type ListOptions, type Page } from './paginate.js';
import { REDACTED, Redactor } from './redact.js';
import { Hooks, type ClientEvents, type ClientListener } from './hooks.js';
import { createWithKey, withDealKeyMarker } from './keyed.js';
import { Transport, type HttpRequest, type HttpResponse, type Logger, type RetryOptions, type RetryPolicy } from './transport.js';

/** Options of {@link DealApiClient}. */
export interface DealApiClientOptions {
  /** The service base address (`{base_url}`), e.g. `https://api.example.com/v1/`. */
  baseUrl: string | URL;
  /** The identity provider address (`{auth_url}`); required unless `token` is given. */
  authUrl?: string | URL;
  /** The audience string given to the caller with the credentials. */
  audience?: string;
  /** client id and secret, plus username and password for the password-realm grant. Kept out of every output. */
  credentials?: Credentials;
  /** `password-realm` (default, spec §5) or `client-credentials`. */
  grant?: Grant;
  /** The password-realm realm (default `Username-Password-Authentication`). */
  realm?: string;
  /** A ready user token; no token flow is run (a 401 is then final). */
  token?: string;
  /** Keeps the user token between processes. */
  tokenCache?: TokenCache;
  /** A fetch implementation (default: the global one); the simulator's in-process fetch works. */
  fetch?: typeof fetch;
  /** Per-attempt timeout in ms (default 30,000). */
  timeoutMs?: number;
  /** Retries: a count, or the full settings (default 3 retries, 500 ms base, 8 s cap, Retry-After up to 60 s). */
  retries?: number | RetryOptions;
  /** Receives one line per request, retry and token refresh; secrets are scrubbed first. */
  logger?: Logger;
  /** Pages fetched at once when listing (default 10; 1 = follow `Link: next` one page at a time). */
  concurrency?: number;
  /** The local authentication budget (default 9 token requests per 5 minutes). */
  authBudget?: AuthBudget;
  /**
   * Before each write, fetch the DSPs, buyers and identity providers the deal names so the rules that depend on
   * them run client-side too (default true). Pure rules always run first, with no request at all.
   */
  referenceChecks?: boolean;
  /** The clock (ms since the epoch), for tests. */
  now?: () => number;
  /** Jitter source, for tests. */
  random?: () => number;
  /** Refresh tokens this long before they expire (default 60,000 ms). */
  refreshSkewMs?: number;
  /** User-Agent header (default `eidkit-deals/<version>`). */
  userAgent?: string;
}

/** Per-call options. */
export interface CallOptions {
  /** Cancels the call (and its retries). */
  signal?: AbortSignal;
}

/** Filters of GET /deals (spec 4.2). Arrays are sent comma-separated, dates as ISO 8601 UTC. */
export interface DealListFilters {
  createdOrModifiedSince?: Date | string;
  isArchived?: boolean;
  isSoonExpired?: boolean;
  isParentDeal?: boolean;
  sortBy?: string;
  sortAsc?: boolean;
  metricsBeginDate?: Date | string;
  metricsEndDate?: Date | string;
  buyerIds?: number[];
  dspIds?: number[];
  partnerIds?: number[];
  formatIds?: number[];
  platformIds?: number[];
  /** Skip this many deals. */
  offset?: number;
  /** Deals per request (default and maximum 100, spec 4.2). */
  pageSize?: number;
}

/** Options of {@link DealsResource.list}. */
export type DealListOptions = DealListFilters & ListOptions & CallOptions;

/** Options of {@link LookupsResource.list}. */
export interface LookupListOptions extends ListOptions, CallOptions {
  /** Only these ids. */
  ids?: Array<number | string>;
  /** Searched in the item names (`extendedSearch`). */
  search?: string;
  /** At most this many items in all. */
  limit?: number;
  /** Skip this many items. */
  offset?: number;
  /** Items per request (default 100). */
  pageSize?: number;
}

/** Options of {@link DealsResource.update}, `pause` and `resume`. */
export interface UpdateOptions extends CallOptions {
  /** The deal as just read: skips reading it again (the merge and the immutability checks use it). */
  stored?: DealRead;
}

/** A deal patch for {@link DealsResource.update}: any write fields; nested objects merge, arrays replace. */
export type DealPatch = Partial<DealWriteInput> & Record<string, unknown>;

/** What {@link DealsResource.create} returns. */
export interface CreatedDeal {
  /** The service-side id (used in paths). */
  id: number;
  /** The `Location` of the new deal. */
  location: string;
  /** The `X-HistoryId` of the creation. */
  historyId?: string;
  /** The deal, when the service returned it. */
  deal?: DealRead;
  /** True when the create's answer was lost and the deal was found by its key instead (`create(deal, { key })`). */
  recovered?: true;
}

/** Options of {@link DealsResource.create}. */
export interface CreateOptions extends CallOptions {
  /** Create it as a copy of this deal (`X-CopyOfDealId`). */
  copyOf?: number | string;
  /**
   * A stable key of yours: written into `callerDealIds` as `eidkit:<key>`, and used to look the deal up when the
   * answer to the create is lost, so the create is never lost nor doubled (docs/deals.md "Deals as code").
   */
  key?: string;
}

/** A write as it would be sent: what `--dry-run` prints. The Authorization header is masked. */
export interface PreparedRequest {
  method: HttpRequest['method'];
  url: string;
  headers: Record<string, string>;
  body?: unknown;
  /** Client-side validation warnings (e.g. frequency capping that will be ignored). */
  warnings: FieldIssue[];
}

/** @internal A write ready to send. */
export interface Prepared {
  method: HttpRequest['method'];
  url: URL;
  headers?: Record<string, string>;
  json?: unknown;
  retry: RetryPolicy;
  warnings: FieldIssue[];
  /** For update: the stored deal when the patch changes nothing (no PUT is needed). */
  unchanged?: DealRead;
  /** For create: a 2xx whose body is cut still resolves (see HttpRequest.keepCutBody). */
  keepCutBody?: boolean;
}

const VERSION = '0.1.0';
const REFERENCE_TTL_MS = 10 * 60_000;
const LOOKUP_NAMES = new Map<string, string>(LOOKUP_RESOURCES.map((r) => [r.toLowerCase(), r]));

function toUrl(value: string | URL, what: string): URL {
  let url: URL;
  try {
    url = new URL(String(value));
  } catch {
    throw new TypeError(`${what} must be an absolute URL`);
  }
  if (!url.pathname.endsWith('/')) url.pathname += '/';
  url.search = '';
  url.hash = '';
  return url;
}

function dealId(id: number | string): string {
  const n = typeof id === 'string' && /^\d+$/.test(id) ? Number(id) : id;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n <= 0) {
    throw new ValidationError(`id must be a positive integer deal id (the service-side id, not dealId), got ${JSON.stringify(id)}`, [
      { path: 'id', message: 'must be a positive integer' },
    ], { attempts: 0 });
  }
  return String(n);
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  const proto = v !== null && typeof v === 'object' && !Array.isArray(v) ? Object.getPrototypeOf(v) : undefined;
  return proto === Object.prototype || proto === null;
}

/**
 * Merges a patch into a deal: `undefined` leaves a field alone, `null` clears it, arrays replace, and nested
 * objects (`apiCompliance`, `hyperLocalTargeting`, …) merge field by field.
 */
export function mergeDeal<T extends Record<string, unknown>>(base: T, patch: Record<string, unknown>): T {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined) continue;
    // Own properties only, defined rather than assigned: a `__proto__` key in a patch (JSON.parse makes those)
    // must become a plain field that validation then refuses, never a prototype change.
    const current = Object.hasOwn(out, key) ? out[key] : undefined;
    const next = isPlainObject(value) && isPlainObject(current) ? mergeDeal(current as Record<string, unknown>, value) : value;
    Object.defineProperty(out, key, { value: next, enumerable: true, writable: true, configurable: true });
  }
  return out as T;
}

/** The write fields of a deal as read (spec 2.6 minus the read-only fields). */
export function writableFields(deal: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of DEAL_WRITE_FIELDS) if (deal[field] !== undefined) out[field] = deal[field];
  return out;
}

function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((v, i) => sameJson(v, b[i]));
  }
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    const ka = Object.keys(a).filter((k) => (a as any)[k] !== undefined);
    const kb = Object.keys(b).filter((k) => (b as any)[k] !== undefined);
    return ka.length === kb.length && ka.every((k) => sameJson((a as any)[k], (b as any)[k]));
  }
  return false;
}

function isoDate(v: Date | string): string {
  return v instanceof Date ? v.toISOString() : v;
}

/** Builds the query string of GET /deals from the filters. */
function dealQuery(filters: DealListFilters): URLSearchParams {
  const q = new URLSearchParams();
  for (const [key, value] of Object.entries(filters)) {
    if (value === undefined || value === null || key === 'offset' || key === 'pageSize') continue;
    if (key === 'concurrency' || key === 'onProgress' || key === 'signal' || key === 'limit') continue;
    if (Array.isArray(value)) q.set(key, value.join(','));
    else if (value instanceof Date) q.set(key, isoDate(value));
    else q.set(key, String(value));
  }
  return q;
}

/** Deal operations: `client.deals`. */
export class DealsResource {
  readonly #c: DealApiClient;
  constructor(client: DealApiClient) {
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
    if (!Number.isInteger(pageSize) || pageSize < 1) throw new TypeError(`pageSize must be a positive integer, got ${pageSize}`);
    const base = new URL('deals', c.baseUrl);
    base.search = dealQuery(options).toString();
    const fetchPage = async (url: URL): Promise<Page<DealRead>> => {
      const res = await c.request({ method: 'GET', url, retry: 'idempotent', signal: options.signal });
      if (!Array.isArray(res.body)) throw new DealApiError(`GET ${url.pathname}: expected a JSON array of deals`, { status: res.status, redact: c.redact });
      const totalHeader = res.headers.get('x-pagination-total-count');
      const total = totalHeader !== null && /^\d+$/.test(totalHeader.trim()) ? Number(totalHeader) : undefined;
      const next = parseLinkHeader(res.headers.get('link'), url).next;
      if (next) assertSameOrigin(next, c.baseUrl);
      const offset = Number(url.searchParams.get('offset') ?? 0);
      return { items: res.body as DealRead[], offset, total, nextUrl: next };
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
      { concurrency: options.concurrency ?? c.concurrency, onProgress: options.onProgress, limit: options.limit },
    );
  }

  /** One deal by its service-side id. */
  async get(id: number | string, options: CallOptions = {}): Promise<DealRead> {
    const res = await this.#c.request({ method: 'GET', url: new URL(`deals/${dealId(id)}`, this.#c.baseUrl), retry: 'idempotent', signal: options.signal });
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
   * const { id: same, recovered } = await client.deals.create(deal, { key: 'spring-fr' }); // safe to run again on failure
   */
  async create(deal: DealWriteInput, options?: CreateOptions & { copyOf?: undefined }): Promise<CreatedDeal>;
  /** A copy of deal `copyOf` with the given fields changed (spec 4.3 X-CopyOfDealId); `{}` copies it as it is. */
  async create(deal: Partial<DealWriteInput> | undefined, options: CreateOptions & { copyOf: number | string }): Promise<CreatedDeal>;
  async create(deal: Partial<DealWriteInput> | undefined, options: CreateOptions = {}): Promise<CreatedDeal> {
    if (options.key !== undefined) {
      const c = this.#c;
      return createWithKey(
        {
          now: () => c.now(),
          maxRecoveries: c.maxRetries,
          send: (marked) => this.create(marked, { ...options, key: undefined } as CreateOptions & { copyOf: number | string }),
          list: (since) => this.list({ createdOrModifiedSince: since, signal: options.signal }),
          urlOf: (id) => new URL(`deals/${id}`, c.baseUrl).href,
          warn: (message) => c.log('warn', message),
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
    const body: any = res.body;
    const fromLocation = /(\d+)\/?$/.exec(location)?.[1];
    const id = typeof body?.id === 'number' ? body.id : fromLocation !== undefined ? Number(fromLocation) : undefined;
    if (id === undefined) {
      const why = res.bodyCut ? 'its body was cut' : 'it named no deal';
      throw markCreateOutcome(new ConnectionError(`POST ${prepared.url.pathname} answered ${res.status} without a Location header and ${why}`, true, { status: res.status, method: 'POST', url: prepared.url.href, attempts: res.attempts, redact: this.#c.redact }));
    }
    const historyId = res.headers.get('x-historyid') ?? undefined;
    const out: CreatedDeal = { id, location: location ? new URL(location, this.#c.baseUrl).href : new URL(`deals/${id}`, this.#c.baseUrl).href };
    if (historyId !== undefined) out.historyId = historyId;
    if (body && typeof body === 'object' && typeof body.id === 'number') out.deal = body as DealRead;
    return out;
  }

  /**
   * Replaces a deal (PUT): every field left out is reset to its default (spec 4.3). Prefer {@link update}.
   * `stored` skips reading the deal for the immutability checks.
   */
  async replace(id: number | string, deal: DealWriteInput, options: CallOptions & { stored?: DealRead } = {}): Promise<DealRead> {
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

  /** Pauses a deal (`isActive` false, spec §3). */
  pause(id: number | string, options: UpdateOptions = {}): Promise<DealRead> {
    return this.update(id, { isActive: false }, options);
  }

  /** Resumes a paused deal (`isActive` true, spec §3). */
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
  async countBreakdown(options: CallOptions = {}): Promise<Record<string, number>> {
    const res = await this.#c.request({ method: 'GET', url: new URL('deals/countBreakdown', this.#c.baseUrl), retry: 'idempotent', signal: options.signal });
    return res.body as Record<string, number>;
  }

  /**
   * Validates a deal client-side as the service would: the pure rules first, then (with `referenceChecks`) the
   * rules that need the DSPs, buyers and identity providers it names. Resolves with the result; never throws for
   * an invalid deal.
   */
  async validate(deal: unknown, context: { mode: 'create' | 'update'; stored?: DealRead; signal?: AbortSignal }): Promise<DealValidationResult> {
    const base = { mode: context.mode, stored: context.stored as any, now: this.#c.now() };
    const pure = validateDeal(deal, base);
    if (!pure.ok || !this.#c.referenceChecks) return pure;
    const reference = await this.#c.reference(deal as Record<string, unknown>, context.signal);
    return validateDeal(deal, { ...base, reference });
  }

  /** The requests a write would send, validated, without sending them (`--dry-run`). */
  readonly dryRun = {
    create: async (deal: Partial<DealWriteInput> | undefined, options: CreateOptions = {}) => {
      const marked = options.key === undefined ? deal : { ...deal, callerDealIds: withDealKeyMarker(deal?.callerDealIds as string[] | null | undefined, options.key) };
      return this.#describe(await this.#prepareCreate(marked, options));
    },
    replace: async (id: number | string, deal: DealWriteInput, options: CallOptions & { stored?: DealRead } = {}) =>
      this.#describe(await this.#prepareReplace(id, deal, options)),
    update: async (id: number | string, patch: DealPatch, options: CallOptions = {}) => this.#describe(await this.#prepareUpdate(id, patch, options)),
    pause: async (id: number | string, options: CallOptions = {}) => this.#describe(await this.#prepareUpdate(id, { isActive: false }, options)),
    resume: async (id: number | string, options: CallOptions = {}) => this.#describe(await this.#prepareUpdate(id, { isActive: true }, options)),
    delete: async (id: number | string) => this.#describe(this.#prepareDelete(id)),
    attachDomainList: async (id: number | string, domainListId: number) => this.#describe(this.#prepareDomainList('POST', id, domainListId)),
    detachDomainList: async (id: number | string, domainListId: number) => this.#describe(this.#prepareDomainList('DELETE', id, domainListId)),
  };

  #describe(p: Prepared): PreparedRequest | null {
    if (p.unchanged) return null;
    const headers: Record<string, string> = { authorization: `Bearer ${REDACTED}`, ...p.headers };
    if (p.json !== undefined) headers['content-type'] = 'application/json';
    const out: PreparedRequest = { method: p.method, url: p.url.href, headers, warnings: p.warnings };
    if (p.json !== undefined) out.body = JSON.parse(this.#c.redact(JSON.stringify(p.json)));
    return out;
  }

  async #checked(deal: unknown, mode: 'create' | 'update', stored: DealRead | undefined, signal?: AbortSignal): Promise<{ value: Record<string, unknown>; warnings: FieldIssue[] }> {
    if (stored && (stored.isEditable === false || stored.isArchived === true)) {
      // The service refuses every edit of an archived deal (spec 2.6 isEditable): no PUT, no quota spent.
      const why = stored.isArchived ? 'archived' : 'not editable';
      throw new ValidationError(`deal ${stored.id} is ${why} and cannot be changed`, [{ path: '', message: `the deal is ${why}` }], { attempts: 0, redact: this.#c.redact });
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

  async #prepareCreate(deal: DealWriteInput | Partial<DealWriteInput> | undefined, options: CallOptions & { copyOf?: number | string }): Promise<Prepared> {
    const prepared = { method: 'POST', url: new URL('deals', this.#c.baseUrl), retry: 'unsent-only', keepCutBody: true } as const;
    if (options.copyOf === undefined) {
      const { value, warnings } = await this.#checked(deal, 'create', undefined, options.signal);
      return { ...prepared, headers: {}, json: value, warnings };
    }
    // A copy (X-CopyOfDealId): the service copies the source deal and lays the body over it, field by field, so
    // that is what is validated; the body sent holds only the fields given (none copies the deal as it is).
    const sourceId = dealId(options.copyOf);
    const given = deal ?? {};
    if (!isPlainObject(given)) throw new ValidationError('the deal must be a plain object of deal fields', [{ path: '', message: 'must be an object' }], { attempts: 0 });
    const source = await this.get(sourceId, options);
    const { value, warnings } = await this.#checked({ ...writableFields(source as unknown as Record<string, unknown>), ...given }, 'create', undefined, options.signal);
    const body = Object.fromEntries(Object.keys(given).filter((k) => value[k] !== undefined).map((k) => [k, value[k]]));
    return { ...prepared, headers: { 'x-copyofdealid': sourceId }, json: body, warnings };
  }

  async #prepareReplace(id: number | string, deal: DealWriteInput, options: CallOptions & { stored?: DealRead }): Promise<Prepared> {
    const path = dealId(id);
    const pure = validateDeal(deal, { mode: 'update', now: this.#c.now() });
    if (!pure.ok) await this.#checked(deal, 'update', undefined); // throws with the issues, before any request
    const stored = options.stored ?? (await this.get(path, options));
    const { value, warnings } = await this.#checked(deal, 'update', stored, options.signal);
    return { method: 'PUT', url: new URL(`deals/${path}`, this.#c.baseUrl), json: { ...value, id: stored.id, dealId: stored.dealId }, retry: 'idempotent', warnings };
  }

  async #prepareUpdate(id: number | string, patch: DealPatch, options: UpdateOptions): Promise<Prepared> {
    const path = dealId(id);
    if (!isPlainObject(patch)) throw new ValidationError('the patch must be a plain object of deal fields', [{ path: '', message: 'must be an object' }], { attempts: 0 });
    const stored = options.stored ?? (await this.get(path, options));
    const current = writableFields(stored as unknown as Record<string, unknown>);
    const merged = mergeDeal(current, patch);
    const { value, warnings } = await this.#checked(merged, 'update', stored, options.signal);
    const prepared: Prepared = { method: 'PUT', url: new URL(`deals/${path}`, this.#c.baseUrl), json: { ...value, id: stored.id, dealId: stored.dealId }, retry: 'idempotent', warnings };
    // Nothing changed: no PUT, no update quota spent.
    if (sameJson(merged, current)) prepared.unchanged = stored;
    return prepared;
  }

  #prepareDelete(id: number | string): Prepared {
    return { method: 'DELETE', url: new URL(`deals/${dealId(id)}`, this.#c.baseUrl), retry: 'idempotent', warnings: [] };
  }

  #prepareDomainList(method: 'POST' | 'DELETE', id: number | string, domainListId: number): Prepared {
    if (!Number.isSafeInteger(domainListId) || domainListId <= 0) {
      throw new ValidationError(`domainListId must be a positive integer, got ${JSON.stringify(domainListId)}`, [{ path: 'domainListId', message: 'must be a positive integer' }], { attempts: 0 });
    }
    // Attaching or detaching the same list twice leaves the same association: safe to retry.
    return { method, url: new URL(`deals/${dealId(id)}/domainlists`, this.#c.baseUrl), json: { domainListId }, retry: 'idempotent', warnings: [] };
  }
}

/** Reference lookups: `client.lookups` (spec 4.1). */
export class LookupsResource {
  readonly #c: DealApiClient;
  constructor(client: DealApiClient) {
    this.#c = client;
  }

  /**
   * Items of a lookup resource (names are case-insensitive), across pages.
   * @example
   * for await (const dsp of client.lookups.list('dsps', { search: 'trade' })) console.log(dsp.id, dsp.name);
   */
  list<T = LookupItem>(resource: string, options: LookupListOptions = {}): PagedList<T> {
    const c = this.#c;
    const name = LOOKUP_NAMES.get(String(resource).toLowerCase());
    if (!name) {
      throw new ValidationError(`unknown lookup resource ${JSON.stringify(resource)}; known: ${LOOKUP_RESOURCES.join(', ')}`, [
        { path: 'resource', message: 'is not a lookup resource of spec 4.1' },
      ], { attempts: 0 });
    }
    const limit = options.limit;
    const pageSize = Math.min(options.pageSize ?? 100, limit ?? Infinity);
    const start = options.offset ?? 0;
    const base = new URL(name, c.baseUrl);
    if (options.ids?.length) base.searchParams.set('ids', options.ids.join(','));
    if (options.search) base.searchParams.set('extendedSearch', options.search);
    const list = new PagedList<T>(
      {
        pageSize: Math.max(1, pageSize),
        startOffset: start,
        fetchOffset: async (offset, size) => {
          const url = new URL(base);
          const remaining = limit === undefined ? size : Math.min(size, start + limit - offset);
          url.searchParams.set('limit', String(Math.max(0, remaining)));
          url.searchParams.set('offset', String(offset));
          if (remaining <= 0) return { items: [], offset };
          const res = await c.request({ method: 'GET', url, retry: 'idempotent', signal: options.signal });
          if (!Array.isArray(res.body)) throw new DealApiError(`GET ${url.pathname}: expected a JSON array`, { status: res.status, redact: c.redact });
          const items = res.body as T[];
          const totalHeader = res.headers.get('x-pagination-total-count');
          const total = totalHeader !== null && /^\d+$/.test(totalHeader.trim()) ? Math.min(Number(totalHeader), limit === undefined ? Infinity : start + limit) : undefined;
          return { items, offset, total: total === Infinity ? undefined : total };
        },
      },
      { concurrency: options.concurrency ?? 1, onProgress: options.onProgress },
    );
    return list;
  }
}

/**
 * The deal management API client.
 *
 * @example
 * import { DealApiClient } from 'eidkit/deals';
 * const client = new DealApiClient({
 *   baseUrl: process.env.DEALS_BASE_URL, authUrl: process.env.DEALS_AUTH_URL, audience: process.env.DEALS_AUDIENCE,
 *   credentials: { clientId, clientSecret, username, password },
 * });
 * for await (const deal of client.deals.list()) console.log(deal.id, deal.name);
 */
export class DealApiClient {
  /** Deal operations. */
  readonly deals: DealsResource;
  /** Reference lookups. */
  readonly lookups: LookupsResource;
  /** The service base address. */
  readonly baseUrl: URL;
  /** The identity provider address. */
  readonly authUrl?: URL;
  /** Pages fetched at once when listing. */
  readonly concurrency: number;
  /** Whether writes look up DSPs, buyers and identity providers for the rules first. */
  readonly referenceChecks: boolean;

  readonly #redactor = new Redactor();
  readonly #transport: Transport;
  readonly #tokens: TokenManager;
  readonly #now: () => number;
  readonly #logger?: Logger;
  readonly #grant: Grant;
  readonly #referenceCache = new Map<string, { at: number; item: unknown }>();
  readonly #hooks = new Hooks((event, err) => this.log('warn', `a '${event}' listener threw: ${(err as Error)?.message ?? err}`));
  /** @internal Retries after the first attempt (also the recoveries of a keyed create). */
  readonly maxRetries: number;

  constructor(options: DealApiClientOptions) {
    if (!options || !options.baseUrl) throw new TypeError('DealApiClient needs { baseUrl }');
    this.baseUrl = toUrl(options.baseUrl, 'baseUrl');
    if (options.authUrl) this.authUrl = toUrl(options.authUrl, 'authUrl');
    if (!options.token && !this.authUrl) throw new TypeError('DealApiClient needs { authUrl } (or a ready { token })');
    this.#now = options.now ?? Date.now;
    this.#logger = options.logger;
    this.#grant = options.grant ?? 'password-realm';
    this.concurrency = options.concurrency ?? 10;
    this.referenceChecks = options.referenceChecks ?? true;
    const retries = typeof options.retries === 'number' ? { maxRetries: options.retries } : (options.retries ?? {});
    this.maxRetries = retries.maxRetries ?? 3;
    const fetchImpl = options.fetch ?? globalThis.fetch;
    if (typeof fetchImpl !== 'function') throw new TypeError('no fetch: pass { fetch } on this runtime');
    this.#transport = new Transport({
      fetch: fetchImpl,
      timeoutMs: options.timeoutMs ?? 30_000,
      retry: { maxRetries: retries.maxRetries ?? 3, baseDelayMs: retries.baseDelayMs ?? 500, maxDelayMs: retries.maxDelayMs ?? 8_000, maxRetryAfterMs: retries.maxRetryAfterMs ?? 60_000 },
      logger: options.logger,
      redactor: this.#redactor,
      userAgent: options.userAgent ?? `eidkit-deals/${VERSION} node/${process.versions.node}`,
      random: options.random,
      hooks: this.#hooks,
    });
    this.#tokens = new TokenManager({
      transport: this.#transport,
      redactor: this.#redactor,
      baseUrl: this.baseUrl,
      authUrl: this.authUrl ?? this.baseUrl,
      audience: options.audience ?? '',
      grant: this.#grant,
      realm: options.realm ?? DEFAULT_REALM,
      credentials: options.credentials ? { ...options.credentials } : undefined,
      token: options.token,
      cache: options.tokenCache,
      budget: { maxAttempts: options.authBudget?.maxAttempts ?? 9, windowMs: options.authBudget?.windowMs ?? 300_000 },
      now: this.#now,
      logger: options.logger,
      refreshSkewMs: options.refreshSkewMs ?? 60_000,
    });
    this.deals = new DealsResource(this);
    this.lookups = new LookupsResource(this);
  }

  /**
   * Listens to every HTTP attempt: `request` (method, url, attempt), `response` (+ status or error, elapsedMs) and
   * `retry` (+ status, error, delayMs, elapsedMs). URLs are scrubbed; no header or body is ever passed.
   * @example
   * client.on('response', (e) => metrics.timing('deal_api', e.elapsedMs, { method: e.method, status: e.status }));
   */
  on<E extends keyof ClientEvents>(event: E, listener: ClientListener<E>): this {
    this.#hooks.on(event, listener);
    return this;
  }

  /** Removes a listener added with {@link on}. */
  off<E extends keyof ClientEvents>(event: E, listener: ClientListener<E>): this {
    this.#hooks.off(event, listener);
    return this;
  }

  /** Obtains (or returns the cached) user token; `eidkit login` uses it. */
  async authenticate(): Promise<void> {
    await this.#tokens.getToken();
  }

  /** Token and authorize request counts, for diagnostics. */
  get authStats(): { tokenRequests: number; authorizeRequests: number } {
    return { ...this.#tokens.stats };
  }

  /** @internal The clock. */
  now(): number {
    return this.#now();
  }

  /** @internal Scrubs secrets from text. */
  get redact(): (text: string) => string {
    return this.#redactor.redact;
  }

  /** @internal Writes a scrubbed log line. */
  log(level: keyof Logger, message: string): void {
    const fn = this.#logger?.[level];
    if (typeof fn === 'function') fn.call(this.#logger, this.#redactor.redact(message));
  }

  /** @internal An authenticated request to the service. */
  request(req: Omit<HttpRequest, 'token' | 'onUnauthorized'>): Promise<HttpResponse> {
    return this.#transport.send({ ...req, token: () => this.#tokens.getToken(), onUnauthorized: (t) => this.#tokens.invalidate(t) });
  }

  /** @internal Sends a prepared write. */
  send(p: Prepared, signal?: AbortSignal): Promise<HttpResponse> {
    return this.request({ method: p.method, url: p.url, headers: p.headers, json: p.json, retry: p.retry, keepCutBody: p.keepCutBody, signal });
  }

  /** @internal The reference items a deal names (DSPs, buyers of a guaranteed deal, its identity provider). */
  async reference(deal: Record<string, unknown>, signal?: AbortSignal): Promise<DealReference> {
    const wanted: Array<[keyof DealReference & string, number[]]> = [];
    const ids = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is number => Number.isSafeInteger(x)) : []);
    if (ids(deal.dspIds).length) wanted.push(['dsps', ids(deal.dspIds)]);
    if (deal.pricingModel === 3 && ids(deal.buyerIds).length) wanted.push(['buyers', ids(deal.buyerIds)]);
    if (Number.isSafeInteger(deal.identityProviderId)) wanted.push(['identityProviders', [deal.identityProviderId as number]]);
    const reference: DealReference = {};
    await Promise.all(
      wanted.map(async ([resource, list]) => {
        const items: Array<{ id: number }> = [];
        const missing: number[] = [];
        for (const id of list) {
          const hit = this.#referenceCache.get(`${resource}:${id}`);
          if (hit && this.#now() - hit.at < REFERENCE_TTL_MS) items.push(hit.item as { id: number });
          else missing.push(id);
        }
        if (missing.length) {
          try {
            for await (const item of this.lookups.list<{ id: number }>(resource, { ids: missing, signal })) {
              this.#referenceCache.set(`${resource}:${item.id}`, { at: this.#now(), item });
              items.push(item);
            }
          } catch (err) {
            // DSP callers may not read identity providers (spec §7): that rule is then left to the service.
            if (!(err instanceof ForbiddenError)) throw err;
          }
        }
        (reference as any)[resource] = items;
      }),
    );
    return reference;
  }

  /** A secret-free description. */
  toJSON(): Record<string, unknown> {
    return { baseUrl: this.baseUrl.href, authUrl: this.authUrl?.href, grant: this.#grant, credentials: REDACTED };
  }

  [inspect.custom](): string {
    return `DealApiClient ${inspect(this.toJSON())}`;
  }
}
