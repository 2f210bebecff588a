/**
 * DealsResource (`client.deals`): list, read, create, replace, update, pause, resume and delete deals, attach and
 * detach domain lists, count them by status, validate them client-side, and `dryRun` every write. Listing is in
 * ./deal-list.ts, the validated requests of the writes in ./deal-requests.ts; this file sends them and reads the
 * answers.
 */
import type { CountBreakdown, DealRead, DealValidationResult, DealWriteInput } from '../rules/index.js';
import { ConnectionError, NotFoundError, DealApiError, markCreateOutcome } from './errors.js';
import type { PagedList } from './paginate.js';
import { createWithKey, withDealKeyMarker } from './keyed.js';
import type { HttpResponse } from './transport.js';
import type { ClientCore } from './core.js';
import { listDeals } from './deal-list.js';
import { DealRequests, readDeal } from './deal-requests.js';
import type { CallOptions, CreatedDeal, CreateOptions, DealListOptions, DealPatch, UpdateOptions } from './options.js';

/** Deal operations: `client.deals`. */
export class DealsResource {
  readonly #c: ClientCore;
  readonly #requests: DealRequests;
  constructor(client: ClientCore) {
    this.#c = client;
    this.#requests = new DealRequests(client);
  }

  /**
   * Every deal of the caller's company matching the filters, across pages.
   * @example
   * for await (const deal of client.deals.list({ isArchived: false, sortBy: 'id' })) console.log(deal.name);
   */
  list(options: DealListOptions = {}): PagedList<DealRead> {
    return listDeals(this.#c, options);
  }

  /** One deal by its service-side id. */
  get(id: number | string, options: CallOptions = {}): Promise<DealRead> {
    return readDeal(this.#c, id, options);
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
    const prepared = await this.#requests.create(deal, options);
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
    const prepared = await this.#requests.replace(id, deal, options);
    return (await this.#c.send(prepared, options.signal)).body as DealRead;
  }

  /**
   * Reads the deal, merges the patch, validates the result and PUTs it, so fields left out of the patch keep
   * their stored values (a bare PUT would reset them). A patch that changes nothing sends no PUT.
   * @example
   * await client.deals.update(42, { name: 'Spring sale', apiCompliance: { isVpaidCompliant: true } });
   */
  async update(id: number | string, patch: DealPatch, options: UpdateOptions = {}): Promise<DealRead> {
    const prepared = await this.#requests.update(id, patch, options);
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
      await this.#c.send(this.#requests.delete(id), options.signal);
    } catch (err) {
      if (err instanceof NotFoundError && (err.attempts ?? 1) > 1) return;
      throw err;
    }
  }

  /** Attaches a domain list to a deal (403 for DSP callers). */
  async attachDomainList(id: number | string, domainListId: number, options: CallOptions = {}): Promise<void> {
    await this.#c.send(this.#requests.domainList('POST', id, domainListId), options.signal);
  }

  /** Detaches a domain list from a deal (403 for DSP callers). */
  async detachDomainList(id: number | string, domainListId: number, options: CallOptions = {}): Promise<void> {
    try {
      await this.#c.send(this.#requests.domainList('DELETE', id, domainListId), options.signal);
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
  validate(
    deal: unknown,
    context: { mode: 'create' | 'update'; stored?: DealRead; signal?: AbortSignal },
  ): Promise<DealValidationResult> {
    return this.#requests.validate(deal, context);
  }

  /** The requests a write would send, validated, without sending them (`--dry-run`). */
  readonly dryRun = {
    create: async (deal: Partial<DealWriteInput> | undefined, options: CreateOptions = {}) => {
      const marked =
        options.key === undefined
          ? deal
          : { ...deal, callerDealIds: withDealKeyMarker(deal?.callerDealIds, options.key) };
      return this.#requests.describe(await this.#requests.create(marked, options));
    },
    replace: async (id: number | string, deal: DealWriteInput, options: CallOptions & { stored?: DealRead } = {}) =>
      this.#requests.describe(await this.#requests.replace(id, deal, options)),
    update: async (id: number | string, patch: DealPatch, options: CallOptions = {}) =>
      this.#requests.describe(await this.#requests.update(id, patch, options)),
    pause: async (id: number | string, options: CallOptions = {}) =>
      this.#requests.describe(await this.#requests.update(id, { isActive: false }, options)),
    resume: async (id: number | string, options: CallOptions = {}) =>
      this.#requests.describe(await this.#requests.update(id, { isActive: true }, options)),
    delete: async (id: number | string) => this.#requests.describe(this.#requests.delete(id)),
    attachDomainList: async (id: number | string, domainListId: number) =>
      this.#requests.describe(this.#requests.domainList('POST', id, domainListId)),
    detachDomainList: async (id: number | string, domainListId: number) =>
      this.#requests.describe(this.#requests.domainList('DELETE', id, domainListId)),
  };
}
