/**
 * OpenRTB 2.6 / AdCOM 1.0 extended identifiers: types, validation and merging.
 * Fields: docs/wire-format.md#the-eid-and-uid-objects. Validation never throws: the valid part, one issue per problem.
 */

import { hasEmail } from './pii.js';

/** One identifier of a provider (AdCOM `UID`). */
export interface Uid {
  /** The identifier value. */
  id: string;
  /** Agent type: 1 cookie/device, 2 in-app device id, 3 person-based, ≥ 500 vendor-specific. */
  atype?: number;
  /** Provider-specific extension (for example `linkType`, `abTestingControlGroup`). */
  ext?: Record<string, unknown>;
}

/** The identifiers of one provider (AdCOM `EID`). */
export interface Eid {
  /** The provider's source, usually its domain (`id5-sync.com`), or `hemsha256` / `ip`. */
  source: string;
  /** The provider's identifiers; never empty. */
  uids: Uid[];
  /** Who added the ids to the request (domain). */
  inserter?: string;
  /** Who matched the ids (domain). */
  matcher?: string;
  /** Match method: 0 unknown … 5 inferred. */
  mm?: number;
  /** Extension object. */
  ext?: Record<string, unknown>;
}

/** One problem found in input: where (`eids[2].uids[0].atype`) and what. */
export interface Issue {
  path: string;
  message: string;
}

/** What every core function returns instead of throwing. */
export interface Result<T> {
  value: T;
  issues: Issue[];
}

/** Limits applied while validating; the defaults are generous, the ad server passes tighter ones. */
export interface EidLimits {
  /** Most EIDs kept (the rest are dropped with one issue). Default 1000. */
  maxEids?: number;
  /** Most UIDs kept per EID. Default 100. */
  maxUids?: number;
  /** Longest `id`, `source`, `inserter` or `matcher` accepted, in characters. Default 4096. */
  maxIdLength?: number;
  /** Longest `ext` (eid or uid) accepted, in characters of its JSON. Default 16,384. Not checked by the tag. */
  maxExtLength?: number;
  /** Most levels of objects and arrays in one `ext` (a flat ext is 1). Default 32. Not checked by the tag. */
  maxExtDepth?: number;
}

/** True for a non-null, non-array object: the shape JSON objects (EIDs, UIDs, `ext`) must have. */
export const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Declared only by the browser tag's build (rollup.config.mjs folds its `typeof` guard to true): the tag leaves
 * out the ad server's speed-ups (copyFlat, the single-uid dedupe shortcut), which give the same results, and
 * words a few issues more tersely (the tag prints each as `path: message; dropped`).
 */
declare const __SAS_TAG__: unknown;
const TAG = typeof __SAS_TAG__ !== 'undefined';
const FAST = !TAG;

/** Largest OpenRTB integer: decoders of bid requests read integers as 32-bit signed (docs/ad-server.md "Caps"). */
export const MAX_INT32 = 2_147_483_647;

/** True for an integer that a 32-bit signed OpenRTB integer field can carry. */
export const isInt32 = (v: unknown): v is number =>
  Number.isInteger(v) && (v as number) >= -MAX_INT32 - 1 && (v as number) <= MAX_INT32;

/**
 * An upper bound of `JSON.stringify(v).length` for JSON data (a string's characters may each become a 6-character
 * escape, a number is at most 24 characters), or -1 when `v` nests more than `depth` levels of objects and arrays.
 * One pass that stops at the depth, so a cheap check keeps most ext objects from being serialized to be measured.
 */
export function jsonSizeBound(v: unknown, depth: number): number {
  if (typeof v === 'string') return 6 * v.length + 2;
  if (typeof v !== 'object' || v === null) return 24;
  if (depth === 0) return -1;
  let size = 2;
  if (Array.isArray(v)) {
    for (const item of v) {
      const n = jsonSizeBound(item, depth - 1);
      if (n < 0) return -1;
      size += n + 1;
    }
    return size;
  }
  for (const k in v) {
    const n = jsonSizeBound((v as Record<string, unknown>)[k], depth - 1);
    if (n < 0) return -1;
    size += 6 * k.length + 4 + n;
  }
  return size;
}

