/**
 * Experiments (holdouts): the rules the tag and the operator's composer share (docs/tag.md#experiments-holdouts).
 * An experiment holds some eid sources out of a share of browsers: each browser's arm comes from a hash of a
 * first-party random id, and every ad call carries its arms (`xp`, docs/wire-format.md#experiments-the-xp-field).
 * Pure: no DOM, no storage.
 */
import type { Issue, Result } from './eid.js';

/** An experiment as declared (by the operator per network, or by the page in `sas.setup({ experiments })`). */
export interface ExperimentDeclaration {
  /** 1–32 characters of `A–Z a–z 0–9 _ . -`. */
  id: string;
  /** Eid sources held out (as in `eids[].source`). */
  sources?: string[];
  /** Provider modules whose sources are held out (`identityLink`, `idLinking`, `criteo`, `uid2`). */
  modules?: string[];
  /** Percent of browsers held out: above 0, below 100, at most 2 decimals. */
  share: number;
}

/** A checked experiment: its sources lowercase, modules translated, the share rounded to 2 decimals. */
export interface Experiment {
  id: string;
  sources: string[];
  share: number;
}

/** One entry of a call's `xp`: the experiment, this browser's arm, the declared share, the sources, sticky or not. */
export interface ExperimentEntry {
  id: string;
  /** `h`: held out (the sources were withheld); `c`: control (sources kept). */
  arm: 'h' | 'c';
  /** Percent held out, as declared. */
  pct: number;
  src: string[];
  /** 1: the arm comes from the stored id (kept across page views); 0: from an id of this page view only. */
  st: 0 | 1;
}

/** An experiment id. */
export const EXPERIMENT_ID = /^[A-Za-z0-9_.-]{1,32}$/;
/** A source an experiment names (lowercase, as the tag compares them). */
export const EXPERIMENT_SOURCE = /^[a-z0-9_][a-z0-9_.-]{0,99}$/;
/** At most this many experiments per page (and entries per call). */
export const MAX_EXPERIMENTS = 8;
/** At most this many sources per experiment. */
export const MAX_EXPERIMENT_SOURCES = 10;

/**
 * The sources each provider module gives (src/tag/modules). The Prebid bridge passes on whatever the page's
 * Prebid.js holds, so an experiment over those ids names their sources instead.
 */
export const MODULE_SOURCES: Readonly<Record<string, readonly string[]>> = {
  identityLink: ['hemsha256', 'liveramp.com'],
  idLinking: ['id5-sync.com'],
  criteo: ['criteo.com'],
  uid2: ['uidapi.com', 'euid.eu'],
};

/** 32-bit FNV-1a of a string's UTF-16 code units (the ids hashed are ASCII). */
export function fnv1a32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/**
 * A 32-bit finaliser (MurmurHash3's fmix32): every input bit moves every output bit. FNV-1a alone leaves the hashes
 * of `xid:exp-a` and `xid:exp-b` correlated (their last step differs in a few low bits), and with them the arms of
 * experiments whose ids differ at the end; mixed, the arms of two experiments are independent.
 */
export function mix32(h: number): number {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/**
 * The arm of browser `xid` in experiment `id` holding out `share` percent: `h` when the mixed hash of `xid:id`, in
 * 10,000 buckets, falls below the share in hundredths of a percent.
 */
export const armOf = (xid: string, id: string, share: number): 'h' | 'c' =>
  mix32(fnv1a32(xid + ':' + id)) % 10000 < Math.round(share * 100) ? 'h' : 'c';

/**
 * Checks experiment declarations: each bad one is dropped with an issue naming it (`experiments[1].share`), the
 * rest kept; `taken` holds ids declared before (another list's), which a repeated id does not replace. Modules
 * become their sources; sources are lowercased and deduplicated; at most {@link MAX_EXPERIMENTS} in all.
 */
export function checkExperiments(input: unknown, path = 'experiments', taken: string[] = []): Result<Experiment[]> {
  const issues: Issue[] = [];
  const value: Experiment[] = [];
  const bad = (p: string, message: string) => void issues.push({ path: p, message: message + '; dropped' });
  if (input != null && !Array.isArray(input)) bad(path, 'must be an array');
  if (!Array.isArray(input)) return { value, issues };
  (input as unknown[]).forEach((x, i) => {
    const at = `${path}[${i}]`;
    const { id, share, sources = [], modules = [] } = (x && typeof x == 'object' ? x : {}) as Record<string, unknown>;
    const pct = Math.round((share as number) * 100) / 100;
    if (typeof id != 'string' || !EXPERIMENT_ID.test(id)) return bad(at + '.id', 'must be 1-32 of A-Z a-z 0-9 _ . -');
    if (taken.includes(id)) return bad(at + '.id', id + ' is declared twice');
    if (typeof share != 'number' || !(pct > 0 && pct < 100)) return bad(at + '.share', 'must be a percent in (0, 100)');
    if (!Array.isArray(sources) || !Array.isArray(modules)) return bad(at, 'sources and modules must be arrays');
    const src: string[] = [];
    for (const s of sources as unknown[]) {
      if (typeof s != 'string' || !EXPERIMENT_SOURCE.test(s.toLowerCase()))
        return bad(at + '.sources', String(s) + ' is not an eid source');
      src.push(s.toLowerCase());
    }
    for (const m of modules as unknown[]) {
      const of = MODULE_SOURCES[String(m)];
      // An own entry only (not `constructor`); the Prebid bridge has none: its sources are the page's.
      if (!Array.isArray(of))
        return bad(at + '.modules', `${String(m)} is not one of ${Object.keys(MODULE_SOURCES).join(', ')}`);
      src.push(...(of as string[]));
    }
    const out = [...new Set(src)];
    if (!out.length) return bad(at, 'names no sources or modules');
    if (out.length > MAX_EXPERIMENT_SOURCES) return bad(at, `holds out over ${MAX_EXPERIMENT_SOURCES} sources`);
    if (taken.length >= MAX_EXPERIMENTS) return bad(at, `over ${MAX_EXPERIMENTS} experiments`);
    taken.push(id);
    value.push({ id, sources: out, share: pct });
  });
  return { value, issues };
}
