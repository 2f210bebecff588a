/**
 * Auto-pagination: a list is something to `for await` over across every page, with page-level access, the total
 * count, and `toArray({ limit })`. When the service reports the total, the remaining pages are fetched by offset
 * with bounded concurrency and still yielded in order; otherwise the `Link: next` relation is followed. Pages are
 * requested lazily, and a listing is bounded whatever the service says (docs/deals.md "Paging"): at most `maxPages`
 * requests and `maxItems` items, a `next` link already followed or one that goes back is refused, and so is a page
 * that brings nothing new. Each refusal is a {@link PaginationError} thrown after the items already listed.
 */
import { DealApiError } from './errors.js';

/** One page of results. */
export interface Page<T> {
  items: T[];
  /** Offset of the first item of this page. */
  offset: number;
  /** The total across every page (`X-Pagination-Total-Count`), when the service said. */
  total?: number;
  /** Absolute URL of the next page (RFC 5988 `Link: rel="next"`), when the service said. */
  nextUrl?: URL;
  /** The URL this page was fetched from, when it is known: a `next` link back to it is refused. */
  url?: URL;
}

/** Fetches one page: by offset, or by a `next` URL taken from the previous page. */
export interface PageSource<T> {
  /** Items per request the caller wants (the service may clamp it; the first page tells). */
  pageSize: number;
  /** Offset of the first item wanted. */
  startOffset: number;
  /** Fetches the page at `offset`. */
  fetchOffset(offset: number, limit: number): Promise<Page<T>>;
  /** Fetches a page by the `next` URL of the previous one (defaults to offset paging). */
  fetchUrl?(url: URL): Promise<Page<T>>;
  /** Identity of an item, to yield each item once even when offsets shift under concurrent writes. */
  keyOf?: (item: T) => unknown;
}

/** Default of {@link ListOptions.maxPages}: 1,000 pages of 100 deals. */
export const DEFAULT_MAX_PAGES = 1_000;
/** Default of {@link ListOptions.maxItems}: a company creating 15 deals a day (the quota) for 18 years. */
export const DEFAULT_MAX_ITEMS = 100_000;

/** Paging behaviour of one listing. */
export interface ListOptions {
  /** Pages fetched at once once the total is known (default 10; 1 follows `Link: next` one page at a time). */
  concurrency?: number;
  /** Stop after this many items; pages beyond them are never requested. */
  limit?: number;
  /** Most requests one listing makes, the first page included (default 1,000); more: a {@link PaginationError}. */
  maxPages?: number;
  /**
   * Most items one listing holds (default 100,000): a service reporting more than that (beyond `limit`), or
   * yielding more, ends it with a {@link PaginationError} after the items already listed.
   */
  maxItems?: number;
  /** Called after each page with how many items were yielded so far and the total, when known. */
  onProgress?: (progress: { fetched: number; total?: number }) => void;
}

/** Why a listing was stopped: see {@link PaginationError}. */
export type PaginationProblem = 'too-many-items' | 'too-many-pages' | 'repeated-next' | 'not-advancing';

/**
 * A listing stopped because the service's paging cannot be trusted or would not end: a total or a number of items
 * over `maxItems`, more than `maxPages` requests, a `next` link to a page already fetched or back to an earlier
 * offset, or a page holding only items already listed. Thrown after the items listed so far (`listed` of them).
 */
export class PaginationError extends DealApiError {
  static override readonly errorName: string = 'PaginationError';
  /** What was wrong. */
  readonly problem: PaginationProblem;
  /** Items yielded before the listing stopped. */
  readonly listed: number;
  constructor(message: string, problem: PaginationProblem, listed: number) {
    super(`listing stopped after ${listed} items: ${message}`, { code: problem });
    this.problem = problem;
    this.listed = listed;
  }
}

const count = (n: number) => n.toLocaleString('en-US');

/** A whole number ≥ 1 (Infinity allowed for caps), or a TypeError naming the option. */
function positive(value: number, name: string, allowInfinity: boolean): number {
  if ((Number.isInteger(value) && value >= 1) || (allowInfinity && value === Infinity)) return value;
  throw new TypeError(`${name} must be a positive integer, got ${value}`);
}

/** A URL as compared for repeats: its query parameters sorted, so that reordering them does not make it new. */
function pageKey(url: URL): string {
  const params = [...url.searchParams].sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0));
  return `${url.origin}${url.pathname}?${new URLSearchParams(params).toString()}`;
}