/** What {@link measureJson} answers instead of a length: nested too deep, surely too long, not plain JSON data. */
const DEEP = -1;
const LONG = -2;
const ODD = -3;

/** The running bounds of one {@link measureJson} walk. */
interface Walk {
  lo: number;
  hi: number;
  max: number;
}

/**
 * Measures plain JSON data (what JSON.parse makes) in one walk that stops at the first cap passed: DEEP when it
 * nests more than `depth` levels of objects and arrays, LONG as soon as a lower bound of its JSON's length passes
 * `max` (so a 250 KB ext is left after about `max` characters of it, never walked whole), ODD for anything
 * JSON.parse never makes (a class instance, `toJSON`, undefined, a non-finite number), else an upper bound of
 * `JSON.stringify(v).length` (a string's characters may each become a 6-character escape).
 */
function measureJson(v: unknown, depth: number, max: number): number {
  const w: Walk = { lo: 0, hi: 0, max };
  const r = walkJson(v, depth, w);
  return r < 0 ? r : w.hi;
}

/** {@link measureJson}'s walk: adds `v` to the bounds; 0, or DEEP, LONG or ODD to stop. */
function walkJson(v: unknown, depth: number, w: Walk): number {
  if (typeof v === 'string') {
    w.lo += v.length + 2;
    w.hi += 6 * v.length + 2;
  } else if (typeof v === 'number') {
    if (!Number.isFinite(v)) return ODD;
    w.lo += 1;
    w.hi += 24;
  } else if (typeof v === 'boolean' || v === null) {
    const n = v === false ? 5 : 4;
    w.lo += n;
    w.hi += n;
  } else if (typeof v !== 'object') {
    return ODD;
  } else {
    if (depth === 0) return DEEP;
    w.lo += 2;
    w.hi += 2;
    if (w.lo > w.max) return LONG;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        if (i > 0) {
          w.lo++;
          w.hi++;
        }
        const r = walkJson(v[i], depth - 1, w);
        if (r < 0) return r;
      }
      return 0;
    }
    const proto: unknown = Object.getPrototypeOf(v);
    if ((proto !== Object.prototype && proto !== null) || typeof (v as { toJSON?: unknown }).toJSON === 'function')
      return ODD;
    let comma = 0;
    for (const k in v) {
      // `"key":` and the comma before it.
      w.lo += k.length + 3 + comma;
      w.hi += 6 * k.length + 3 + comma;
      comma = 1;
      const r = walkJson((v as Record<string, unknown>)[k], depth - 1, w);
      if (r < 0) return r;
    }
    return 0;
  }
  return w.lo > w.max ? LONG : 0;
}

/**
 * True when the JSON of plain data `v` is at most `max` characters and `depth` levels deep, found in a walk that
 * stops at the first cap passed (and, near the length cap only, by serializing it). Node side: a received object
 * that is forwarded as sent (video parameters) is checked without being walked whole.
 */
export function jsonWithin(v: unknown, max: number, depth: number): boolean {
  const m = measureJson(v, depth, max);
  if (m === DEEP || m === LONG) return false;
  if (m !== ODD && m <= max) return true;
  if (m === ODD && jsonSizeBound(v, depth) < 0) return false;
  const text = JSON.stringify(v) as string | undefined;
  return text !== undefined && text.length <= max;
}

/**
 * A JSON-safe deep copy of a plain object (rejects cycles, functions, getters that throw), or the reason it is
 * not kept. On the Node side an ext over `maxExtLength` characters of JSON or `maxExtDepth` levels is refused too:
 * it would be forwarded to every partner.
 */
