/**
 * Downloading a Global Vendor List within bounds (docs/ad-server.md "Global Vendor List"): one deadline for the
 * whole exchange, redirects counted and followed by hand, the body counted while it streams and cut at the byte
 * cap (a server that lies about its length, or sends none, is stopped at the cap, not after), then checked as a
 * v3 list. Used by the loader and by `eidkit gvl fetch`.
 */
import { randomBytes } from 'node:crypto';
import { rename, rm, writeFile } from 'node:fs/promises';
import { dirname, basename, join } from 'node:path';
import { GvlError, parseVendorListSliced } from './gvl.js';
import type { GlobalVendorList } from './gvl.js';

/** The IAB's newest list (v3). */
export const GVL_LATEST_URL = 'https://vendor-list.consensu.org/v3/vendor-list.json';
/** The IAB's archive of every v3 list, `{version}` replaced by the version a TC string names. */
export const GVL_ARCHIVE_URL = 'https://vendor-list.consensu.org/v3/archives/vendor-list-v{version}.json';

/** Bounds of one download. */
export interface GvlFetchOptions {
  /** Deadline of the whole exchange (redirects and body included), in ms. Default 10,000. */
  timeoutMs?: number;
  /** Bytes of body read at most; a longer list is refused. Default 8 MiB (the real list is under 2 MiB). */
  maxBytes?: number;
  /** Redirects followed at most. Default 3. */
  maxRedirects?: number;
  /** Stops the download (the loader's `close()`). */
  signal?: AbortSignal;
}

/** The defaults of {@link GvlFetchOptions}. */
export const GVL_FETCH_DEFAULTS = { timeoutMs: 10_000, maxBytes: 8 * 1024 * 1024, maxRedirects: 3 } as const;

/** Why a download failed. */
export type GvlFetchFailure = 'network' | 'timeout' | 'status' | 'too-large' | 'redirects' | 'invalid' | 'aborted';

/** A download that gave no list: `kind` says why; the message names the URL and the cause. */
export class GvlFetchError extends Error {
  override readonly name = 'GvlFetchError';
  constructor(
    readonly kind: GvlFetchFailure,
    readonly url: string,
    message: string,
    /** The HTTP status, for `status`. */
    readonly status?: number,
  ) {
    super(`${url}: ${message}`);
  }
}

/** A list downloaded and checked: the list, its text as received, and the URL it finally came from. */
export interface FetchedVendorList {
  list: GlobalVendorList;
  text: string;
  url: string;
}

/** An error's message (what a thrown non-Error says). */
export const errorText = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** The body of `res`, read until `maxBytes` at most (counted as it arrives). */
async function readCapped(res: Response, url: string, maxBytes: number): Promise<Uint8Array> {
  const declared = Number(res.headers.get('content-length'));
  if (declared > maxBytes) {
    await res.body?.cancel().catch(() => undefined);
    throw new GvlFetchError('too-large', url, `declares ${declared} bytes, over the cap of ${maxBytes}`);
  }
  const chunks: Uint8Array[] = [];
  let total = 0;
  if (res.body) {
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) {
        await reader.cancel().catch(() => undefined);
        throw new GvlFetchError('too-large', url, `body over the cap of ${maxBytes} bytes`);
      }
      chunks.push(value);
    }
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

/**
 * Downloads the list at `url` (http or https) within the bounds of `options`, and checks it; throws
 * {@link GvlFetchError} naming the URL and the cause.
 * @example const { list } = await fetchVendorList(GVL_LATEST_URL); list.version
 */
export async function fetchVendorList(url: string, options: GvlFetchOptions = {}): Promise<FetchedVendorList> {
  const { timeoutMs, maxBytes, maxRedirects } = { ...GVL_FETCH_DEFAULTS, ...options };
  const deadline = AbortSignal.timeout(timeoutMs);
  const signal = options.signal ? AbortSignal.any([deadline, options.signal]) : deadline;
  let current = url;
  try {
    for (let redirects = 0; ; redirects++) {
      const target = new URL(current);
      if (target.protocol !== 'http:' && target.protocol !== 'https:') {
        throw new GvlFetchError('network', current, `only http and https are fetched (got ${target.protocol})`);
      }
      const res = await fetch(target, { redirect: 'manual', signal, headers: { accept: 'application/json' } });
      const location = res.headers.get('location');
      if (res.status >= 300 && res.status < 400 && location) {
        await res.body?.cancel().catch(() => undefined);
        if (redirects >= maxRedirects) {
          throw new GvlFetchError('redirects', url, `more than ${maxRedirects} redirects`);
        }
        current = new URL(location, target).href;
        continue;
      }
      if (res.status !== 200) {
        await res.body?.cancel().catch(() => undefined);
        throw new GvlFetchError('status', current, `HTTP ${res.status}`, res.status);
      }
      const bytes = await readCapped(res, current, maxBytes);
      let text: string;
      try {
        text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
      } catch {
        throw new GvlFetchError('invalid', current, 'the body is not UTF-8 text');
      }
      try {
        return { list: await parseVendorListSliced(text), text, url: current };
      } catch (e) {
        if (e instanceof GvlError) throw new GvlFetchError('invalid', current, e.message);
        throw e;
      }
    }
  } catch (e) {
    if (e instanceof GvlFetchError) throw e;
    if (deadline.aborted) throw new GvlFetchError('timeout', current, `no complete answer within ${timeoutMs} ms`);
    if (options.signal?.aborted) throw new GvlFetchError('aborted', current, 'stopped');
    const cause = e instanceof Error && e.cause instanceof Error ? `: ${e.cause.message}` : '';
    throw new GvlFetchError('network', current, `${errorText(e)}${cause}`);
  }
}

/**
 * Writes `text` to `path` atomically: a temporary file beside it, then a rename, so a reader (or a crash) sees
 * the old file or the new one, never half of one.
 */
export async function writeFileAtomic(path: string, text: string): Promise<void> {
  const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    await writeFile(tmp, text, { mode: 0o644 });
    await rename(tmp, path);
  } catch (e) {
    await rm(tmp, { force: true });
    throw e;
  }
}
