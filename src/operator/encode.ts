/**
 * One composed script in every form it is delivered in: raw, gzip, brotli, its SRI hash and its ETag. Networks
 * with the same modules get the same script, so encodings are cached by content: a thousand networks cost as many
 * compressions as there are distinct module sets.
 */
import { createHash } from 'node:crypto';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

/** A script with its precompressed bodies and hashes. */
export interface EncodedScript {
  raw: Buffer;
  gzip: Buffer;
  br: Buffer;
  /** Subresource Integrity value: `sha384-<base64>` of the raw bytes. */
  integrity: string;
  /** Strong ETag of the raw bytes (quoted); the compressed bodies add `-gz` / `-br` inside the quotes. */
  etag: string;
  /** 16 hex digits of the same hash: the version in the script's immutable file name (`sas.<version>.js`). */
  version: string;
}

/** The version of a script's text, as {@link encodeScript} gives it, without compressing anything. */
export function scriptVersion(text: string): string {
  return versionOf(createHash('sha384').update(Buffer.from(text, 'utf8')).digest());
}

/** 16 hex digits of the SHA-384 of the raw bytes. */
const versionOf = (digest: Buffer): string => digest.subarray(0, 8).toString('hex');

/** The immutable, content-addressed name of a script file: `sas.js` → `sas.<version>.js`. */
export function versionedFileName(name: string, version: string): string {
  return name.replace(/\.js$/, `.${version}.js`);
}

/**
 * Brotli quality for a build: 11 (smallest, ~3× slower) for the minified scripts pages download; 9 for the readable
 * debug builds, which only developers load and which are four times larger (quality 11 on them would triple the time
 * of a 1,000-network build for a 9% smaller file).
 */
export const brotliQuality = (debug: boolean): number => (debug ? 9 : 11);

/**
 * Compresses and hashes `text` (gzip level 9, brotli at `quality` in text mode: files are compressed once, served many
 * times).
 */
export function encodeScript(text: string, quality = 11): EncodedScript {
  const raw = Buffer.from(text, 'utf8');
  const digest = createHash('sha384').update(raw).digest();
  return {
    raw,
    gzip: gzipSync(raw, { level: 9 }),
    br: brotliCompressSync(raw, {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: quality,
        [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
        [constants.BROTLI_PARAM_SIZE_HINT]: raw.length,
      },
    }),
    integrity: 'sha384-' + digest.toString('base64'),
    // 16 bytes of the same hash are plenty to tell versions apart and keep the header short.
    etag: `"${digest.subarray(0, 16).toString('base64url')}"`,
    version: versionOf(digest),
  };
}

/** A memo of {@link encodeScript} by content (scripts repeat across networks). */
export function createEncoder(): (text: string, debug: boolean) => EncodedScript {
  const cache = new Map<string, EncodedScript>();
  return (text, debug) => {
    let e = cache.get(text);
    if (!e) cache.set(text, (e = encodeScript(text, brotliQuality(debug))));
    return e;
  };
}
