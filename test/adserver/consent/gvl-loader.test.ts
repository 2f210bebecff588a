// The Global Vendor List loader against a real HTTP server on a free loopback port: slow, failing, oversized,
// malformed, redirecting, a newer version mid-run, versions on demand, the copy on disk. No ad call waits on it.
import { once } from 'node:events';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { GVL, TCModel, TCString } from '@iabtcf/core';
import type { EncodingOptions } from '@iabtcf/core';
import {
  createForwardingPolicy,
  createGvlLoader,
  explainForwarding,
  fetchVendorList,
  GvlFetchError,
} from '../../../src/adserver/index.js';
import type { AdCall, GvlLoader, GvlLoaderEvent, GvlLoaderOptions } from '../../../src/adserver/index.js';
import { ID5, callWith } from '../fixtures.js';

const BUILT = new URL('../../../dist/node/adserver/index.js', import.meta.url).href;
const SNAPSHOT = new URL('../../support/gvl/vendor-list-v150.json', import.meta.url);
type ListJson = Record<string, unknown> & {
  vendorListVersion: number;
  vendors: Record<string, Record<string, unknown>>;
};
const base = (): ListJson => JSON.parse(readFileSync(SNAPSHOT, 'utf8')) as ListJson;
/** Version `version` of the list; from 151 on, vendor 45 is deleted. */
function listText(version: number): string {
  const doc = { ...base(), vendorListVersion: version };
  if (version >= 151) doc.vendors['45'] = { ...doc.vendors['45'], deletedDate: '2026-11-26T00:00:00Z' };
  return JSON.stringify(doc);
}

// A server of its own for each test (a new port: no connection a client pooled can cross over); each test sets
// the handler.
type Handler = (req: IncomingMessage, res: ServerResponse) => void;
let handler: Handler = (_, res) => res.writeHead(404).end();
const hits: string[] = [];
let server: Server;
let origin = '';
beforeEach(async () => {
  handler = (_, res) => res.writeHead(404).end();
  hits.length = 0;
  server = createServer((req, res) => {
    hits.push(req.url ?? '');
    handler(req, res);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

const loaders: GvlLoader[] = [];
const dirs: string[] = [];
afterEach(() => {
  for (const l of loaders.splice(0)) l.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  server.closeAllConnections();
  server.close();
});
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'eidkit-gvl-'));
  dirs.push(d);
  return d;
};
function loader(options: GvlLoaderOptions = {}): { gvl: GvlLoader; events: GvlLoaderEvent[] } {
  const events: GvlLoaderEvent[] = [];
  const gvl = createGvlLoader({
    url: `${origin}/v3/vendor-list.json`,
    archiveUrl: `${origin}/v3/archives/vendor-list-v{version}.json`,
    retryMs: 40,
    ...options,
    onEvent: (e) => events.push(e),
  });
  loaders.push(gvl);
  return { gvl, events };
}
/** Serves version `latest` as the newest and every version up to it from the archive. */
const serving = (latest: number): Handler => {
  return (req, res) => {
    const m = /vendor-list(?:-v(\d+))?\.json$/.exec(req.url ?? '');
    const version = m?.[1] ? Number(m[1]) : latest;
    if (!m || version > latest) res.writeHead(404).end();
    else res.writeHead(200, { 'content-type': 'application/json' }).end(listText(version));
  };
};
const until = async (what: () => boolean, ms = 5_000) => {
  const end = Date.now() + ms;
  while (!what()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 5));
  }
};

/** A TC string naming list `version`, with consent for purposes 1–4, 7, 9, 10 and vendors 45 and 97. */
function tcNaming(version: number): string {
  const m = new TCModel(new GVL({ ...base(), vendorListVersion: version } as never));
  m.cmpId = 10;
  m.cmpVersion = 1;
  m.isServiceSpecific = true;
  m.purposeConsents.set([1, 2, 3, 4, 7, 9, 10]);
  m.vendorConsents.set([45, 97]);
  return TCString.encode(m, { segments: ['core', 'vendorsDisclosed', 'publisherTC'] } as EncodingOptions);
}
const callNaming = (version: number): AdCall => ({
  ...callWith({ eids: [ID5] }),
  consent: { gdpr: 1, gdprConsent: tcNaming(version) },
});
const DSP = { id: 'dsp', gvlVendorId: 45 };
const reasonOf = (policy: ReturnType<typeof createForwardingPolicy>, call: AdCall) =>
  explainForwarding(call, [DSP], policy).partners[0].consent?.reason;

