/**
 * OpenRTB 2.6 / AdCOM 1.0 extended identifiers: types, validation and merging.
 * Spec: extended-ids.md §2.1. Validation never throws: it returns the valid part and one issue per problem.
 */

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
  /** Longest `id` / `source` accepted, in characters. Default 4096. */
  maxIdLength?: number;
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

/** A JSON-safe deep copy of a plain object (rejects cycles, functions, getters that throw). */
function copyExt(v: unknown): Record<string, unknown> | undefined {
  try {
    const copy = isObject(v) ? (FAST && copyFlat(v)) || (JSON.parse(JSON.stringify(v)) as unknown) : 0;
    return isObject(copy) ? copy : undefined;
  } catch {
    return undefined;
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
    else if (typeof x === 'number' && Number.isFinite(x)) out[k] = x === 0 ? 0 : x; // JSON writes -0 as 0
    else return undefined;
  }
  return out;
}

/** AdCOM atype: 1, 2, 3 or vendor-specific ≥ 500. */
export const isValidAtype = (v: unknown): v is number =>
  Number.isInteger(v) && (((v as number) > 0 && (v as number) < 4) || (v as number) >= 500);

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
  typeof v !== 'string' || !v ? 'must be a non-empty string' : !TAG && v.length > max ? `is longer than ${max} characters` : undefined;

/**
 * Validates the first `max` of `items` with `one` (at path `path[i]`); the rest are dropped with one issue. With
 * `unreadable`, an item that throws while read (a getter, a Proxy) is dropped with that message; otherwise it throws on.
 */
function each<T>(items: unknown[], max: number, path: string, what: string, issues: Issue[], one: (raw: unknown, path: string) => T | undefined, unreadable?: string): T[] {
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
  // them through: an integer goes on as it came, and no atype ever costs the id (issue 11). The ad server notes
  // the unusual ones; the tag, which only forwards, stays quiet to save bytes.
  if (atype !== undefined) {
    if (!Number.isInteger(atype)) bad(issues, path, 'atype', TAG ? 'not an integer' : 'must be an integer; atype dropped, uid kept');
    else {
      uid.atype = atype as number;
      if (!TAG && !isValidAtype(atype)) bad(issues, path, 'atype', `${atype} is not 1, 2, 3 or >= 500 (AdCOM); kept as sent`);
    }
  }
  // An invalid ext drops the whole uid: what the provider meant by it cannot be known.
  if (ext !== undefined && !(uid.ext = copyExt(ext))) return bad(issues, path, 'ext', TAG ? 'must be an object' : 'must be a plain JSON object');
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
  if (!kept.length) return bad(issues, path, '', TAG ? 'no valid uid' : `eid "${source}" has no valid uid and is dropped`);
  const eid: Eid = { source: (source as string).trim(), uids: kept };
  // Provenance (OpenRTB 2.6 §3.2.27) is kept exactly as sent; an unusable field is dropped, the ad server says so.
  if (typeof inserter === 'string' && inserter) eid.inserter = inserter;
  else if (!TAG && inserter !== undefined) bad(issues, path, 'inserter', 'must be a non-empty string; inserter dropped');
  if (typeof matcher === 'string' && matcher) eid.matcher = matcher;
  else if (!TAG && matcher !== undefined) bad(issues, path, 'matcher', 'must be a non-empty string; matcher dropped');
  if (Number.isInteger(mm) && (mm as number) >= 0) eid.mm = mm as number;
  else if (!TAG && mm !== undefined) bad(issues, path, 'mm', 'must be an integer >= 0; mm dropped');
  if (ext !== undefined) {
    const copy = copyExt(ext);
    if (copy) eid.ext = copy;
    else bad(issues, path, 'ext', TAG ? 'must be an object' : 'must be a plain JSON object; ext dropped');
  }
  return eid;
}

/**
 * Validates an array of EIDs, dropping invalid EIDs and UIDs one by one and merging same-source EIDs.
 * Never throws, whatever it is given (getters that throw, cycles, 10,000 entries).
 * @example validateEids([{ source: 'id5-sync.com', uids: [{ id: 'ID5*abc', atype: 1 }] }]).value
 */
export function validateEids(input: unknown, limits: EidLimits = {}): Result<Eid[]> {
  const lim: Required<EidLimits> = { maxEids: 1000, maxUids: 100, maxIdLength: 4096, ...limits };
  const issues: Issue[] = [];
  let kept: Eid[] = [];
  try {
    if (!Array.isArray(input)) bad(issues, 'eids', '', 'eids must be an array');
    else kept = each(input, lim.maxEids, 'eids', 'eids', issues, (e, path) => validateOne(e, path, lim, issues), TAG ? 'unreadable' : 'eid could not be read');
  } catch {
    bad(issues, 'eids', '', TAG ? 'unreadable' : 'eids could not be read');
  }
  return { value: mergeBySource(kept, false), issues };
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
    const key = TAG ? eid.source.toLowerCase() : `${eid.source.toLowerCase()}\n${eid.inserter ?? ''}\n${eid.matcher ?? ''}\n${eid.mm ?? ''}`;
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