function copyExt(v: unknown, limits: Required<EidLimits>): Record<string, unknown> | string {
  if (!TAG) return copyJsonExt(v, limits);
  const plain = 'must be an object';
  try {
    const copy = isObject(v) ? (JSON.parse(JSON.stringify(v)) as unknown) : 0;
    return isObject(copy) ? copy : plain;
  } catch {
    return plain;
  }
}

/**
 * {@link copyExt} on the Node side: the ext is measured once, in a walk that stops at the first cap passed
 * (docs/ad-server.md "Caps"), and copied only when it is kept. An ext far over a cap costs a few thousand steps,
 * whatever the size of the body it came in.
 */
function copyJsonExt(v: unknown, limits: Required<EidLimits>): Record<string, unknown> | string {
  const max = limits.maxExtLength;
  try {
    if (!isObject(v)) return 'must be a plain JSON object';
    let data: Record<string, unknown> = v;
    // The measure the no-copy check just took of this ext, read once (the object could change before another call).
    const known = measured.get(v);
    if (known) measured.delete(v);
    let m =
      known?.depth === limits.maxExtDepth && known.max === max ? known.bound : measureJson(v, limits.maxExtDepth, max);
    if (m === ODD) {
      // An object JSON.parse did not make (an API caller's): measured as its JSON. Its depth first, on the value as
      // given: JSON.stringify of an ext nested thousands deep recurses until the stack overflows.
      if (jsonSizeBound(v, limits.maxExtDepth) < 0) m = DEEP;
      else {
        const copy: unknown = JSON.parse(JSON.stringify(v));
        if (!isObject(copy)) return 'must be a plain JSON object';
        data = copy;
        m = measureJson(copy, limits.maxExtDepth, max);
      }
    }
    if (m === DEEP) return `is nested deeper than ${limits.maxExtDepth} levels`;
    if (m === LONG) return `is longer than ${max} characters of JSON`;
    if (m > max) {
      // Near the cap (escapes could make the difference): measured exactly, and a copy made from the same text.
      const text = JSON.stringify(data);
      if (text.length > max) return `is longer than ${max} characters of JSON`;
      return data === v ? (JSON.parse(text) as Record<string, unknown>) : data;
    }
    if (data !== v) return data;
    return (FAST && copyFlat(v)) || (JSON.parse(JSON.stringify(v)) as Record<string, unknown>);
  } catch {
    return 'must be a plain JSON object';
  }
}

/**
 * The fast path of {@link copyExt} for what ext objects usually are: a plain object whose values are strings,
 * finite numbers, booleans or null. Such an object copies key by key to exactly what the JSON round trip gives;
 * anything else (nesting, `toJSON`, `__proto__` keys, non-finite numbers) returns undefined for the slow path.
 */
function copyFlat(v: Record<string, unknown>): Record<string, unknown> | undefined {
  if (Object.getPrototypeOf(v) !== Object.prototype) return undefined;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v)) {
    const x = v[k];
    if (k === '__proto__' || k === 'toJSON') return undefined;
    if (typeof x === 'string' || typeof x === 'boolean' || x === null) out[k] = x;
    else if (typeof x === 'number' && Number.isFinite(x))
      out[k] = x === 0 ? 0 : x; // JSON writes -0 as 0
    else return undefined;
  }
  return out;
}

/** AdCOM atype: 1, 2, 3 or vendor-specific ≥ 500 (up to the largest OpenRTB integer). */
export const isValidAtype = (v: unknown): v is number => isInt32(v) && ((v > 0 && v < 4) || v >= 500);

/**
 * Records one issue and returns undefined, so `return bad(…)` drops the entry. A `field` goes on the path and
 * starts the message: bad(issues, 'eids[0]', 'source', 'must be …') is `eids[0].source`: `source must be …`.
 */
function bad(issues: Issue[], path: string, field: string, message: string): undefined {
  issues.push(field ? { path: path + '.' + field, message: field + ' ' + message } : { path, message });
  return undefined;
}

