/**
 * Speed for the forwarding policy (policy.ts; docs/project.md, "Measured sizes and ratios"): each eid of a call
 * as one small integer, its code, so that deciding it for a DSP is one AND instead of the rule of decide.ts.
 *
 * Each partner id named in a rule gets a bit, any other partner the OTHER bit, and each rule the bits of its
 * partners; an eid's code is its deciding rule's bits (ALL without a rule), plus EXEMPT when its source is in
 * `allowSources`. The bits stay small integers (V8 Smis). With more than 28 named partners there are no bits, and
 * the policy applies the rule eid by eid. Ids are lowercased (partners match case-insensitively).
 */
import type { Eid } from '../../core/index.js';
import { candidatesFor, matchRule } from './decide.js';
import type { Compiled, CompiledRules } from './permissions.js';

/** The bit of every partner no rule names. */
export const OTHER = 1 << 28;
/** In a code: the eid's source is in `allowSources`. */
export const EXEMPT = 1 << 29;
/** Every partner's bit. */
export const ALL = EXEMPT - 1;

/** Named partners' bits, at most this many. */
const MAX_BITS = 28;
/** Distinct source spellings kept, and eid positions remembered. */
const MAX_SPELLINGS = 10_000;
const MAX_POSITIONS = 64;

/** The bit of each partner id named in a rule (lowercase), setting each rule's `mask`; undefined past 28 ids. */
export function partnerBits(rules: readonly Compiled[]): ReadonlyMap<string, number> | undefined {
  const named = [...new Set(rules.flatMap((r) => [...r.partners]))];
  if (named.length > MAX_BITS) return undefined;
  const bitOf = new Map(named.map((id, i) => [id, 1 << i]));
  for (const r of rules) r.mask = r.all ? ALL : [...r.partners].reduce((m, id) => m | bitOf.get(id)!, 0);
  return bitOf;
}

/** What an eid's decision takes from its source: its candidate rules, whether consent spares it. */
interface SourceEntry {
  rules: Compiled[] | undefined;
  exempt: boolean;
  /** The code of an eid of this source without inserter, matcher or mm (most eids), once worked out. */
  plain?: number;
}

/** An eid seen at one position of the last call, with its code. */
interface Seen {
  source: string;
  inserter?: string;
  matcher?: string;
  mm?: number;
  code: number;
}

/** The codes of a call's eids, and what is kept between calls to work them out quickly. */
export class EidCodes {
  /**
   * Per source as received: its rules and whether it is exempt from consent, so a call's eids are looked up
   * without lowercasing each source again. Bounded: past 10,000 distinct spellings, entries are not kept.
   */
  private readonly bySpelling = new Map<string, SourceEntry>();
  /**
   * The code found at each position of the last call's eids, with what it was worked out from: a network's calls
   * mostly carry the same sources in the same order, so a call's eid at position i usually has the source and
   * provenance the last call's had there, and is decided by comparing four fields instead of a Map lookup and the
   * rules (docs/ad-server.md, "What a policy keeps between calls"). A code depends on nothing else (the rules are
   * fixed), so reusing it cannot change a decision. Bounded: 64 positions.
   */
  private readonly seen: Seen[] = [];
  /** The last codes worked out (arrays are never changed once made), and the bits all of them have. */
  private lastCodes: number[] = [];
  private lastCommon = ALL;

  constructor(
    private readonly rules: CompiledRules,
    private readonly allow: ReadonlySet<string>,
  ) {}

  /** What the decision of an eid of `source` takes from it. */
  entry(source: string): SourceEntry {
    let entry = this.bySpelling.get(source);
    if (!entry) {
      entry = { rules: candidatesFor(source, this.rules), exempt: this.allow.has(source.toLowerCase()) };
      if (this.bySpelling.size < MAX_SPELLINGS) this.bySpelling.set(source, entry);
    }
    return entry;
  }

  /** The codes of `all`, and the bits every one of them has: the last call's arrays when they are the same. */
  codesOf(all: readonly Eid[]): { codes: number[]; common: number } {
    let same = all.length === this.lastCodes.length;
    let codes = same ? this.lastCodes : [];
    let common = same ? this.lastCommon : ALL;
    for (let i = 0; i < all.length; i++) {
      const code = this.codeAt(i, all[i]);
      if (same && codes[i] !== code) {
        same = false;
        codes = this.lastCodes.slice(0, i);
        common = codes.reduce((m, c) => m & c, ALL);
      }
      if (!same) {
        codes.push(code);
        common &= code;
      }
    }
    if (!same) {
      this.lastCodes = codes;
      this.lastCommon = common;
    }
    return { codes, common };
  }

  /** The code of `eid` at position `i`: the last call's there when it has the same source and provenance. */
  private codeAt(i: number, eid: Eid): number {
    const s = this.seen[i];
    const { source, inserter, matcher, mm } = eid;
    if (s?.source === source && s.inserter === inserter && s.matcher === matcher && s.mm === mm) return s.code;
    const entry = this.entry(source);
    const plain = inserter === undefined && matcher === undefined && mm === undefined;
    let code = plain ? entry.plain : undefined;
    if (code === undefined) {
      const rule = entry.rules && matchRule(eid, entry.rules);
      code = (rule ? rule.mask : ALL) | (entry.exempt ? EXEMPT : 0);
      if (plain) entry.plain = code;
    }
    if (i < MAX_POSITIONS) this.seen[i] = { source, inserter, matcher, mm, code };
    return code;
  }
}
