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

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** A JSON-safe deep copy of a plain object (rejects cycles, functions, getters that throw). */
function copyExt(v: unknown): Record<string, unknown> | undefined {
  if (!isObject(v)) return undefined;
  try {
    const flat = copyFlat(v);
    if (flat) return flat;
    const copy = JSON.parse(JSON.stringify(v)) as unknown;
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
  typeof v === 'number' && Number.isInteger(v) && (v === 1 || v === 2 || v === 3 || v >= 500);

function validateUid(raw: unknown, path: string, limits: Required<EidLimits>, issues: Issue[]): Uid | undefined {
  if (!isObject(raw)) {
    issues.push({ path, message: 'uid must be an object' });
    return undefined;
  }
  const { id, atype, ext } = raw;
  if (typeof id !== 'string' || id.length === 0) {
    issues.push({ path: path + '.id', message: 'id must be a non-empty string' });
    return undefined;
  }
  if (id.length > limits.maxIdLength) {
    issues.push({ path: path + '.id', message: `id is longer than ${limits.maxIdLength} characters` });
    return undefined;
  }
  const uid: Uid = { id };
  if (atype !== undefined) {
    if (!isValidAtype(atype)) {
      issues.push({ path: path + '.atype', message: 'atype must be an integer 1, 2, 3 or >= 500' });
      return undefined;
    }
    uid.atype = atype;
  }
  if (ext !== undefined) {
    const copy = copyExt(ext);
    if (!copy) {
      issues.push({ path: path + '.ext', message: 'ext must be a plain JSON object' });
      return undefined;
    }
    uid.ext = copy;
  }
  return uid;
}

function validateOne(raw: unknown, path: string, limits: Required<EidLimits>, issues: Issue[]): Eid | undefined {
  if (!isObject(raw)) {
    issues.push({ path, message: 'eid must be an object' });
    return undefined;
  }
  const { source, uids, inserter, matcher, mm, ext } = raw;
  if (typeof source !== 'string' || source.trim().length === 0) {
    issues.push({ path: path + '.source', message: 'source must be a non-empty string' });
    return undefined;
  }
  if (source.length > limits.maxIdLength) {
    issues.push({ path: path + '.source', message: `source is longer than ${limits.maxIdLength} characters` });
    return undefined;
  }
  if (!Array.isArray(uids) || uids.length === 0) {
    issues.push({ path: path + '.uids', message: 'uids must be a non-empty array' });
    return undefined;
  }
  const kept: Uid[] = [];
  const n = Math.min(uids.length, limits.maxUids);
  for (let i = 0; i < n; i++) {
    const uid = validateUid(uids[i], `${path}.uids[${i}]`, limits, issues);
    if (uid) kept.push(uid);
  }
  if (uids.length > n) {
    issues.push({ path: path + '.uids', message: `more than ${limits.maxUids} uids: ${uids.length - n} dropped` });
  }
  if (kept.length === 0) {
    issues.push({ path, message: `eid "${source}" has no valid uid and is dropped` });
    return undefined;
  }
  const eid: Eid = { source: source.trim(), uids: kept };
  if (typeof inserter === 'string' && inserter) eid.inserter = inserter;
  if (typeof matcher === 'string' && matcher) eid.matcher = matcher;
  if (typeof mm === 'number' && Number.isInteger(mm) && mm >= 0) eid.mm = mm;
  if (ext !== undefined) {
    const copy = copyExt(ext);
    if (copy) eid.ext = copy;
    else issues.push({ path: path + '.ext', message: 'ext must be a plain JSON object; ext dropped' });
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
  const kept: Eid[] = [];
  try {
    if (!Array.isArray(input)) {
      issues.push({ path: 'eids', message: 'eids must be an array' });
      return { value: [], issues };
    }
    const n = Math.min(input.length, lim.maxEids);
    for (let i = 0; i < n; i++) {
      let eid: Eid | undefined;
      try {
        eid = validateOne(input[i], `eids[${i}]`, lim, issues);
      } catch {
        issues.push({ path: `eids[${i}]`, message: 'eid could not be read' });
      }
      if (eid) kept.push(eid);
    }
    if (input.length > n) {
      issues.push({ path: 'eids', message: `more than ${lim.maxEids} eids: ${input.length - n} dropped` });
    }
  } catch {
    issues.push({ path: 'eids', message: 'eids could not be read' });
  }
  return { value: mergeBySource(kept, false), issues };
}

/**
 * Merges EIDs with the same source (case-insensitive) and drops repeated uid ids.
 * The first occurrence wins: its source spelling, fields and uid order are kept.
 */
export function mergeEids(eids: readonly Eid[]): Eid[] {
  return mergeBySource(eids, true);
}

/** mergeEids' work; `copy: false` reuses the given objects, for EIDs validateEids has just built. */
function mergeBySource(eids: readonly Eid[], copy: boolean): Eid[] {
  const bySource = new Map<string, Eid>();
  for (const eid of eids) {
    const key = eid.source.toLowerCase();
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
  if (uids.length < 2) return uids.slice();
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
