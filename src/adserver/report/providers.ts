/**
 * Provider logging: each eid's source maps through the registry to a provider id and
 * name, unknown sources to `Unknown` (0); one log record per ad call lists the provider ids present.
 * See docs/wire-format.md#providers-and-their-sources.
 */
import { providerForSource, providerIdForSource } from '../../core/index.js';
import type { Eid, Provider } from '../../core/index.js';
import type { AdCall } from '../parse/index.js';
import { ownString } from '../common/index.js';

/** One eid of a call with the provider it maps to. */
export interface ProviderHit {
  /** The eid's source as received. */
  source: string;
  /** Registry provider; `Unknown` (id 0) for an unregistered source. */
  provider: Provider;
  /** How many uids the eid carries. */
  uids: number;
}

/** Maps each eid to its provider, in eid order. */
export function providerHits(eids: readonly Eid[]): ProviderHit[] {
  return eids.map((e) => ({ source: e.source, provider: providerForSource(e.source), uids: e.uids.length }));
}

/** The distinct provider ids present in the eids, ascending (0 once, however many unknown sources). */
export function providerIdsOf(eids: readonly Eid[]): number[] {
  // Every ad call runs this (log and report): a sorted insert into a short array, no Set, no provider objects.
  const ids: number[] = [];
  for (let e = 0; e < eids.length; e++) insertSorted(ids, idOfSource(eids[e].source));
  return ids;
}

// Registry ids of the sources seen, by exact spelling: the registry's lookup trims, lowercases and scans its list.
// Bounded, since sources come from the network.
const sourceIds = new Map<string, number>();
const MAX_CACHED_SOURCES = 1_000;

/** The registry id of an eid source, memoised. */
function idOfSource(source: string): number {
  let id = sourceIds.get(source);
  if (id === undefined) {
    id = providerIdForSource(source);
    if (sourceIds.size < MAX_CACHED_SOURCES) sourceIds.set(source, id);
  }
  return id;
}

/** Adds `id` to the ascending, distinct `ids` unless already there. */
function insertSorted(ids: number[], id: number): void {
  let i = ids.length;
  while (i > 0 && ids[i - 1] > id) i--;
  if (i > 0 && ids[i - 1] === id) return;
  // Shift the larger ones up by hand: a splice call costs more than the few moves of a short list.
  for (let j = ids.length; j > i; j--) ids[j] = ids[j - 1];
  ids[i] = id;
}

// The time of the last record, as ISO text: calls arrive many to a millisecond, and toISOString costs more than
// the rest of the record.
let lastMs = NaN;
let lastIso = '';

/** `now` as ISO 8601 text, reusing the text of the same millisecond. */
function isoOf(now: Date | undefined): string {
  if (now) return now.toISOString();
  const ms = Date.now();
  if (ms !== lastMs) {
    lastIso = new Date(ms).toISOString();
    lastMs = ms;
  }
  return lastIso;
}

/** The log record written once per ad call. */
export interface ProviderLogRecord {
  /** When the call was received, ISO 8601. */
  time: string;
  /** Endpoint hit. */
  endpoint: AdCall['endpoint'];
  /** Network, site and page of the call (null when the call did not carry a valid one). */
  networkId: number | null;
  siteId: number | null;
  pageId: string | null;
  /** Distinct provider ids present, ascending; empty when the call carried no eids. */
  providerIds: number[];
  /** Unregistered sources seen (first 10, each cut to 100 characters), so operators can extend the registry. */
  unknownSources: string[];
  /** How many issues parsing found, those only counted past `maxIssues` included. */
  issues: number;
}

/** Where provider log records go: a function, or an object with `write`. Errors it throws are swallowed. */
export type ProviderLogSink = ((record: ProviderLogRecord) => void) | { write(record: ProviderLogRecord): void };

const MAX_UNKNOWN = 10;
const MAX_UNKNOWN_LENGTH = 100;

/** Builds the log record of one ad call. */
export function providerLogRecord(call: AdCall, now?: Date): ProviderLogRecord {
  // One pass over the eids for both lists: this runs on every ad call.
  const unknownSources: string[] = [];
  const providerIds: number[] = [];
  for (let e = 0; e < call.eids.length; e++) {
    const source = call.eids[e].source;
    const id = idOfSource(source);
    insertSorted(providerIds, id);
    if (id === 0 && unknownSources.length < MAX_UNKNOWN) {
      // A record may be kept (memoryLogSink): a cut source is copied, so it does not keep the whole source.
      const cut = source.length > MAX_UNKNOWN_LENGTH ? ownString(source.slice(0, MAX_UNKNOWN_LENGTH)) : source;
      unknownSources.push(cut);
    }
  }
  return {
    time: isoOf(now),
    endpoint: call.endpoint,
    networkId: call.networkId ?? null,
    siteId: call.siteId ?? null,
    pageId: call.pageId ?? null,
    providerIds,
    unknownSources,
    // Past maxIssues the list ends with one summary entry, which is no issue of its own.
    issues: call.issuesOmitted ? call.issues.length - 1 + call.issuesOmitted : call.issues.length,
  };
}