/** The problem with a string field, if any: not a string, empty, or longer than `max`. */
const badString = (v: unknown, max: number): string | undefined =>
  typeof v !== 'string' || !v
    ? 'must be a non-empty string'
    : // Only hashes leave: a value holding an email address is raw personal data, whoever sent it.
      hasEmail(v)
      ? TAG
        ? 'an email'
        : 'holds an email address (send its hash)'
      : !TAG && v.length > max
        ? `is longer than ${max} characters`
        : undefined;

/**
 * Validates the first `max` of `items` with `one` (at path `path[i]`); the rest are dropped with one issue. With
 * `unreadable`, an item that throws while read (a getter, a Proxy) is dropped with that message; otherwise it throws
 * on.
 */
function each<T>(
  items: unknown[],
  max: number,
  path: string,
  what: string,
  issues: Issue[],
  one: (raw: unknown, path: string) => T | undefined,
  unreadable?: string,
): T[] {
  const kept: T[] = [];
  const len = items.length;
  const n = Math.min(len, max);
  for (let i = 0; i < n; i++) {
    const p = `${path}[${i}]`;
    try {
      const v = one(items[i], p);
      if (v) kept.push(v);
    } catch (e) {
      if (!unreadable) throw e;
      bad(issues, p, '', unreadable);
    }
  }
  if (len > n) bad(issues, path, '', `more than ${max} ${what}` + (TAG ? '' : `: ${len - n} dropped`));
  return kept;
}

function validateUid(raw: unknown, path: string, limits: Required<EidLimits>, issues: Issue[]): Uid | undefined {
  if (!isObject(raw)) return bad(issues, path, '', TAG ? 'not an object' : 'uid must be an object');
  const { id, atype, ext } = raw;
  const problem = badString(id, limits.maxIdLength);
  if (problem) return bad(issues, path, 'id', problem);
  const uid: Uid = { id: id as string };
  // AdCOM lists atype 1, 2, 3 and >= 500, but providers document others (4 and 5 for device ids) and Prebid passes
  // them through: an OpenRTB integer goes on as it came, and no atype ever costs the id. The ad server notes the
  // unusual ones; the tag, which only forwards, stays quiet to save bytes.
  if (atype !== undefined) {
    if (!Number.isInteger(atype))
      bad(issues, path, 'atype', TAG ? 'not an integer' : 'must be an integer; atype dropped, uid kept');
    else if (!TAG && !isInt32(atype)) {
      bad(issues, path, 'atype', `${atype as number} is outside OpenRTB's 32-bit integers; atype dropped, uid kept`);
    } else {
      uid.atype = atype as number;
      if (!TAG && !isValidAtype(atype))
        bad(issues, path, 'atype', `${atype as number} is not 1, 2, 3 or >= 500 (AdCOM); kept as sent`);
    }
  }
  // An invalid ext drops the whole uid: what the provider meant by it cannot be known.
  if (ext !== undefined) {
    const copy = copyExt(ext, limits);
    if (typeof copy === 'string') return bad(issues, path, 'ext', copy);
    uid.ext = copy;
  }
  return uid;
}

