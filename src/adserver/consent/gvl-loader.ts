/**
 * The Global Vendor List loader (docs/ad-server.md "Global Vendor List"): keeps the lists in memory and on disk,
 * fetches the newest on a schedule and the versions TC strings name on demand, and never makes an ad call wait:
 * `list()` and `latest()` answer from memory at once, every download runs in the background.
 *
 * Bounded: each download by time, redirects and bytes (gvl-fetch.ts); the versions held by `maxVersions`; the
 * archive downloads a stream of hostile TC strings can cause by `archiveFetchesPerHour` and one at a time; a
 * version that failed is not asked again for `retryMs`. A list never replaces a newer one as the latest.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { OptionsError, given, positiveOption } from '../common/index.js';
import { parseVendorList, parseVendorListSliced } from './gvl.js';
import type { GlobalVendorList, VendorListSource } from './gvl.js';
import {
  fetchVendorList,
  GVL_ARCHIVE_URL,
  GVL_FETCH_DEFAULTS,
  GVL_LATEST_URL,
  GvlFetchError,
  writeFileAtomic,
} from './gvl-fetch.js';
import type { GvlFetchFailure } from './gvl-fetch.js';

/** Options of {@link createGvlLoader}. */
export interface GvlLoaderOptions {
  /** The newest list. Default the IAB's (`GVL_LATEST_URL`). */
  url?: string;
  /** Where version N is, `{version}` standing for N; null fetches no archive. Default the IAB's archive. */
  archiveUrl?: string | null;
  /**
   * A folder for the copy on disk (`vendor-list-v{N}.json`), written after each download: its newest list is read
   * when the loader is created, the others when a TC string names them (before any download).
   */
  dir?: string;
  /** How often the newest list is fetched again, in ms. Default 6 hours (the IAB publishes weekly). */
  refreshMs?: number;
  /**
   * The wait before trying again after a failure (doubling up to `refreshMs`), and before asking a version again.
   * Default 60,000.
   */
  retryMs?: number;
  /** Deadline of one download, in ms. Default 10,000. */
  timeoutMs?: number;
  /** Bytes one download may read. Default 8 MiB. */
  maxBytes?: number;
  /** Redirects one download may follow. Default 3. */
  maxRedirects?: number;
  /** List versions held in memory and on disk (the newest always among them). Default 32. */
  maxVersions?: number;
  /** Archive downloads started at most per hour (TC strings choose the versions). Default 30. */
  archiveFetchesPerHour?: number;
  /** Fetch the newest list at once (default true); false waits for `refresh()` or the first scheduled one. */
  fetchOnStart?: boolean;
  /** Told of each list loaded and each failure (for your logs and metrics); never throws into the loader. */
  onEvent?: (event: GvlLoaderEvent) => void;
}

/** What the loader tells `onEvent`. */
export type GvlLoaderEvent =
  | { type: 'loaded'; version: number; from: 'network' | 'disk'; where: string; latest: boolean }
  | { type: 'failed'; where: string; kind: GvlFetchFailure | 'disk'; message: string };

/** What the loader holds and has done. */
export interface GvlLoaderStatus {
  /** The newest version held. */
  latest?: number;
  /** Versions held, newest first. */
  versions: number[];
  /** Downloads finished with a list, and without. */
  fetched: number;
  failed: number;
  /** The last failure's message. */
  lastError?: string;
}

/** A loader of Global Vendor Lists: give it to the forwarding policy as `consent.gvl`. */
export interface GvlLoader extends VendorListSource {
  /** Resolves with the first list held (from disk or the network); never rejects (see `refresh()` for errors). */
  readonly loaded: Promise<GlobalVendorList>;
  /** Fetches the newest list now; resolves with the latest held after it, rejects with the download's error. */
  refresh(): Promise<GlobalVendorList>;
  /** What it holds and has done. */
  status(): GvlLoaderStatus;
  /** Stops the schedule and the downloads under way. */
  close(): void;
}

const FILE = /^vendor-list-v(\d{1,4})\.json$/;
const fileOf = (version: number) => `vendor-list-v${version}.json`;
const HOUR = 3_600_000;

function urlOption(value: unknown, field: string): string {
  if (typeof value === 'string') {
    try {
      const u = new URL(value.replace('{version}', '1'));
      if (u.protocol === 'http:' || u.protocol === 'https:') return value;
    } catch {
      // refused below
    }
  }
  throw new OptionsError(field, `must be an http or https URL (got ${given(value)})`);
}

/**
 * Creates a loader: reads the lists saved in `dir`, then fetches the newest (in the background) and again every
 * `refreshMs`. Its timer does not keep the process alive; `close()` stops it.
 * @example
 * const gvl = createGvlLoader({ dir: '/var/cache/eidkit/gvl' });
 * const policy = createForwardingPolicy({ consent: { gvl } });
 */
