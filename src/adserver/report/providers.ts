/**
 * Provider logging: each eid's source maps through the registry to a provider id and
 * name, unknown sources to `Unknown` (0); one log record per ad call lists the provider ids present.
 * See docs/wire-format.md#providers-and-their-sources.
 */
import { providerForSource, providerIdForSource } from '../../core/index.js';
import type { Eid, Provider } from '../../core/index.js';
import type { AdCall } from '../parse/index.js';

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
  ids.splice(i, 0, id);
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
export function providerLogRecord(call: AdCall, now: Date = new Date()): ProviderLogRecord {
  // One pass over the eids for both lists: this runs on every ad call.
  const unknownSources: string[] = [];
  const providerIds: number[] = [];
  for (let e = 0; e < call.eids.length; e++) {
    const source = call.eids[e].source;
    const id = idOfSource(source);
    insertSorted(providerIds, id);
    if (id === 0 && unknownSources.length < MAX_UNKNOWN) unknownSources.push(source.slice(0, MAX_UNKNOWN_LENGTH));
  }
  return {
    time: now.toISOString(),
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
export function memoryLogSink(capacity = 1000): { write(record: ProviderLogRecord): void; records(): ProviderLogRecord[] } {
  const buffer: ProviderLogRecord[] = [];
  return {
    write(record) {
      buffer.push(record);
      if (buffer.length > capacity) buffer.splice(0, buffer.length - capacity);
    },
    records: () => buffer.slice(),
  };
}

/** A JSON-lines sink; `flush()` writes the lines still waiting for the end of the tick. */
export type JsonLinesLogSink = ((record: ProviderLogRecord) => void) & { flush(): void };

/**
 * A sink writing one JSON line per record to a stream (a file, stdout, a log shipper's pipe). The lines of one
 * event-loop tick go out in one `write` at its end (or sooner past 64 KB): a stream write per ad call costs more
 * than the record itself (a file stream queues each one for the thread pool). Call `flush()` before exiting.
 */
export function jsonLinesLogSink(stream: { write(chunk: string): unknown }): JsonLinesLogSink {
  let pending = '';
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (!pending) return;
    const chunk = pending;
    pending = '';
    try {
      stream.write(chunk);
    } catch {
      // Logging is best effort: a failing stream loses these lines, never an ad call.
    }
  };
  const sink = (record: ProviderLogRecord) => {
    pending += JSON.stringify(record) + '\n';
    if (pending.length >= 65_536) flush();
    else if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  };
  return Object.assign(sink, { flush });
}
