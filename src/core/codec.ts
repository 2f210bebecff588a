/**
 * The Base64 codec of the `eids` GET parameter (extended-ids.md §4): Base64 of the UTF-8 JSON array.
 * Encoding is URL-safe without padding; decoding accepts standard or URL-safe, padded or not.
 */
import { encodeURI as toBase64Url, decode as fromBase64, isValid } from 'js-base64';
import type { Eid, Issue, Result } from './eid.js';

/** Encodes EIDs for the `eids` query parameter: URL-safe Base64, no padding, of the UTF-8 JSON. */
export function encodeEids(eids: readonly Eid[]): string {
  return toBase64Url(JSON.stringify(eids));
}

/**
 * Decodes a Base64 string (standard or URL-safe, padded or not) into parsed JSON, without validating its shape.
 * Returns `value: undefined` and an issue when the text is not Base64 or not JSON.
 */
export function decodeBase64Json(text: string, path = 'eids'): Result<unknown> {
  const issues: Issue[] = [];
  const trimmed = typeof text === 'string' ? text.trim() : '';
  if (!trimmed || !isValid(trimmed)) {
    issues.push({ path, message: 'not valid Base64' });
    return { value: undefined, issues };
  }
  let json: string;
  try {
    json = fromBase64(trimmed);
  } catch {
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
