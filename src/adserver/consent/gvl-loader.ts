/**
 * The Global Vendor List loader (docs/ad-server.md "Global Vendor List"): keeps the lists in memory (gvl-held.ts)
 * and on disk (gvl-disk.ts), fetches the newest on a schedule and the versions TC strings name on demand
 * (gvl-archive.ts), and never makes an ad call wait: `list()` and `latest()` answer from memory at once, every
 * download runs in the background.
 *
 * Bounded: each download by time, redirects and bytes (gvl-fetch.ts); the versions held by `maxVersions`; the
 * archive downloads a stream of hostile TC strings can cause by `archiveFetchesPerHour` and one at a time; a
 * version that failed is not asked again for `retryMs`. A list never replaces a newer one as the latest.
 */
import { OptionsError, given, positiveOption } from '../common/index.js';
import type { GlobalVendorList, VendorListSource } from './gvl.js';
import {
  errorText,
  fetchVendorList,
  GVL_ARCHIVE_URL,
  GVL_FETCH_DEFAULTS,
  GVL_LATEST_URL,
  GvlFetchError,
} from './gvl-fetch.js';
import { ArchiveQueue } from './gvl-archive.js';
import { SavedLists } from './gvl-disk.js';
import { HeldLists, teller } from './gvl-held.js';
import type { GvlLoaderEvent } from './gvl-held.js';

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

/** The options checked, with their defaults; throws {@link OptionsError} naming a bad one. */
function settingsOf(options: GvlLoaderOptions) {
  const url = urlOption(options.url ?? GVL_LATEST_URL, 'url');
  const archiveUrl =
    options.archiveUrl === null ? null : urlOption(options.archiveUrl ?? GVL_ARCHIVE_URL, 'archiveUrl');
  if (archiveUrl && !archiveUrl.includes('{version}')) {
    throw new OptionsError('archiveUrl', `must hold {version} (got ${given(archiveUrl)})`);
  }
  const num = (v: number | undefined, field: string, dflt: number, integer = true) =>
    v === undefined ? dflt : positiveOption(v, field, integer);
  const refreshMs = num(options.refreshMs, 'refreshMs', 6 * HOUR);
  return {
    url,
    archiveUrl,
    refreshMs,
    retryMs: Math.min(num(options.retryMs, 'retryMs', 60_000), refreshMs),
    maxVersions: num(options.maxVersions, 'maxVersions', 32),
    perHour: num(options.archiveFetchesPerHour, 'archiveFetchesPerHour', 30),
    bounds: {
      timeoutMs: num(options.timeoutMs, 'timeoutMs', GVL_FETCH_DEFAULTS.timeoutMs),
      maxBytes: num(options.maxBytes, 'maxBytes', GVL_FETCH_DEFAULTS.maxBytes),
      maxRedirects:
        options.maxRedirects === 0 ? 0 : num(options.maxRedirects, 'maxRedirects', GVL_FETCH_DEFAULTS.maxRedirects),
    },
  };
}

/**
 * Creates a loader: reads the lists saved in `dir`, then fetches the newest (in the background) and again every
 * `refreshMs`. Its timer does not keep the process alive; `close()` stops it.
 * @example
 * const gvl = createGvlLoader({ dir: '/var/cache/eidkit/gvl' });
 * const policy = createForwardingPolicy({ consent: { gvl } });
 */
export function createGvlLoader(options: GvlLoaderOptions = {}): GvlLoader {
  const { url, archiveUrl, refreshMs, retryMs, maxVersions, perHour, bounds } = settingsOf(options);
  const stop = new AbortController();
  const tell = teller(options.onEvent);
  const held = new HeldLists(maxVersions);
  let fetched = 0;
  let failed = 0;
  let lastError: string | undefined;
  let closed = false;
  let firstList!: (list: GlobalVendorList) => void;
  const loaded = new Promise<GlobalVendorList>((resolve) => (firstList = resolve));

  const disk = options.dir === undefined ? undefined : new SavedLists(options.dir, maxVersions, held, tell);
  disk?.readNewest();
  if (held.newest) firstList(held.newest);

  /** One download; the list is held and saved when it is one. */
  async function download(where: string): Promise<GlobalVendorList> {
    try {
      const { list, text, url: from } = await fetchVendorList(where, { ...bounds, signal: stop.signal });
      fetched++;
      if (held.hold(list)) {
        tell({ type: 'loaded', version: list.version, from: 'network', where: from, latest: list === held.newest });
        await disk?.save(list, text);
      }
      return list;
    } catch (e) {
      failed++;
      lastError = errorText(e);
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
        firstList(held.newest!);
        return held.newest!;
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

  const archive = archiveUrl
    ? new ArchiveQueue(perHour, retryMs, (version) => download(archiveUrl.replace('{version}', String(version))))
    : undefined;
  /** A version a TC string named and the loader does not hold. */
  const want = (version: number) => {
    if (closed || !Number.isInteger(version) || version < 1 || version > 4_095) return;
    const now = performance.now();
    // A version past the newest held: the newest list is fetched again (at most once per retryMs).
    if (!held.newest || version > held.newest.version) {
      if (!latestRun && now - lastLatestTry >= retryMs) void refresh().catch(() => undefined);
      return;
    }
    if (!disk?.read(version)) archive?.ask(version, now);
  };

  if (options.fetchOnStart ?? true) void refresh().catch(() => undefined);
  else schedule(refreshMs);

  return {
    get generation() {
      return held.generation;
    },
    loaded,
    list(version) {
      const list = held.get(version);
      if (!list) want(version);
      return list;
    },
    latest: () => held.newest,
    refresh,
    status: () => ({
      ...(held.newest ? { latest: held.newest.version } : {}),
      versions: held.versions(),
      fetched,
      failed,
      ...(lastError ? { lastError } : {}),
    }),
    close() {
      closed = true;
      clearTimeout(timer);
      archive?.close();
      stop.abort();
    },
  };
}
