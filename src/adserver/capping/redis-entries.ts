/**
 * The entries of the Redis cap store's script calls: a decision, or several identical ones made together (the ad
 * slots of one page taking one cap), encoded once when queued, and the script's answer settled per decision.
 */
import type { QueuedDecision } from './store.js';

/**
 * One entry of a script call: a decision, or several identical ones (same mode, time, keys and windows) decided
 * together, the first ones taking what room the windows have. Encoded once, when it is queued.
 */
export interface Entry {
  decisions: QueuedDecision[];
  keys: string[];
  /** The JSON of the entry before and after its count of decisions: identical decisions have the same. */
  head: string;
  tail: string;
  /** The entry's hash slot (its keys share the user's hash tag), once computed. */
  slot: number;
  sent: boolean;
}

/** Most decisions one entry carries. */
export const MAX_GROUP = 64;

const MODES = { check: 0, take: 1, record: 2 } as const;
// Redis wants whole milliseconds for an expiry, and Lua writes numbers with 14 significant digits: a key is kept for
// a whole number of ms, at most ten years (a custom `windowMs` may be fractional or huge).
const MAX_KEEP_MS = 10 * 366 * 86_400_000;
const keepOf = (ms: number) => Math.min(Math.ceil(ms), MAX_KEEP_MS);

/** A decision encoded as a new entry of its own; `keyOf` names the Redis key of a user × item. */
export function entryOf(d: QueuedDecision, keyOf: (user: string, item: string) => string, slot = -1): Entry {
  const keys: string[] = [];
  let tail = `,${d.checks.length}`;
  for (const c of d.checks) {
    keys.push(keyOf(c.user, c.item));
    tail += `,${keepOf(c.keepMs)},${c.windows.length}`;
    for (const w of c.windows) tail += `,${w.since === -Infinity ? '"-inf"' : w.since},${w.max}`;
  }
  return { decisions: [d], keys, head: `${MODES[d.mode]},${d.at}`, tail, slot, sent: false };
}

/** Whether two decisions are identical: same mode, time, and per check the same user, item, keep and windows. */
export function alike(a: QueuedDecision, b: QueuedDecision): boolean {
  if (a.mode !== b.mode || a.at !== b.at || a.checks.length !== b.checks.length) return false;
  for (let i = 0; i < a.checks.length; i++) {
    const x = a.checks[i];
    const y = b.checks[i];
    if (x.user !== y.user || x.item !== y.item || x.keepMs !== y.keepMs || x.windows.length !== y.windows.length)
      return false;
    for (let w = 0; w < x.windows.length; w++) {
      if (x.windows[w].since !== y.windows[w].since || x.windows[w].max !== y.windows[w].max) return false;
    }
  }
  return true;
}

/** The entries' keys in order and their JSON argument. */
export function encode(entries: readonly Entry[]): { keys: string[]; json: string } {
  const keys: string[] = [];
  let json = '[';
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i];
    json += `${i ? ',' : ''}${e.head},${e.decisions.length}${e.tail}`;
    for (const k of e.keys) keys.push(k);
  }
  return { keys, json: `${json}]` };
}

/**
 * Settles each decision of `entries` from the script's reply: per entry, how many fit (-1: another node's keys),
 * then a count per window of each key. Returns the entries answered -1, or an error for a reply of another shape (a
 * client or proxy answering otherwise), which settles nothing.
 */
export function settleEntries(entries: readonly Entry[], reply: unknown): Entry[] | Error {
  let expected = 0;
  for (const e of entries) for (const c of e.decisions[0].checks) expected += c.windows.length;
  if (!Array.isArray(reply) || reply.length !== expected + entries.length) {
    return new Error('createRedisFrequencyCapStore: unexpected reply from the cap script');
  }
  const r = reply as unknown[];
  let i = 0;
  const elsewhere: Entry[] = [];
  for (const e of entries) {
    const fit = Number(r[i++]);
    const { checks, mode } = e.decisions[0];
    if (fit === -1) {
      for (const c of checks) i += c.windows.length;
      elsewhere.push(e);
      continue;
    }
    const from = i;
    for (const c of checks) i += c.windows.length;
    // The j-th of identical takes found the impressions of those before it that fit; a check counts nothing.
    e.decisions.forEach((p, j) => {
      const added = mode === 'take' ? Math.min(j, fit) : 0;
      const counts: number[][] = [];
      let at = from;
      for (const c of checks) {
        const row: number[] = [];
        for (let w = 0; w < c.windows.length; w++) row.push(Number(r[at++]) + added);
        counts.push(row);
      }
      p.settle(undefined, { allowed: mode === 'take' ? j < fit : fit === 1, counts });
    });
  }
  return elsewhere;
}
