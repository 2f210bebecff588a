/**
 * The experiments (holdout tests) an ad call says its browser is in: the `xp` GET parameter (Base64 JSON, as `eids`)
 * or the `xp` field of a POST body (docs/ad-server.md "Holdout experiments"). Each entry is checked on its own:
 * a broken one is dropped with an issue naming its field (`xp[2].pct`), the others kept. Bounded like the eids: the
 * entries, their sources and every string have a cap, and nothing is read past them.
 */
import type { Issue } from '../../core/index.js';
import { isObject } from '../../core/index.js';
import { ownString } from '../common/index.js';

/** One experiment an ad call is in, as decoded from its `xp` entry. */
export interface CallExperiment {
  /** The experiment's name: 1–32 characters of `A–Z a–z 0–9 _ . -`. */
  id: string;
  /** `holdout`: the browser's eids of `sources` were withheld from the call; `control`: they were kept. */
  arm: 'holdout' | 'control';
  /** The held-out share the experiment declares, 0–1 (`pct` 10 is 0.1). */
  share: number;
  /** The eid sources the experiment holds out, lowercase. */
  sources: string[];
  /** True when the arm is kept per browser (stored); false when drawn per page view (no storage consent). */
  sticky: boolean;
}

/** Most experiments kept per call; further entries are dropped with an issue. */
export const MAX_EXPERIMENTS = 8;
/** Most sources per experiment; an entry with more is dropped. */
export const MAX_EXPERIMENT_SOURCES = 10;
/** Longest source of an experiment, in characters. */
export const MAX_EXPERIMENT_SOURCE_LENGTH = 100;
/**
 * Longest `xp` GET parameter, in characters, before decoding: 8 entries of 10 sources of 100 characters fit in it
 * (about 12,000 characters of Base64).
 */
export const MAX_EXPERIMENTS_PARAM_LENGTH = 16_384;

const ID = /^[A-Za-z0-9_.-]{1,32}$/;

/** One entry, or the issue that drops it. */
function entryOf(raw: unknown, path: string): CallExperiment | Issue {
  if (!isObject(raw)) return { path, message: 'must be an object; dropped' };
  const { id, arm, pct, src, st } = raw;
  if (typeof id !== 'string' || !ID.test(id))
    return { path: `${path}.id`, message: 'must be 1-32 characters of A-Z a-z 0-9 _ . -; entry dropped' };
  if (arm !== 'h' && arm !== 'c') return { path: `${path}.arm`, message: 'must be "h" or "c"; entry dropped' };
  const basis = typeof pct === 'number' ? Math.round(pct * 100) : NaN;
  if (!(basis > 0 && basis < 10_000 && Math.abs((pct as number) * 100 - basis) < 1e-6))
    return { path: `${path}.pct`, message: 'must be a percentage above 0 and below 100, at most 2 decimals; dropped' };
  if (!Array.isArray(src) || src.length < 1 || src.length > MAX_EXPERIMENT_SOURCES)
    return { path: `${path}.src`, message: `must be 1-${MAX_EXPERIMENT_SOURCES} sources; entry dropped` };
  const sources: string[] = [];
  for (let i = 0; i < src.length; i++) {
    const s = src[i] as unknown;
    if (typeof s !== 'string' || !s.trim() || s.length > MAX_EXPERIMENT_SOURCE_LENGTH)
      return {
        path: `${path}.src[${i}]`,
        message: `must be a source of 1-${MAX_EXPERIMENT_SOURCE_LENGTH} characters; entry dropped`,
      };
    const source = ownString(s.trim().toLowerCase());
    if (!sources.includes(source)) sources.push(source);
  }
  if (st !== 0 && st !== 1) return { path: `${path}.st`, message: 'must be 0 or 1; entry dropped' };
  return {
    id: ownString(id),
    arm: arm === 'h' ? 'holdout' : 'control',
    share: basis / 10_000,
    sources,
    sticky: st === 1,
  };
}

/**
 * The experiments of an `xp` value (an array of entries): the valid ones, first {@link MAX_EXPERIMENTS} at most, an
 * id repeated in one call kept once (its first entry); and the issues of what was dropped.
 */
export function readExperiments(input: unknown, path = 'xp'): { value: CallExperiment[]; issues: Issue[] } {
  const issues: Issue[] = [];
  const value: CallExperiment[] = [];
  if (!Array.isArray(input)) {
    issues.push({ path, message: 'must be an array of experiments; ignored' });
    return { value, issues };
  }
  const n = Math.min(input.length, MAX_EXPERIMENTS);
  for (let i = 0; i < n; i++) {
    let raw: unknown;
    try {
      raw = input[i];
    } catch {
      raw = undefined;
    }
    let e: CallExperiment | Issue;
    try {
      e = entryOf(raw, `${path}[${i}]`);
    } catch {
      e = { path: `${path}[${i}]`, message: 'could not be read; dropped' }; // a getter that throws
    }
    if ('message' in e) issues.push(e);
    else if (value.some((v) => v.id === e.id))
      issues.push({ path: `${path}[${i}].id`, message: `repeats experiment "${e.id}"; entry dropped` });
    else value.push(e);
  }
  if (input.length > n)
    issues.push({ path, message: `more than ${MAX_EXPERIMENTS} experiments: ${input.length - n} dropped` });
  return { value, issues };
}