/** The `offset` query parameter of a URL, when it has a usable one. */
function offsetOf(url: URL): number | undefined {
  const raw = url.searchParams.get('offset');
  const n = raw === null || !/^\d{1,15}$/.test(raw) ? NaN : Number(raw);
  return Number.isFinite(n) ? n : undefined;
}

/** What one iteration of a listing has seen: requests made, pages fetched, items yielded and their keys. */
class Walk<T> {
  requests = 0;
  yielded = 0;
  readonly fetched = new Set<string>();
  readonly seen: Set<unknown> | undefined;
  constructor(
    readonly keyOf: ((item: T) => unknown) | undefined,
    readonly maxPages: number,
  ) {
    this.seen = keyOf ? new Set() : undefined;
  }

  /** Counts one more request, refusing it past `maxPages`. */
  request(): void {
    if (this.requests >= this.maxPages) throw this.tooManyPages();
    this.requests++;
  }

  /** The error of a request past `maxPages`. */
  tooManyPages(): PaginationError {
    const message = `more than ${count(this.maxPages)} pages to request (maxPages): list fewer or raise it`;
    return new PaginationError(message, 'too-many-pages', this.yielded);
  }

  /** Remembers where a page came from. */
  fetchedFrom(page: Page<T>): void {
    if (page.url) this.fetched.add(pageKey(page.url));
  }

  /** The items of a page not yielded before (all of them without `keyOf`). */
  fresh(page: Page<T>): T[] {
    if (!this.seen) return page.items;
    const out: T[] = [];
    for (const item of page.items) {
      const key = this.keyOf!(item);
      if (this.seen.has(key)) continue;
      this.seen.add(key);
      out.push(item);
    }
    return out;
  }
}

/**
 * A lazily fetched listing. Nothing is requested until it is iterated.
 *
 * @example
 * for await (const deal of client.deals.list({ isArchived: false })) console.log(deal.id);
 * const first50 = await client.deals.list().toArray({ limit: 50 });
 */
export class PagedList<T> implements AsyncIterable<T> {
  readonly #source: PageSource<T>;
  readonly #concurrency: number;
  readonly #onProgress?: ListOptions['onProgress'];
  readonly #limit: number;
  readonly #maxPages: number;
  readonly #maxItems: number;

  constructor(source: PageSource<T>, options: ListOptions = {}) {
    this.#source = source;
    this.#concurrency = positive(options.concurrency ?? 10, 'concurrency', false);
    this.#onProgress = options.onProgress;
    this.#limit = options.limit ?? Infinity;
    this.#maxPages = positive(options.maxPages ?? DEFAULT_MAX_PAGES, 'maxPages', true);
    this.#maxItems = positive(options.maxItems ?? DEFAULT_MAX_ITEMS, 'maxItems', true);
  }

  /** The first page alone, with the total count when the service gives it. */
  firstPage(): Promise<Page<T>> {
    return this.#source.fetchOffset(this.#source.startOffset, this.#source.pageSize);
  }

  /** The total number of items (one request for the first page; undefined when the service does not say). */
  async total(): Promise<number | undefined> {
    return (await this.firstPage()).total;
  }

  /** Every page in order (up to the list's `limit`), each with its items as the service sent them. */
  async *pages(): AsyncGenerator<Page<T>, void, undefined> {
    const walk = new Walk<T>(undefined, this.#maxPages);
    for await (const page of this.#pages(this.#limit, walk)) {
      walk.yielded += page.items.length;
      yield page;
    }
  }

  async *#pages(limit: number, walk: Walk<T>): AsyncGenerator<Page<T>, void, undefined> {
    const src = this.#source;
    const end = src.startOffset + limit;
    walk.request();
    const first = await this.firstPage();
    walk.fetchedFrom(first);
    yield first;
    if (first.items.length === 0 || first.offset + first.items.length >= end) return;
    const total = first.total;
    // A total the listing may not hold is refused at once, before a page more is asked for.
    if (total !== undefined && Math.min(total - src.startOffset, limit) > this.#maxItems) {
      const message =
        `the service reports ${count(total)} items, more than the ${count(this.#maxItems)} one listing may hold ` +
        '(maxItems): list fewer (filters, a limit) or raise it';
      throw new PaginationError(message, 'too-many-items', walk.yielded);
    }
    if (total !== undefined && this.#concurrency > 1) {
      // The service may clamp the page size (at most 100): the first page tells the real one.
      const step =
        first.items.length < src.pageSize && first.offset + first.items.length < total
          ? first.items.length
          : src.pageSize;
      yield* this.#window(first.offset + first.items.length, Math.min(total, end), step, walk);
      return;
    }
    let page = first;
    for (;;) {
      const more =
        total !== undefined
          ? page.offset + page.items.length < total
          : page.nextUrl !== undefined || page.items.length >= src.pageSize;
      if (!more || page.items.length === 0 || page.offset + page.items.length >= end) return;
      const next = page.nextUrl && src.fetchUrl ? page.nextUrl : undefined;
      if (next) this.#checkNext(page, next, walk);
      walk.request();
      page = next ? await src.fetchUrl!(next) : await src.fetchOffset(page.offset + page.items.length, src.pageSize);
      walk.fetchedFrom(page);
      yield page;
    }
  }

