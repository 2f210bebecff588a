/**
 * The Base64 codec of the `eids` GET parameter: Base64 of the UTF-8 JSON array.
 * Encoding is URL-safe without padding; decoding accepts standard or URL-safe, padded or not.
 * Built on `btoa`/`atob`, which browsers and Node ≥ 16 both provide: the tag's size budget has no room for a
 * Base64 library.
 * See docs/wire-format.md#get-ad-calls-the-base64-eids-parameter.
 */
import type { Issue, Result } from './eid.js';

// The web-platform globals the codec uses, which browsers and Node both provide (core's tsconfig has no DOM lib,
// by design). Declared rather than read off `globalThis`: the bare names are smaller in the tag.
declare function btoa(binary: string): string;
declare function atob(base64: string): string;

/** Node's strict UTF-8 decoder and `Buffer`, read off `globalThis` (core's tsconfig has no DOM or Node lib). */
const g = globalThis as unknown as {
  TextDecoder: new (label: 'utf-8', options: { fatal: true }) => { decode(bytes: Uint8Array): string };
  Buffer?: { from(text: string, encoding: 'base64'): Uint8Array };
};

/** Declared only by the browser tag's build (rollup.config.mjs folds its `typeof` guard to true). */
declare const __SAS_TAG__: unknown;

/**
 * Node's Buffer, outside the tag's build: it decodes Base64 natively, several times faster than the atob route,
 * which keeps parsing an ad call within 2x a bare decode (docs/project.md, "Measured sizes and ratios").
 */
const NODE_BUFFER = typeof __SAS_TAG__ !== 'undefined' ? undefined : g.Buffer;
let strictUtf8: { decode(bytes: Uint8Array): string } | undefined;

/**
 * decodeBase64Text through Buffer, accepting and refusing the same texts. Buffer skips or stops at characters
 * outside both alphabets instead of failing, and each shortens the output, so comparing the decoded length with
 * the length the text implies finds them without a second scan; a strict TextDecoder refuses bytes that are not
 * UTF-8.
 */
function bufferText(text: string, buffer: NonNullable<typeof NODE_BUFFER>): string | undefined {
  let body = text.trim();
  if (body.endsWith('=')) body = body.replace(/={1,2}$/, '');
  if (body.length % 4 === 1) return undefined;
  const bytes = buffer.from(body, 'base64');
  if (bytes.length !== Math.floor((body.length * 3) / 4)) return undefined;
  try {
    return (strictUtf8 ??= new g.TextDecoder('utf-8', { fatal: true })).decode(bytes);
  } catch {
    return undefined;
  }
}

/** Base64 of the UTF-8 bytes of `text`, URL-safe (`-`, `_`) and without `=` padding. */
export function encodeBase64Url(text: string): string {
  // encodeURIComponent + unescape is the smallest UTF-8 encoder; JSON.stringify never yields the lone
  // surrogates encodeURIComponent rejects (ES2019 well-formed JSON.stringify).
  // eslint-disable-next-line @typescript-eslint/no-deprecated -- the smallest UTF-8 encoder the tag can carry
  return btoa(unescape(encodeURIComponent(text)))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
}

/**
 * The UTF-8 text in Base64 `text`, standard or URL-safe alphabet, by atob's forgiving decode (padding optional,
 * ASCII spaces skipped). Throws when `text` is not Base64 of valid UTF-8; the tag calls it inside its own `try`.
 */
export const decodeBase64Loose = (text: string): string =>
  // decodeURIComponent throws a URIError on bytes that are not valid UTF-8.
  // eslint-disable-next-line @typescript-eslint/no-deprecated -- the smallest UTF-8 decoder the tag can carry
  decodeURIComponent(escape(atob(text.replace(/-/g, '+').replace(/_/g, '/'))));

/**
 * The UTF-8 text in Base64 `text` (standard or URL-safe alphabet, padded or not, surrounding spaces ignored),
 * or `undefined` when it is not Base64 of valid UTF-8.
 */
export function decodeBase64Text(text: string): string | undefined {
  const s = text.trim().replace(/={0,2}$/, '');
  // Stricter than atob: no spaces inside (a `+` that a query string turned into a space is an error).
  if (s.length % 4 === 1 || !/^[A-Za-z0-9+/_-]*$/.test(s)) return undefined;
  try {
    return decodeBase64Loose(s);
  } catch {
    return undefined;
  }
}

/** Encodes EIDs for the `eids` query parameter: URL-safe Base64, no padding, of the UTF-8 JSON. */
export function encodeEids(eids: readonly unknown[]): string {
  return encodeBase64Url(JSON.stringify(eids));
}

/**
 * Decodes a Base64 string (standard or URL-safe, padded or not) into parsed JSON, without validating its shape.
 * Returns `value: undefined` and an issue when the text is not Base64 or not JSON.
 */
export function decodeBase64Json(text: string, path = 'eids'): Result<unknown> {
  const issues: Issue[] = [];
  const json =
    typeof text !== 'string' ? undefined : NODE_BUFFER ? bufferText(text, NODE_BUFFER) : decodeBase64Text(text);
  if (json === undefined) {
    issues.push({ path, message: 'not valid Base64' });
    return { value: undefined, issues };
  }
  try {
    return { value: JSON.parse(json) as unknown, issues };
  } catch {
    issues.push({ path, message: 'Base64 does not hold valid JSON' });
    return { value: undefined, issues };
  }
}