function validateOne(raw: unknown, path: string, limits: Required<EidLimits>, issues: Issue[]): Eid | undefined {
  if (!isObject(raw)) return bad(issues, path, '', TAG ? 'not an object' : 'eid must be an object');
  const { source, uids, inserter, matcher, mm, ext } = raw;
  // A source of spaces only is as empty as ''.
  const problem = badString(typeof source === 'string' && !source.trim() ? '' : source, limits.maxIdLength);
  if (problem) return bad(issues, path, 'source', problem);
  if (!Array.isArray(uids) || !uids.length) return bad(issues, path, 'uids', 'must be a non-empty array');
  const kept = each(uids, limits.maxUids, path + '.uids', 'uids', issues, (u, p) => validateUid(u, p, limits, issues));
  if (!kept.length)
    return bad(issues, path, '', TAG ? 'no valid uid' : `eid "${source as string}" has no valid uid and is dropped`);
  const eid: Eid = { source: (source as string).trim(), uids: kept };
  // Provenance (OpenRTB 2.6 §3.2.27) is kept exactly as sent; an unusable field is dropped, the ad server says so.
  const inserterProblem = badString(inserter, limits.maxIdLength);
  if (!inserterProblem) eid.inserter = inserter as string;
  else if (!TAG && inserter !== undefined) bad(issues, path, 'inserter', inserterProblem + '; inserter dropped');
  const matcherProblem = badString(matcher, limits.maxIdLength);
  if (!matcherProblem) eid.matcher = matcher as string;
  else if (!TAG && matcher !== undefined) bad(issues, path, 'matcher', matcherProblem + '; matcher dropped');
  if (Number.isInteger(mm) && (mm as number) >= 0 && (TAG || (mm as number) <= MAX_INT32)) eid.mm = mm as number;
  else if (!TAG && mm !== undefined) {
    const over = Number.isInteger(mm) && (mm as number) > 0;
    bad(
      issues,
      path,
      'mm',
      over ? `${mm as number} is above OpenRTB's 32-bit integers; mm dropped` : 'must be an integer >= 0; mm dropped',
    );
  }
  if (ext !== undefined) {
    const copy = copyExt(ext, limits);
    if (typeof copy !== 'string') eid.ext = copy;
    else bad(issues, path, 'ext', TAG ? copy : copy + '; ext dropped');
  }
  return eid;
}

/** How {@link validateEids} may treat its input. */
export interface ValidateOptions {
  /**
   * The input is the caller's to give away (fresh from `JSON.parse`): when it is already exactly what validation
   * would return, it is returned as it is instead of copied. Node side only (the tag always copies).
   */
  reuse?: boolean;
}

/** The defaults of {@link EidLimits} on the Node side, for the reuse check (validateEids spells them for the tag). */
const NODE_LIMITS: Required<EidLimits> = {
  maxEids: 1000,
  maxUids: 100,
  maxIdLength: 4096,
  maxExtLength: 16_384,
  maxExtDepth: 32,
};

/** True when every limit is given (the ad server's always are), so the reuse check needs no copy with defaults. */
const hasEveryLimit = (l: EidLimits): l is Required<EidLimits> =>
  l.maxEids !== undefined &&
  l.maxUids !== undefined &&
  l.maxIdLength !== undefined &&
  l.maxExtLength !== undefined &&
  l.maxExtDepth !== undefined;

/** {@link hasEmail} behind a cheap test: an address, encoded or not, holds an `@` or a `%`. The hot path's form. */
const emailIn = (s: string) => (s.includes('@') || s.includes('%')) && hasEmail(s);

/**
 * True when `input` is exactly what validateEids would return for it (every field valid and within the limits, no
 * same-source eids, no repeated uid id, nothing to drop or trim), so that `reuse` may keep it: the common ad call,
 * whose copy is half the cost of its parse. Anything else, however small, answers false and is validated, which
 * names the issues. Only plain data from JSON.parse reaches it (no getters to throw). Written for speed: no Sets,
 * one array, key names compared directly. A property test holds it to the copying route (test/adserver/parse.test.ts).
 */