  /** Refuses a `next` link to a page already fetched, or to an offset not past the current page's. */
  #checkNext(page: Page<T>, next: URL, walk: Walk<T>): void {
    if (walk.fetched.has(pageKey(next))) {
      const where = `${next.pathname}${next.search}`;
      const shown = where.length > 200 ? `${where.slice(0, 199)}…` : where;
      const message = `the service's next link leads back to a page already fetched (${shown})`;
      throw new PaginationError(message, 'repeated-next', walk.yielded);
    }
    const to = offsetOf(next);
    if (to !== undefined && to <= page.offset) {
      const message = `the service's next link does not advance (offset ${page.offset}, then ${to})`;
      throw new PaginationError(message, 'not-advancing', walk.yielded);
    }
  }

  /**
   * Fetches the pages from offset `from` to `to` by `step`, at most `concurrency` requests in flight, yielding them
   * in offset order. Offsets are made as they are requested; after a short page, no more are.
   */
  async *#window(from: number, to: number, step: number, walk: Walk<T>): AsyncGenerator<Page<T>, void, undefined> {
    const inflight: Promise<Page<T>>[] = [];
    let next = from;
    let ended = false;
    let capped = false;
    // Past maxPages no request is made, and the pages already requested are yielded before the error.
    const launch = () => {
      if (walk.requests >= walk.maxPages) {
        capped = true;
        return;
      }
      walk.request();
      const p = this.#source.fetchOffset(next, step);
      next += step;
      p.catch(() => undefined); // observed when its turn comes; avoids an unhandled rejection meanwhile
      inflight.push(p);
    };
    try {
      while (!capped && next < to && inflight.length < this.#concurrency) launch();
      while (inflight.length) {
        const page = await inflight.shift()!;
        // A short page is the end, whatever the total said (deals deleted meanwhile, or a total that lied).
        if (page.items.length < step) ended = true;
        if (!ended && !capped && next < to) launch();
        yield page;
      }
      if (capped && !ended) throw walk.tooManyPages();
    } finally {
      // Stopped early (break, error): let requests already sent settle quietly.
      for (const p of inflight) p.catch(() => undefined);
    }
  }

  [Symbol.asyncIterator](): AsyncGenerator<T, void, undefined> {
    return this.#items(this.#limit);
  }

  async *#items(limit: number): AsyncGenerator<T, void, undefined> {
    if (limit <= 0) return;
    const walk = new Walk<T>(this.#source.keyOf, this.#maxPages);
    for await (const page of this.#pages(limit, walk)) {
      const items = walk.fresh(page);
      // A page of items all listed already is a service going round in circles (the first page cannot be one).
      if (items.length === 0 && page.items.length > 0) {
        const message = `the service's pages are not advancing: the page at offset ${page.offset} holds only items already listed`;
        throw new PaginationError(message, 'not-advancing', walk.yielded);
      }
      for (const item of items) {
        if (walk.yielded >= this.#maxItems) {
          const message = `more than ${count(this.#maxItems)} items (maxItems): list fewer or raise it`;
          throw new PaginationError(message, 'too-many-items', walk.yielded);
        }
        walk.yielded++;
        yield item;
        if (walk.yielded >= limit) {
          this.#onProgress?.({ fetched: walk.yielded, total: page.total });
          return;
        }
      }
      this.#onProgress?.({ fetched: walk.yielded, total: page.total });
    }
  }

  /** Collects up to `limit` items (a limit is required, so a huge listing is never loaded by accident). */
  async toArray(options: { limit: number }): Promise<T[]> {
    const limit = options?.limit;
    if (typeof limit !== 'number' || !(limit >= 0) || Number.isNaN(limit)) {
      throw new TypeError('toArray needs { limit }: a non-negative number of items (Infinity for all)');
    }
    const out: T[] = [];
    for await (const item of this.#items(Math.min(limit, this.#limit))) out.push(item);
    return out;
  }
}
