/**
 * Provider logging (extended-ids.md §1, §2.2): each eid's source maps through the registry to a provider id and
 * name, unknown sources to `Unknown` (0); one log record per ad call lists the provider ids present.
 */
import { providerForSource } from '../core/index.js';
import type { Eid, Provider } from '../core/index.js';
import type { AdCall } from './parse.js';

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
  return [...new Set(eids.map((e) => providerForSource(e.source).id))].sort((a, b) => a - b);
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
  /** How many issues parsing found. */
  issues: number;
}

/** Where provider log records go: a function, or an object with `write`. Errors it throws are swallowed. */
export type ProviderLogSink = ((record: ProviderLogRecord) => void) | { write(record: ProviderLogRecord): void };

const MAX_UNKNOWN = 10;
const MAX_UNKNOWN_LENGTH = 100;

/** Builds the log record of one ad call. */
export function providerLogRecord(call: AdCall, now: Date = new Date()): ProviderLogRecord {
  const unknownSources: string[] = [];
  for (const hit of providerHits(call.eids)) {
    if (hit.provider.id === 0 && unknownSources.length < MAX_UNKNOWN) unknownSources.push(hit.source.slice(0, MAX_UNKNOWN_LENGTH));
  }
  return {
    time: now.toISOString(),
    endpoint: call.endpoint,
    networkId: call.networkId ?? null,
    siteId: call.siteId ?? null,
    pageId: call.pageId ?? null,
    providerIds: providerIdsOf(call.eids),
    unknownSources,
    issues: call.issues.length,
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
    // Logging is best effort: the ad call goes on (issue #4).
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

/** A sink writing one JSON line per record to a stream (a file, stdout, a log shipper's pipe). */
export function jsonLinesLogSink(stream: { write(chunk: string): unknown }): (record: ProviderLogRecord) => void {
  return (record) => {
    stream.write(JSON.stringify(record) + '\n');
  };
}