function isCanonical(input: unknown, limits: Required<EidLimits>): input is Eid[] {
  if (!Array.isArray(input) || input.length > limits.maxEids) return false;
  const n = input.length;
  const maxId = limits.maxIdLength;
  const sources: string[] = new Array<string>(n);
  for (let e = 0; e < n; e++) {
    const eid: unknown = input[e];
    if (!isObject(eid)) return false;
    for (const k in eid) {
      if (k !== 'source' && k !== 'uids' && k !== 'inserter' && k !== 'matcher' && k !== 'mm' && k !== 'ext')
        return false;
    }
    const { source, uids, inserter, matcher, mm, ext } = eid;
    if (typeof source !== 'string' || !source || source.length > maxId || source.trim() !== source) return false;
    const key = source.toLowerCase();
    for (let j = 0; j < e; j++) if (sources[j] === key) return false;
    sources[e] = key;
    if (!Array.isArray(uids) || uids.length === 0 || uids.length > limits.maxUids) return false;
    if (inserter !== undefined && (typeof inserter !== 'string' || !inserter || inserter.length > maxId)) return false;
    if (matcher !== undefined && (typeof matcher !== 'string' || !matcher || matcher.length > maxId)) return false;
    // An email address anywhere is raw personal data: the validation that follows names and drops it.
    if (emailIn(source) || (inserter && emailIn(inserter)) || (matcher && emailIn(matcher))) return false;
    if (mm !== undefined && !(typeof mm === 'number' && isInt32(mm) && mm >= 0)) return false;
    if (ext !== undefined && !extWithin(ext, limits)) return false;
    for (let i = 0; i < uids.length; i++) {
      const uid: unknown = uids[i];
      if (!isObject(uid)) return false;
      for (const k in uid) if (k !== 'id' && k !== 'atype' && k !== 'ext') return false;
      const id = uid.id;
      if (typeof id !== 'string' || !id || id.length > maxId || emailIn(id)) return false;
      if (uid.atype !== undefined && !isValidAtype(uid.atype)) return false;
      if (uid.ext !== undefined && !extWithin(uid.ext, limits)) return false;
      for (let j = 0; j < i; j++) if ((uids[j] as Uid).id === id) return false;
    }
  }
  return true;
}

/**
 * True when an `ext` fresh from JSON.parse is within the ext caps by a cheap bound (copyExt decides exactly for
 * the rare one near them). JSON.parse accepts nesting far deeper than JSON.stringify can write back, and an ext
 * is forwarded to every partner: both are capped.
 */
function extWithin(ext: unknown, limits: Required<EidLimits>): boolean {
  if (!isObject(ext)) return false;
  const bound = measureJson(ext, limits.maxExtDepth, limits.maxExtLength);
  if (bound >= 0 && bound <= limits.maxExtLength) return true;
  // The validation that follows reads this measure instead of walking the ext again (each walk of an object of
  // thousands of keys first collects them all).
  measured.set(ext, { depth: limits.maxExtDepth, max: limits.maxExtLength, bound });
  return false;
}

/** Exts that {@link isCanonical} measured and found not within the caps at once, with the measure (Node side). */
const measured = new WeakMap<object, { depth: number; max: number; bound: number }>();

/**
 * Validates an array of EIDs, dropping invalid EIDs and UIDs one by one and merging same-source EIDs.
 * Never throws, whatever it is given (getters that throw, cycles, 10,000 entries).
 * @example validateEids([{ source: 'id5-sync.com', uids: [{ id: 'ID5*abc', atype: 1 }] }]).value
 */
