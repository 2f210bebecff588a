/**
 * Auto-pagination: a list is something to `for await` over across every page, with page-level access, the total
 * count, and `toArray({ limit })`. When the service reports the total, the remaining pages are fetched by offset
 * with bounded concurrency and still yielded in order; otherwise the `Link: next` relation is followed.
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

/** Paging behaviour of one listing. */
export interface ListOptions {
  /** Pages fetched at once once the total is known (default 10; 1 follows `Link: next` one page at a time). */
  concurrency?: number;
  /** Stop after this many items; pages beyond them are never requested. */
  limit?: number;
  /** Called after each page with how many items were yielded so far and the total, when known. */
  onProgress?: (progress: { fetched: number; total?: number }) => void;
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

  constructor(source: PageSource<T>, options: ListOptions = {}) {
    this.#source = source;
    const c = options.concurrency ?? 10;
    if (!Number.isInteger(c) || c < 1) throw new TypeError(`concurrency must be a positive integer, got ${c}`);
    this.#concurrency = c;
    this.#onProgress = options.onProgress;
    this.#limit = options.limit ?? Infinity;
  }

  /** The first page alone, with the total count when the service gives it. */
  firstPage(): Promise<Page<T>> {
    return this.#source.fetchOffset(this.#source.startOffset, this.#source.pageSize);
  }

  /** The total number of items (one request for the first page; undefined when the service does not say). */
  async total(): Promise<number | undefined> {
    return (await this.firstPage()).total;
  }

  /** Every page in order (up to the list's `limit`). */
  pages(): AsyncGenerator<Page<T>, void, undefined> {
    return this.#pages(this.#limit);
  }

  async *#pages(limit: number): AsyncGenerator<Page<T>, void, undefined> {
    const src = this.#source;
    const end = src.startOffset + limit;
    const first = await this.firstPage();
    yield first;
    if (first.items.length === 0 || first.offset + first.items.length >= end) return;
    const total = first.total;
    if (total !== undefined && this.#concurrency > 1) {
      // The service may clamp the page size (at most 100): the first page tells the real one.
      const step =
        first.items.length < src.pageSize && first.offset + first.items.length < total
          ? first.items.length
          : src.pageSize;
      const offsets: number[] = [];
      for (let o = first.offset + first.items.length; o < Math.min(total, end); o += step) offsets.push(o);
      yield* this.#window(offsets, step);
      return;
    }
    let page = first;
    for (;;) {
      const more =
        total !== undefined
          ? page.offset + page.items.length < total
          : page.nextUrl !== undefined || page.items.length >= src.pageSize;
      if (!more || page.items.length === 0 || page.offset + page.items.length >= end) return;
      page =
        page.nextUrl && src.fetchUrl
          ? await src.fetchUrl(page.nextUrl)
          : await src.fetchOffset(page.offset + page.items.length, src.pageSize);
      yield page;
    }
  }

  /** Fetches `offsets` with at most `concurrency` requests in flight, yielding pages in offset order. */
  async *#window(offsets: number[], step: number): AsyncGenerator<Page<T>, void, undefined> {
    const inflight: Promise<Page<T>>[] = [];
    let next = 0;
    const launch = () => {
      const p = this.#source.fetchOffset(offsets[next++], step);
      p.catch(() => undefined); // observed when its turn comes; avoids an unhandled rejection meanwhile
      inflight.push(p);
    };
    try {
      while (next < offsets.length && inflight.length < this.#concurrency) launch();
      while (inflight.length) {
        const page = await inflight.shift()!;
        if (next < offsets.length) launch();
        yield page;
      }
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
    const keyOf = this.#source.keyOf;
    const seen = keyOf ? new Set<unknown>() : undefined;
    let fetched = 0;
    for await (const page of this.#pages(limit)) {
      for (const item of page.items) {
        if (seen) {
          const key = keyOf!(item);
          if (seen.has(key)) continue;
          seen.add(key);
        }
        fetched++;
        yield item;
        if (fetched >= limit) {
          this.#onProgress?.({ fetched, total: page.total });
          return;
        }
      }
      this.#onProgress?.({ fetched, total: page.total });
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

/**
 * Parses an RFC 8288 (formerly 5988) `Link` header into its relations, resolved against `base`. One pass, no
 * backtracking regex: the header comes from the network, so its cost stays linear in its length whatever it holds.
 */
export function parseLinkHeader(header: string | null, base: URL): Record<string, URL> {
  const links: Record<string, URL> = {};
  if (!header) return links;
  const n = header.length;
  let i = 0;
  while (i < n) {
    const open = header.indexOf('<', i);
    if (open < 0) break;
    const close = header.indexOf('>', open + 1);
    if (close < 0) break; // no link can follow: every later `<` lacks its `>` too
    const target = header.slice(open + 1, close);
    const params = readLinkParams(header, close + 1);
    i = params.end;
    const rel = params.rel?.trim();
    if (!rel) continue;
    let url: URL;
    try {
      url = new URL(target, base);
    } catch {
      continue; // An unparseable link is ignored; paging falls back to offsets.
    }
    for (const r of rel.split(/\s+/)) links[r.toLowerCase()] = url;
  }
  return links;
}

const isSpace = (c: string | undefined) => c === ' ' || c === '\t';

/**
 * Reads the `; name=value` parameters after a link's `<…>` up to the comma that ends the link value (commas inside
 * a quoted value do not end it). Returns the first `rel` value and where the next link value starts.
 */
function readLinkParams(h: string, start: number): { rel?: string; end: number } {
  const n = h.length;
  let i = start;
  let rel: string | undefined;
  for (;;) {
    while (i < n && isSpace(h[i])) i++;
    if (i >= n) return { rel, end: n };
    if (h[i] === ',') return { rel, end: i + 1 };
    if (h[i] !== ';') {
      i++; // stray text between parameters is skipped
      continue;
    }
    i++;
    let nameEnd = i;
    while (nameEnd < n && !'=;,'.includes(h[nameEnd])) nameEnd++;
    const name = h.slice(i, nameEnd).trim().toLowerCase();
    i = nameEnd;
    if (h[i] !== '=') continue;
    i++;
    while (i < n && isSpace(h[i])) i++;
    let value: string;
    if (h[i] === '"') {
      const endQuote = h.indexOf('"', i + 1);
      const stop = endQuote < 0 ? n : endQuote;
      value = h.slice(i + 1, stop);
      i = stop + 1;
    } else {
      let stop = i;
      while (stop < n && h[stop] !== ';' && h[stop] !== ',') stop++;
      value = h.slice(i, stop);
      i = stop;
    }
    if (name === 'rel' && rel === undefined) rel = value;
  }
}

/** Throws unless `url` is on the same origin as `base` (a bearer token is never sent elsewhere). */
export function assertSameOrigin(url: URL, base: URL): void {
  if (url.origin !== base.origin) {
    throw new DealApiError(`refusing to follow a pagination link to another origin (${url.origin})`);
  }
}
