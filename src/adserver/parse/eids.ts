/**
 * The eids of an ad call, the fast way: Node's native Base64 decode of the `eids` parameter, and the check that
 * lets eids fresh from JSON.parse be kept without a copy when core's `validateEids` would return them unchanged.
 * Both agree with core's portable routes, which stay the reference (test/adserver/parse/parse.test.ts).
 */
import { isUtf8 } from 'node:buffer';
import { isInt32, isObject, isValidAtype, jsonSizeBound } from '../../core/index.js';
import type { Eid, Issue, Uid } from '../../core/index.js';
import type { AdCallLimits } from './limits.js';

/**
 * Node's fast path of core's `decodeBase64Json`, accepting and refusing the same texts with the same issues:
 * Base64, standard or URL-safe, padded or not, of UTF-8 JSON. Buffer decodes natively, several times faster
 * than core's portable `atob` route, which keeps parsing an ad call within 2x a bare decode (README "Measured
 * sizes and ratios"). Buffer skips or stops at characters outside both alphabets instead of failing, and each
 * such character shortens the output, so comparing the decoded length with the length the text implies finds
 * them without a second scan.
 */
export function decodeBase64JsonFast(text: string, path = 'eids'): { value: unknown; issues: Issue[] } {
  let body = text.trim();
  if (body.endsWith('=')) body = body.replace(/={1,2}$/, '');
  const bytes = body.length % 4 === 1 ? undefined : Buffer.from(body, 'base64');
  if (!bytes || bytes.length !== Math.floor((body.length * 3) / 4) || !isUtf8(bytes)) {
    return { value: undefined, issues: [{ path, message: 'not valid Base64' }] };
  }
  try {
    return { value: JSON.parse(bytes.toString('utf8')) as unknown, issues: [] };
  } catch {
    return { value: undefined, issues: [{ path, message: 'Base64 does not hold valid JSON' }] };
  }
}

/**
 * True when an `ext` fresh from JSON.parse is within the ext caps by a cheap bound (core's validateEids decides
 * exactly for the rare one near them). JSON.parse accepts nesting far deeper than JSON.stringify can write back
 * (a 60 KB body of `{"a":{"a":…}}` overflows the stack), and an ext is forwarded to every partner: both are capped.
 */
function extWithin(ext: unknown, limits: Readonly<AdCallLimits>): boolean {
  if (!isObject(ext)) return false;
  const bound = jsonSizeBound(ext, limits.maxExtDepth);
  return bound >= 0 && bound <= limits.maxExtLength;
}

/**
 * True when eids fresh from JSON.parse are exactly what core's `validateEids` would return for them (every
 * field valid, within the limits, no same-source eids, no repeated uid id, nothing to drop or trim), so the
 * parser keeps them as they are instead of copying: the common case, and half the cost of a parse. Anything
 * else, however small, answers false and goes through `validateEids`, which names the issues. A property test
 * holds the two to agreement (test/adserver/parse/parse.test.ts). Written for speed: no Sets, no allocations but one
 * array, key names compared directly.
 */
export function isCanonicalEids(input: unknown, limits: Readonly<AdCallLimits>): input is Eid[] {
  if (!Array.isArray(input) || input.length > limits.maxEids) return false;
  const n = input.length;
  const sources: string[] = new Array<string>(n);
  for (let e = 0; e < n; e++) {
    const eid: unknown = input[e];
    if (!isObject(eid)) return false;
    for (const k in eid) {
      if (k !== 'source' && k !== 'uids' && k !== 'inserter' && k !== 'matcher' && k !== 'mm' && k !== 'ext') return false;
    }
    const { source, uids, inserter, matcher, mm, ext } = eid;
    if (typeof source !== 'string' || !source || source.length > limits.maxIdLength || source.trim() !== source) return false;
    const key = source.toLowerCase();
    for (let j = 0; j < e; j++) if (sources[j] === key) return false;
    sources[e] = key;
    if (!Array.isArray(uids) || uids.length === 0 || uids.length > limits.maxUids) return false;
    const maxId = limits.maxIdLength;
    if (inserter !== undefined && (typeof inserter !== 'string' || !inserter || inserter.length > maxId)) return false;
    if (matcher !== undefined && (typeof matcher !== 'string' || !matcher || matcher.length > maxId)) return false;
    if (mm !== undefined && !(typeof mm === 'number' && isInt32(mm) && mm >= 0)) return false;
    if (ext !== undefined && !extWithin(ext, limits)) return false;
    for (let i = 0; i < uids.length; i++) {
      const uid: unknown = uids[i];
      if (!isObject(uid)) return false;
      for (const k in uid) if (k !== 'id' && k !== 'atype' && k !== 'ext') return false;
      const id = uid.id;
      if (typeof id !== 'string' || !id || id.length > limits.maxIdLength) return false;
      if (uid.atype !== undefined && !isValidAtype(uid.atype)) return false;
      if (uid.ext !== undefined && !extWithin(uid.ext, limits)) return false;
      for (let j = 0; j < i; j++) if ((uids[j] as Uid).id === id) return false;
    }
  }
  return true;
}