export function createGvlLoader(options: GvlLoaderOptions = {}): GvlLoader {
  const url = urlOption(options.url ?? GVL_LATEST_URL, 'url');
  const archiveUrl =
    options.archiveUrl === null ? null : urlOption(options.archiveUrl ?? GVL_ARCHIVE_URL, 'archiveUrl');
  if (archiveUrl && !archiveUrl.includes('{version}')) {
    throw new OptionsError('archiveUrl', `must hold {version} (got ${given(archiveUrl)})`);
  }
  const num = (v: number | undefined, field: string, dflt: number, integer = true) =>
    v === undefined ? dflt : positiveOption(v, field, integer);
  const refreshMs = num(options.refreshMs, 'refreshMs', 6 * HOUR);
  const retryMs = Math.min(num(options.retryMs, 'retryMs', 60_000), refreshMs);
  const maxVersions = num(options.maxVersions, 'maxVersions', 32);
  const perHour = num(options.archiveFetchesPerHour, 'archiveFetchesPerHour', 30);
  const bounds = {
    timeoutMs: num(options.timeoutMs, 'timeoutMs', GVL_FETCH_DEFAULTS.timeoutMs),
    maxBytes: num(options.maxBytes, 'maxBytes', GVL_FETCH_DEFAULTS.maxBytes),
    maxRedirects:
      options.maxRedirects === 0 ? 0 : num(options.maxRedirects, 'maxRedirects', GVL_FETCH_DEFAULTS.maxRedirects),
  };
  const dir = options.dir;
  const stop = new AbortController();

  // Held lists, least recently asked first (a Map keeps insertion order; a hit moves the list to the end).
  const lists = new Map<number, GlobalVendorList>();
  let newest: GlobalVendorList | undefined;
  let generation = 0;
  let fetched = 0;
  let failed = 0;
  let lastError: string | undefined;
  let closed = false;
  let firstList!: (list: GlobalVendorList) => void;
  const loaded = new Promise<GlobalVendorList>((resolve) => (firstList = resolve));

  const tell = (event: GvlLoaderEvent) => {
    try {
      options.onEvent?.(event);
    } catch {
      // A listener's error is its own.
    }
  };

  /** Adds a list; true when it changed what the loader answers. */
  function hold(list: GlobalVendorList): boolean {
    if (lists.has(list.version)) return false;
    lists.set(list.version, list);
    const isNewest = !newest || list.version > newest.version;
    if (isNewest) newest = list;
    // Past the cap, the list asked least recently goes (never the newest).
    for (const [version] of lists) {
      if (lists.size <= maxVersions) break;
      if (version !== newest!.version) lists.delete(version);
    }
    generation++;
    return true;
  }

  // The copy on disk, read at once: an ad call right after start-up is decided with it.
  // The newest readable one now; the others when a TC string names them (read in the background, see `want`).
  const onDisk = new Set<number>();
  const versionsIn = (folder: string) =>
    readdirSync(folder)
      .map((f) => FILE.exec(f))
      .filter((m) => m !== null)
      .map((m) => Number(m[1]))
      .sort((a, b) => b - a);
  const fromDisk = (version: number, list: GlobalVendorList, where: string) => {
    if (list.version !== version) throw new Error(`holds version ${list.version}`);
    if (hold(list)) tell({ type: 'loaded', version, from: 'disk', where, latest: list === newest });
  };
  const diskFailed = (where: string, e: unknown) =>
    tell({ type: 'failed', where, kind: 'disk', message: e instanceof Error ? e.message : String(e) });
  if (dir) {
    mkdirSync(dir, { recursive: true });
    for (const version of versionsIn(dir).slice(0, maxVersions)) {
      if (newest) {
        onDisk.add(version);
        continue;
      }
      const where = join(dir, fileOf(version));
      try {
        fromDisk(version, parseVendorList(readFileSync(where, 'utf8')), where);
      } catch (e) {
        diskFailed(where, e);
      }
    }
    if (newest) firstList(newest);
  }
  let diskBusy = false;
  /** Reads a saved version in the background (one at a time); true when it is on disk. */
  const readSaved = (version: number): boolean => {
    if (!dir || !onDisk.has(version)) return false;
    if (diskBusy) return true;
    diskBusy = true;
    const where = join(dir, fileOf(version));
    readFile(where, 'utf8')
      .then(parseVendorListSliced)
      .then((list) => fromDisk(version, list, where))
      .catch((e: unknown) => {
        onDisk.delete(version);
        diskFailed(where, e);
      })
      .finally(() => (diskBusy = false));
    return true;
  };

  /**
   * Saves a downloaded list, then removes the oldest files past `maxVersions`; one save at a time; a disk error is
   * told, not thrown.
   */
  let saving = Promise.resolve();
  const save = (list: GlobalVendorList, text: string) => (saving = saving.then(() => saveNow(list, text)));
  async function saveNow(list: GlobalVendorList, text: string) {
    if (!dir) return;
    try {
      await writeFileAtomic(join(dir, fileOf(list.version)), text);
      onDisk.add(list.version);
      for (const v of versionsIn(dir).slice(maxVersions)) {
        rmSync(join(dir, fileOf(v)), { force: true });
        onDisk.delete(v);
      }
    } catch (e) {
      tell({ type: 'failed', where: dir, kind: 'disk', message: e instanceof Error ? e.message : String(e) });
    }
  }

  /** One download; the list is held and saved when it is one. */
  async function download(where: string): Promise<GlobalVendorList> {
    try {
      const { list, text, url: from } = await fetchVendorList(where, { ...bounds, signal: stop.signal });
      fetched++;
      if (hold(list)) {
        tell({ type: 'loaded', version: list.version, from: 'network', where: from, latest: list === newest });
        await save(list, text);
      }
      return list;
    } catch (e) {
      failed++;
      lastError = e instanceof Error ? e.message : String(e);
      const kind = e instanceof GvlFetchError ? e.kind : 'network';
      if (!closed) tell({ type: 'failed', where, kind, message: lastError });
      throw e;
    }
  }

  // The schedule: the newest list every refreshMs; after a failure sooner, doubling from retryMs.
  let timer: NodeJS.Timeout | undefined;
  let failures = 0;
  let latestRun: Promise<GlobalVendorList> | undefined;
  let lastLatestTry = -Infinity;
  const schedule = (ms: number) => {
    clearTimeout(timer);
    if (closed) return;
    timer = setTimeout(() => void refresh().catch(() => undefined), ms);
    timer.unref();
  };
  function refresh(): Promise<GlobalVendorList> {
    if (closed) return Promise.reject(new GvlFetchError('aborted', url, 'the loader is closed'));
    // Settled before `loaded` resolves: a refresh() asked then starts a download of its own.
    latestRun ??= download(url).then(
      () => {
        latestRun = undefined;
        failures = 0;
        schedule(refreshMs);
        firstList(newest!);
        return newest!;
      },
      (e: unknown) => {
        latestRun = undefined;
        schedule(Math.min(refreshMs, retryMs * 2 ** failures++));
        throw e;
      },
    );
    lastLatestTry = performance.now();
    return latestRun;
  }

  // Archive versions named by TC strings: one download at a time, at most `perHour` started per hour (a bucket
  // refilled continuously), a version not asked again for retryMs after it was tried.
  const tried = new Map<number, number>();
  const wanted = new Set<number>();
  let tokens = perHour;
  let tokensAt = performance.now();
  let archiveBusy = false;
  const pump = () => {
    if (archiveBusy || closed || !archiveUrl) return;
    const now = performance.now();
    tokens = Math.min(perHour, tokens + ((now - tokensAt) * perHour) / HOUR);
    tokensAt = now;
    const next = wanted.values().next();
    if (next.done || tokens < 1) return;
    const version = next.value;
    wanted.delete(version);
    tokens -= 1;
    archiveBusy = true;
    download(archiveUrl.replace('{version}', String(version)))
      .catch(() => undefined)
      .finally(() => {
        archiveBusy = false;
        pump();
      });
  };
  /** A version a TC string named and the loader does not hold. */
  const want = (version: number) => {
    if (closed || !Number.isInteger(version) || version < 1 || version > 4_095) return;
    const now = performance.now();
    // A version past the newest held: the newest list is fetched again (at most once per retryMs).
    if (!newest || version > newest.version) {
      if (!latestRun && now - lastLatestTry >= retryMs) void refresh().catch(() => undefined);
      return;
    }
    if (readSaved(version)) return;
    if (!archiveUrl || (tried.get(version) ?? -Infinity) > now - retryMs) return;
    tried.set(version, now);
    if (tried.size > 4_096) tried.clear();
    if (wanted.size < 16) wanted.add(version);
    pump();
  };

  if (options.fetchOnStart ?? true) void refresh().catch(() => undefined);
  else schedule(refreshMs);

  return {
    get generation() {
      return generation;
    },
    loaded,
    list(version) {
      const list = lists.get(version);
      if (list) {
        // Most recently asked goes last (evicted last).
        if (list !== newest) {
          lists.delete(version);
          lists.set(version, list);
        }
        return list;
      }
      want(version);
      return undefined;
    },
    latest: () => newest,
    refresh,
    status: () => ({
      ...(newest ? { latest: newest.version } : {}),
      versions: [...lists.keys()].sort((a, b) => b - a),
      fetched,
      failed,
      ...(lastError ? { lastError } : {}),
    }),
    close() {
      closed = true;
      clearTimeout(timer);
      stop.abort();
    },
  };
}
