import { describe, expect, test } from 'vitest';
import { EventEmitter } from 'node:events';
import {
  jsonLinesLogSink,
  logProviders,
  memoryLogSink,
  providerHits,
  providerIdsOf,
} from '../../../src/adserver/index.js';
import { EUID, HEM, ID5, IP, RAMP, UID2, UNKNOWN, callWith } from '../fixtures.js';

describe('registry mapping of received eids', () => {
  test('maps known sources to their provider id and name, both Unified ID 2.0 sources included', () => {
    const hits = providerHits([ID5, UID2, EUID, RAMP]);
    expect(hits.map((h) => [h.source, h.provider.id, h.provider.name])).toEqual([
      ['id5-sync.com', 2, 'ID5'],
      ['uidapi.com', 4, 'Unified ID 2.0'],
      ['euid.eu', 5, 'European Unified ID'],
      ['liveramp.com', 1, 'LiveRamp RampID'],
    ]);
  });

  test('maps the non-domain sources hemsha256 to 42 and ip to 43', () => {
    expect(providerHits([HEM, IP]).map((h) => h.provider.id)).toEqual([42, 43]);
  });

  test('maps an unregistered source to Unknown (0), listed once however many there are', () => {
    const other = { source: 'another.example', uids: [{ id: '1' }] };
    expect(providerHits([UNKNOWN])[0].provider).toMatchObject({ id: 0, name: 'Unknown' });
    expect(providerIdsOf([UID2, UNKNOWN, other, ID5])).toEqual([0, 2, 4]);
  });
});