/**
 * Writes one provider log record for the call to the sink and returns it. A failing sink never fails the call.
 * @example logProviders(call, (r) => process.stdout.write(JSON.stringify(r) + '\n'))
 */
export function logProviders(call: AdCall, sink: ProviderLogSink, now?: Date): ProviderLogRecord {
  const record = providerLogRecord(call, now);
  try {
    if (typeof sink === 'function') sink(record);
    else sink.write(record);
  } catch {
    // Logging is best effort: a broken sink never costs an ad call.
  }
  return record;
}

/** An in-memory sink keeping the last `capacity` records (default 1,000), newest last. */
export function memoryLogSink(capacity = 1000): {
  write(record: ProviderLogRecord): void;
  records(): ProviderLogRecord[];
} {
  const buffer: ProviderLogRecord[] = [];
  return {
    write(record) {
      buffer.push(record);
      if (buffer.length > capacity) buffer.splice(0, buffer.length - capacity);
    },
    records: () => buffer.slice(),
  };
}

/** A JSON-lines sink; `flush()` writes the lines still waiting, at once. */
export type JsonLinesLogSink = ((record: ProviderLogRecord) => void) & { flush(): void };

/** Past this many characters waiting, the lines go out at once, even while the stream asks to wait. */
const MAX_PENDING = 1 << 20;

/** Options of {@link jsonLinesLogSink}. */
export interface JsonLinesLogSinkOptions {
  /**
   * Longest wait of a line before it is written, in ms (default 100); 0 writes the lines of one event-loop tick at its
   * end. Lines go out sooner once `chunkBytes` of them wait.
   */
  flushMs?: number;
  /** Characters of lines gathered into one write (default 16,384). */
  chunkBytes?: number;
}

/**
 * A sink writing one JSON line per record to a stream (a file, stdout, a log shipper's pipe). Lines are gathered
 * and go out together: once `chunkBytes` (16 KB) of them wait, or `flushMs` (100 ms) after the first, since a
 * stream write costs more than the record itself (a file stream hands each one to the thread pool; one write per
 * event-loop tick cost the receiving bench's server about 3–4 µs more per ad call). When the stream's `write` answers
 * false (its buffer is full), the lines wait for its `drain` and go out together, up to 1 MB of them; no line is
 * dropped. Errors are the stream's own (its `error` event). Call `flush()` before exiting.
 */
export function jsonLinesLogSink(
  stream: {
    write(chunk: string): unknown;
    once?(event: 'drain', listener: () => void): unknown;
  },
  options: JsonLinesLogSinkOptions = {},
): JsonLinesLogSink {
  const flushMs = options.flushMs ?? 100;
  const chunkBytes = options.chunkBytes ?? 16_384;
  if (typeof flushMs !== 'number' || !(flushMs >= 0) || !Number.isFinite(flushMs))
    throw new TypeError(`jsonLinesLogSink: flushMs must be a number of ms >= 0 (got ${String(flushMs)})`);
  if (!Number.isInteger(chunkBytes) || chunkBytes < 1)
    throw new TypeError(`jsonLinesLogSink: chunkBytes must be an integer >= 1 (got ${String(chunkBytes)})`);
  let pending = '';
  let scheduled = false;
  let draining = false;
  const write = () => {
    const chunk = pending;
    pending = '';
    try {
      if (stream.write(chunk) === false && typeof stream.once === 'function' && !draining) {
        draining = true;
        stream.once('drain', () => {
          draining = false;
          if (pending && !scheduled) flushSoon();
        });
      }
    } catch {
      // Logging is best effort: a stream that throws loses these lines, never an ad call.
    }
  };
  const flush = () => {
    scheduled = false;
    if (pending) write();
  };
  const tick = () => {
    scheduled = false;
    if (pending && !draining) write();
  };
  // A timer that keeps the process alive at most flushMs, so that lines are not lost when it ends by itself.
  const flushSoon = () => {
    scheduled = true;
    if (flushMs === 0) setImmediate(tick);
    else setTimeout(tick, flushMs);
  };
  const sink = (record: ProviderLogRecord) => {
    pending += JSON.stringify(record) + '\n';
    if (pending.length >= (draining ? MAX_PENDING : chunkBytes)) flush();
    else if (!scheduled && !draining) flushSoon();
  };
  return Object.assign(sink, { flush });
}