describe('createGvlLoader against a loopback server', () => {
  test('loads the newest list, decides with it, and saves it on disk atomically; a new loader starts from the disk', async () => {
    handler = serving(150);
    const dir = tempDir();
    const { gvl, events } = loader({ dir });
    expect(gvl.latest()).toBeUndefined();
    expect((await gvl.loaded).version).toBe(150);
    expect(gvl.status()).toMatchObject({ latest: 150, versions: [150], fetched: 1, failed: 0 });
    expect(events[0]).toMatchObject({ type: 'loaded', version: 150, from: 'network', latest: true });
    const policy = createForwardingPolicy({ consent: { gvl } });
    expect(policy.eidsFor(callNaming(150), DSP)).toEqual([ID5]);
    // Written whole, through a temporary file renamed: nothing else left in the folder.
    await until(() => existsSync(join(dir, 'vendor-list-v150.json')));
    expect(readdirSync(dir)).toEqual(['vendor-list-v150.json']);
    expect(JSON.parse(readFileSync(join(dir, 'vendor-list-v150.json'), 'utf8'))).toEqual(JSON.parse(listText(150)));
    // The server is gone: a new loader holds the list from the disk as soon as it is created.
    handler = (_, res) => res.writeHead(503).end();
    const again = loader({ dir });
    expect(again.gvl.latest()?.version).toBe(150);
    expect(again.events[0]).toMatchObject({ type: 'loaded', version: 150, from: 'disk' });
  });

  test('before the first load, ad calls are decided at once with the documented fallback, while the server is slow', async () => {
    let answer: (() => void) | undefined;
    handler = (_req, res) => {
      answer = () => res.writeHead(200).end(listText(150));
    };
    const { gvl } = loader();
    const refuse = createForwardingPolicy({ consent: { gvl } });
    const alone = createForwardingPolicy({ consent: { gvl, gvlFallback: 'tc-string' } });
    await until(() => answer !== undefined);
    // The download is under way: the decisions are made at once (a new TC string each, so none is cached).
    const calls = Array.from({ length: 20 }, (_, i) => callNaming(130 + i));
    // Synchronous answers (nothing awaited), in CPU time (a loaded machine's wall clock says nothing of us).
    const cpu = process.cpuUsage();
    const kept = calls.map((c) => [refuse.eidsFor(c, DSP).length, alone.eidsFor(c, DSP).length]);
    const used = process.cpuUsage(cpu);
    expect(kept).toEqual(calls.map(() => [0, 1]));
    expect((used.user + used.system) / 1000 / calls.length).toBeLessThan(5);
    expect(reasonOf(refuse, callNaming(150))).toBe('gvl not loaded');
    answer!();
    await gvl.loaded;
    expect(reasonOf(refuse, callNaming(150))).toBeUndefined();
  });

  test('a list of 1,400 vendors is checked in slices: ad calls are decided between them, not after', async () => {
    const doc = base();
    const template = Object.values(doc.vendors);
    const vendors: Record<string, unknown> = {};
    for (let id = 1; id <= 1_400; id++) vendors[id] = { ...template[id % template.length], id };
    const big = JSON.stringify({ ...doc, vendors });
    handler = (_req, res) => res.writeHead(200).end(big);
    const { gvl } = loader({ fetchOnStart: false });
    const policy = createForwardingPolicy({ consent: { gvl } });
    const call = callNaming(150);
    let done = false;
    let decided = 0;
    // An ad call each turn of the event loop while the list loads.
    const tick = () => {
      if (done) return;
      policy.eidsFor({ ...call }, DSP);
      decided++;
      setImmediate(tick);
    };
    const loading = gvl.refresh().finally(() => (done = true));
    await until(() => hits.length === 1);
    const atStart = decided;
    setImmediate(tick);
    const loaded = await loading;
    expect(loaded.vendorCount + loaded.deletedCount).toBe(1_400);
    // 28 slices of 50 vendors: an ad call between each two.
    expect(decided - atStart).toBeGreaterThanOrEqual(27);
  });

  test('a server slower than timeoutMs: the download gives up at the deadline, and is tried again later', async () => {
    handler = (_req, res) => {
      // Headers at once, then a body that never ends.
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"gvlSpecificationVersion":3,');
    };
    const { gvl, events } = loader({ timeoutMs: 150, retryMs: 100 });
    const t = performance.now();
    await until(() => events.some((e) => e.type === 'failed'));
    expect(performance.now() - t).toBeLessThan(2_000);
    expect(events[0]).toMatchObject({ type: 'failed', kind: 'timeout' });
    expect(gvl.latest()).toBeUndefined();
    handler = serving(150);
    expect((await gvl.loaded).version).toBe(150);
    expect(gvl.status().failed).toBeGreaterThanOrEqual(1);
  });

  test('a failing server: told, retried after retryMs (doubling), loaded once it answers', async () => {
    let calls = 0;
    handler = (req, res) => {
      calls++;
      if (calls < 3) res.writeHead(500).end('down');
      else serving(150)(req, res);
    };
    const { gvl, events } = loader({ retryMs: 30 });
    expect((await gvl.loaded).version).toBe(150);
    expect(calls).toBe(3);
    expect(events.filter((e) => e.type === 'failed').map((e) => (e as { kind: string }).kind)).toEqual([
      'status',
      'status',
    ]);
    await expect(fetchVendorList(`${origin}/missing`)).rejects.toMatchObject({ kind: 'status', status: 404 });
  });

  test('an oversized list is refused while it streams: a lying or absent length is cut at the cap', async () => {
    const cap = 64 * 1024;
    let written = 0;
    let closedEarly = false;
    handler = (req, res) => {
      if (req.url?.endsWith('declared')) {
        res.writeHead(200, { 'content-length': String(cap + 1) }).end('x'.repeat(10));
        return;
      }
      // Chunked, no length: 8 MiB offered in 16 KiB pieces, as fast as the client reads.
      res.writeHead(200, { 'content-type': 'application/json' });
      res.on('close', () => (closedEarly = written < 8 * 1024 * 1024));
      const piece = Buffer.alloc(16 * 1024, 0x20);
      const pump = () => {
        while (written < 8 * 1024 * 1024) {
          written += piece.length;
          if (!res.write(piece)) return void res.once('drain', pump);
        }
        res.end();
      };
      pump();
    };
    await expect(fetchVendorList(`${origin}/declared`, { maxBytes: cap })).rejects.toMatchObject({ kind: 'too-large' });
    await expect(fetchVendorList(`${origin}/streamed`, { maxBytes: cap })).rejects.toMatchObject({ kind: 'too-large' });
    await until(() => closedEarly);
    expect(written).toBeLessThan(8 * 1024 * 1024);
  });

  test('malformed answers are refused and change nothing: not JSON, not a v3 list, not UTF-8', async () => {
    const bodies: [string, Buffer | string][] = [
      ['json', '{"vendors": '],
      ['v2', JSON.stringify({ ...base(), gvlSpecificationVersion: 2 })],
      ['utf8', Buffer.from([0x7b, 0xff, 0xfe, 0x7d])],
    ];
    handler = (req, res) => res.writeHead(200).end(bodies.find(([k]) => req.url?.endsWith(k))?.[1]);
    for (const [k] of bodies) {
      const e = await fetchVendorList(`${origin}/${k}`).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(GvlFetchError);
      expect((e as GvlFetchError).kind).toBe('invalid');
    }
    handler = (_req, res) => res.writeHead(200).end('{"vendors": ');
    const { gvl, events } = loader({ retryMs: 10_000 });
    await until(() => events.length > 0);
    expect(events[0]).toMatchObject({ type: 'failed', kind: 'invalid' });
    expect(gvl.latest()).toBeUndefined();
  });

  test('redirects are followed up to maxRedirects, then refused', async () => {
    handler = (req, res) => {
      const n = Number(/\/hop(\d+)/.exec(req.url ?? '')?.[1] ?? -1);
      if (n > 0) res.writeHead(302, { location: `/hop${n - 1}` }).end();
      else if (n === 0) res.writeHead(200).end(listText(150));
      else res.writeHead(404).end();
    };
    expect((await fetchVendorList(`${origin}/hop3`, { maxRedirects: 3 })).list.version).toBe(150);
    await expect(fetchVendorList(`${origin}/hop4`, { maxRedirects: 3 })).rejects.toMatchObject({ kind: 'redirects' });
    await expect(fetchVendorList(`${origin}/hop1`, { maxRedirects: 0 })).rejects.toMatchObject({ kind: 'redirects' });
  });

  test('a newer version mid-run replaces the newest and redoes decisions; an older one never does', async () => {
    let latest = 150;
    handler = (req, res) => serving(latest)(req, res);
    const { gvl } = loader();
    await gvl.loaded;
    const policy = createForwardingPolicy({ consent: { gvl } });
    const call = callNaming(150);
    expect(policy.eidsFor(call, DSP)).toEqual([ID5]);
    const before = gvl.generation;
    latest = 151;
    expect((await gvl.refresh()).version).toBe(151);
    expect(gvl.generation).toBeGreaterThan(before);
    // Vendor 45 is deleted in 151: the newest list decides that, even for strings naming 150.
    expect(policy.eidsFor(call, DSP)).toEqual([]);
    expect(reasonOf(policy, call)).toBe('gvl vendor 45 deleted');
    // The server goes back to 150: 151 stays the newest.
    latest = 150;
    handler = (req, res) => res.writeHead(200).end(listText(150));
    expect((await gvl.refresh()).version).toBe(151);
    expect(gvl.latest()?.version).toBe(151);
  });

  test('a version a TC string names is fetched from the archive in the background; never more than the budget', async () => {
    handler = serving(150);
    const { gvl } = loader({ archiveFetchesPerHour: 3 });
    await gvl.loaded;
    const policy = createForwardingPolicy({ consent: { gvl } });
    // Not held yet: refused at once (the default), fetched meanwhile, then decided with it.
    expect(reasonOf(policy, callNaming(140))).toBe('gvl version not loaded');
    await until(() => gvl.status().versions.includes(140));
    expect(reasonOf(policy, callNaming(140))).toBeUndefined();
    expect(hits.filter((h) => h.includes('archives'))).toEqual(['/v3/archives/vendor-list-v140.json']);
    // Strings naming many versions: 2 more downloads fit in the hour's budget of 3, the rest wait.
    for (let v = 100; v < 130; v++) gvl.list(v);
    await until(() => gvl.status().versions.length === 4);
    await new Promise((r) => setTimeout(r, 100));
    expect(hits.filter((h) => h.includes('archives'))).toHaveLength(3);
    // A version past the newest asks for the newest again instead (the archive would not have it).
    gvl.list(400);
    await until(() => hits.filter((h) => h.endsWith('/v3/vendor-list.json')).length === 2);
  });

  test('saved versions: the newest is read at creation, another when a TC string names it, without a download', async () => {
    const dir = tempDir();
    for (const v of [140, 150]) writeFileSync(join(dir, `vendor-list-v${v}.json`), listText(v));
    const { gvl, events } = loader({ dir, fetchOnStart: false });
    expect(gvl.status().versions).toEqual([150]);
    expect(events).toEqual([expect.objectContaining({ type: 'loaded', version: 150, from: 'disk' })]);
    expect(gvl.list(140)).toBeUndefined();
    await until(() => gvl.status().versions.includes(140));
    expect(events[1]).toMatchObject({ type: 'loaded', version: 140, from: 'disk' });
    expect(hits).toEqual([]);
  });

  test('maxVersions bounds the lists in memory and on disk; a damaged file is told and skipped', async () => {
    handler = serving(160);
    const dir = tempDir();
    writeFileSync(join(dir, 'vendor-list-v120.json'), '{"damaged": ');
    const { gvl, events } = loader({ dir, maxVersions: 3 });
    expect(events[0]).toMatchObject({ type: 'failed', kind: 'disk' });
    await gvl.loaded;
    for (const v of [151, 152, 153, 154]) {
      gvl.list(v);
      await until(() => gvl.status().versions.includes(v));
    }
    const files = ['vendor-list-v153.json', 'vendor-list-v154.json', 'vendor-list-v160.json'];
    await until(() => readdirSync(dir).sort().join() === files.join());
    expect(gvl.status().versions).toEqual([160, 154, 153]);
  });

  test('close() stops the schedule and the download under way; the timer never holds the process', async () => {
    handler = () => undefined; // never answers
    const { gvl } = loader({ timeoutMs: 60_000 });
    await until(() => hits.length === 1);
    gvl.close();
    await expect(gvl.refresh()).rejects.toMatchObject({ kind: 'aborted' });
    // A process that only creates a loader (fetching later) ends by itself.
    const child = spawnSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        // The built package (npm run build), as the other child-process tests use it.
        `import { createGvlLoader } from ${JSON.stringify(BUILT)};` +
          `createGvlLoader({ url: '${origin}/v3/vendor-list.json', fetchOnStart: false, refreshMs: 3600000 });`,
      ],
      { timeout: 20_000, encoding: 'utf8' },
    );
    expect(child.error).toBeUndefined();
    expect(child.status).toBe(0);
  });

  test('its options are checked when it is created, naming the option', () => {
    expect(() => createGvlLoader({ url: 'ftp://x/list.json' })).toThrow(/^url must be an http or https URL/);
    expect(() => createGvlLoader({ archiveUrl: 'https://x/list.json' })).toThrow(/archiveUrl must hold \{version\}/);
    expect(() => createGvlLoader({ refreshMs: 0 })).toThrow(/refreshMs/);
    expect(() => createGvlLoader({ maxVersions: 1.5 })).toThrow(/maxVersions/);
  });
});