describe('provider log', () => {
  test('writes one record per ad call with the provider ids present', () => {
    const sink = memoryLogSink();
    logProviders(callWith({ eids: [UID2, ID5, UNKNOWN] }), sink, new Date('2025-03-01T10:00:00Z'));
    logProviders(callWith({ eids: [] }), sink, new Date('2025-03-01T10:00:01Z'));
    expect(sink.records()).toEqual([
      {
        time: '2025-03-01T10:00:00.000Z',
        endpoint: 'ac',
        networkId: 1234,
        siteId: null,
        pageId: null,
        providerIds: [0, 2, 4],
        unknownSources: ['example.org'],
        issues: 0,
      },
      {
        time: '2025-03-01T10:00:01.000Z',
        endpoint: 'ac',
        networkId: 1234,
        siteId: null,
        pageId: null,
        providerIds: [],
        unknownSources: [],
        issues: 0,
      },
    ]);
  });

  test('a sink that throws does not fail the call', () => {
    const record = logProviders(callWith({ eids: [ID5] }), () => {
      throw new Error('disk full');
    });
    expect(record.providerIds).toEqual([2]);
  });

  test('the memory sink keeps only the last records up to its capacity', () => {
    const sink = memoryLogSink(2);
    for (const eids of [[ID5], [UID2], [EUID]]) logProviders(callWith({ eids }), sink);
    expect(sink.records().map((r) => r.providerIds)).toEqual([[4], [5]]);
  });

  test('the JSON-lines sink writes one parseable line per call', async () => {
    const lines: string[] = [];
    const sink = jsonLinesLogSink({ write: (s: string) => lines.push(s) }, { flushMs: 0 });
    logProviders(callWith({ eids: [HEM, IP] }), sink);
    await new Promise((r) => setImmediate(r));
    expect(lines).toHaveLength(1);
    expect(lines[0].endsWith('\n')).toBe(true);
    expect(JSON.parse(lines[0]).providerIds).toEqual([42, 43]);
  });

  test('with flushMs: 0 the JSON-lines sink writes the lines of one tick in one write, in call order; flush() at once', async () => {
    const chunks: string[] = [];
    const sink = jsonLinesLogSink({ write: (s: string) => chunks.push(s) }, { flushMs: 0 });
    for (const eids of [[ID5], [UID2], [EUID]]) logProviders(callWith({ eids }), sink);
    expect(chunks).toHaveLength(0);
    await new Promise((r) => setImmediate(r));
    expect(chunks).toHaveLength(1);
    expect(
      chunks[0]
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l).providerIds),
    ).toEqual([[2], [4], [5]]);
    logProviders(callWith({ eids: [ID5] }), sink);
    sink.flush();
    expect(chunks).toHaveLength(2);
  });

  test('the JSON-lines sink waits for drain when the stream is full, then writes every waiting line at once', async () => {
    const chunks: string[] = [];
    const stream = Object.assign(new EventEmitter(), { write: (s: string) => chunks.push(s) < 2 });
    const sink = jsonLinesLogSink(stream, { flushMs: 0 });
    const tick = () => new Promise((r) => setImmediate(r));
    logProviders(callWith({ eids: [ID5] }), sink);
    await tick();
    expect(chunks).toHaveLength(1); // the first write answers true, the stream is not full yet
    logProviders(callWith({ eids: [UID2] }), sink);
    await tick();
    expect(chunks).toHaveLength(2); // this one answers false: full
    for (const eids of [[EUID], [ID5, UID2]]) logProviders(callWith({ eids }), sink);
    await tick();
    await tick();
    expect(chunks).toHaveLength(2); // nothing more until drain
    stream.emit('drain');
    await tick();
    expect(chunks).toHaveLength(3);
    expect(
      chunks[2]
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l).providerIds),
    ).toEqual([[5], [2, 4]]);
    logProviders(callWith({ eids: [EUID] }), sink);
    sink.flush(); // before exiting: written even while the stream asks to wait
    expect(chunks).toHaveLength(4);
  });

  test('by default the JSON-lines sink gathers the lines of many ticks: out after flushMs, or once chunkBytes wait', async () => {
    const chunks: string[] = [];
    const sink = jsonLinesLogSink({ write: (s: string) => chunks.push(s) }, { flushMs: 50 });
    const t0 = performance.now();
    for (let i = 0; i < 3; i++) {
      logProviders(callWith({ eids: [ID5] }), sink);
      await new Promise((r) => setImmediate(r));
    }
    expect(chunks).toHaveLength(0);
    await new Promise((r) => setTimeout(r, 60));
    expect(chunks).toHaveLength(1);
    expect(chunks[0].trimEnd().split('\n')).toHaveLength(3);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(49);
    const small = jsonLinesLogSink({ write: (s: string) => chunks.push(s) }, { chunkBytes: 200 });
    for (let i = 0; i < 3; i++) logProviders(callWith({ eids: [ID5, UID2] }), small); // ~100 characters each
    expect(chunks).toHaveLength(2); // the second line reached 200 characters: written at once
    expect(chunks[1].trimEnd().split('\n')).toHaveLength(2);
    small.flush();
    expect(chunks).toHaveLength(3);
    expect(() => jsonLinesLogSink({ write: () => true }, { flushMs: -1 })).toThrow(/flushMs must be/);
    expect(() => jsonLinesLogSink({ write: () => true }, { chunkBytes: 0 })).toThrow(/chunkBytes must be/);
  });

  test('a throwing stream loses only its lines, never the call', async () => {
    const sink = jsonLinesLogSink({
      write: () => {
        throw new Error('disk full');
      },
    });
    expect(logProviders(callWith({ eids: [ID5] }), sink).providerIds).toEqual([2]);
    expect(() => sink.flush()).not.toThrow();
  });

  test('caps the unknown sources listed per record', () => {
    const eids = Array.from({ length: 15 }, (_, i) => ({
      source: `${'x'.repeat(150)}${i}.example`,
      uids: [{ id: '1' }],
    }));
    const r = logProviders(callWith({ eids }), () => undefined);
    expect(r.unknownSources).toHaveLength(10);
    expect(r.unknownSources.every((s) => s.length === 100)).toBe(true);
  });
});
