/**
 * Copies of strings taken from a request, for whatever outlives the request (cache keys, log records, store keys).
 * V8 keeps a substring of 13 characters or more as a slice of the string it was cut from: a 16-character consent
 * string cut from a 15 KB URL holds the whole URL alive for as long as a cache keeps it (docs/ad-server.md "Caps").
 */

/** Shorter substrings are always copied by V8 (its sliced strings start at 13 characters). */
const MIN_SLICED = 13;

/**
 * `s` in memory of its own, sharing nothing with the string it may have been cut from. Exact for every string
 * (lone surrogates too): UTF-16 code units through a buffer and back.
 * @example cache.set(ownString(consent), decoded)
 */
export function ownString(s: string): string {
  return s.length < MIN_SLICED ? s : Buffer.from(s, 'utf16le').toString('utf16le');
}