export function validateEids(input: unknown, limits?: EidLimits, options?: ValidateOptions): Result<Eid[]>;
export function validateEids(input: unknown, limits: EidLimits = {}): Result<Eid[]> {
  if (!TAG) {
    // `options` is read from `arguments`: the tag never passes it, and a declared parameter would cost its build
    // bytes it does not have.
    // eslint-disable-next-line prefer-rest-params -- a rest parameter would cost the tag's build bytes too
    const options = arguments[2] as ValidateOptions | undefined;
    try {
      if (options?.reuse && isCanonical(input, hasEveryLimit(limits) ? limits : { ...NODE_LIMITS, ...limits })) {
        return { value: input, issues: [] };
      }
    } catch {
      // Not plain data after all (a getter threw): validated below, which says so.
    }
  }
  const lim = { maxEids: 1000, maxUids: 100, maxIdLength: 4096, ...limits } as Required<EidLimits>;
  if (!TAG) {
    lim.maxExtLength ??= 16_384;
    lim.maxExtDepth ??= 32;
  }
  const issues: Issue[] = [];
  let kept: Eid[] = [];
  // The input path of each kept eid, for an issue of the merge (Node side).
  const paths: string[] = [];
  try {
    if (!Array.isArray(input)) bad(issues, 'eids', '', 'eids must be an array');
    else
      kept = each(
        input,
        lim.maxEids,
        'eids',
        'eids',
        issues,
        TAG
          ? (e, path) => validateOne(e, path, lim, issues)
          : (e, path) => {
              const eid = validateOne(e, path, lim, issues);
              if (eid) paths.push(path);
              return eid;
            },
        TAG ? 'unreadable' : 'eid could not be read',
      );
  } catch {
    bad(issues, 'eids', '', TAG ? 'unreadable' : 'eids could not be read');
  }
  const merged = mergeBySource(kept, false);
  if (!TAG) capMergedUids(merged, kept, paths, lim.maxUids, issues);
  return { value: merged, issues };
}

/**
 * Holds each merged eid to `max` uids: the cap is on what is forwarded, so 64 eids of one source, each within it,
 * do not become one eid of a thousand uids. The issue names the first eid of that source as it was sent.
 */
function capMergedUids(merged: Eid[], kept: readonly Eid[], paths: readonly string[], max: number, issues: Issue[]) {
  for (const eid of merged) {
    const extra = eid.uids.length - max;
    if (extra <= 0) continue;
    eid.uids.length = max;
    const message = `more than ${max} uids once merged with the other eids of source "${eid.source}": ${extra} dropped`;
    bad(issues, `${paths[kept.indexOf(eid)]}.uids`, '', message);
  }
}

/**
 * Merges EIDs with the same source (case-insensitive) and drops repeated uid ids.
 * The first occurrence wins: its source spelling, fields and uid order are kept. On the Node side EIDs merge
 * only when their provenance (`inserter`, `matcher`, `mm`) is the same too: ids two parties inserted stay apart.
 */
export function mergeEids(eids: readonly Eid[]): Eid[] {
  return mergeBySource(eids, true);
}

/** mergeEids' work; `copy: false` reuses the given objects, for EIDs validateEids has just built. */
function mergeBySource(eids: readonly Eid[], copy: boolean): Eid[] {
  const bySource = new Map<string, Eid>();
  for (const eid of eids) {
    // Prebid Server keeps same-source EIDs of different inserters apart; so does the ad server, so that
    // permission rules on inserter/matcher/mm see each as sent. The tag merges by source alone (fewer bytes).
    const key = TAG
      ? eid.source.toLowerCase()
      : `${eid.source.toLowerCase()}\n${eid.inserter ?? ''}\n${eid.matcher ?? ''}\n${eid.mm ?? ''}`;
    const seen = bySource.get(key);
    if (!seen) {
      const first = copy ? { ...eid } : eid;
      first.uids = dedupeUids(eid.uids);
      bySource.set(key, first);
      continue;
    }
    seen.uids = dedupeUids([...seen.uids, ...eid.uids]);
  }
  return [...bySource.values()];
}

function dedupeUids(uids: readonly Uid[]): Uid[] {
  if (FAST && uids.length < 2) return uids.slice();
  const ids = new Set<string>();
  return uids.filter((u) => !ids.has(u.id) && !!ids.add(u.id));
}

/**
 * Lays `winner` over `others` by source: a source present in `winner` replaces every EID of that
 * source in `others`. Used for "page eids win over module eids".
 */
export function overlayEids(winner: readonly Eid[], others: readonly Eid[]): Eid[] {
  const taken = new Set(winner.map((e) => e.source.toLowerCase()));
  return mergeEids([...winner, ...others.filter((e) => !taken.has(e.source.toLowerCase()))]);
}
