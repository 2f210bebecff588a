/**
 * The permission rules of a forwarding policy (policy.ts): the policy's schema (zod), each rule compiled for
 * matching, and the check that no two rules tie for the most specific match of one eid.
 */
import { ConfigurationError, issueOfProblem } from '../../core/config-error.js';
import { z } from 'zod';
import type { VendorListSource } from '../consent/index.js';
import { formatPath } from '../../core/path.js';

/**
 * One permission rule: the eids it matches go only to `partners` (`'*'`: every partner; `[]`: none). It names at
 * least one of `source`, `inserter`, `matcher`, `mm` and matches the eids that have every field it names.
 */
export interface PermissionRule {
  /** Matches only eids of this source (case-insensitive), for example `id5-sync.com`. */
  source?: string;
  /** Matches only eids with this `inserter` (case-insensitive). */
  inserter?: string;
  /** Matches only eids with this `matcher` (case-insensitive). */
  matcher?: string;
  /** Matches only eids with this match method (`mm`). */
  mm?: number;
  /** Partner ids that may receive the matched eids (case-insensitive), or `'*'` for every partner. */
  partners: readonly string[] | '*';
}

/** A policy configuration that cannot be used: the message names the rule or field (`permissions[2].partners: …`). */
export class ForwardingPolicyError extends ConfigurationError {
  override name = 'ForwardingPolicyError';
  /** Every problem found, each as `path: message` (`issues` holds each with its path). */
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`invalid forwarding policy: ${problems.join('; ')}`, problems.map(issueOfProblem));
    this.problems = problems;
  }
}

/** The fields a rule may match on; a rule names at least one. */
const FIELDS = ['source', 'inserter', 'matcher', 'mm'] as const;
/** A rule's match fields, or the eids two rules share (lower case). */
interface Fields {
  source?: string;
  inserter?: string;
  matcher?: string;
  mm?: number;
}

const domain = z.string().trim().min(1, 'must be a non-empty string');
const partnerId = z
  .string()
  .min(1, 'must be a non-empty partner id')
  .refine((s) => s !== '*', "'*' stands alone: partners: '*'");
const ruleSchema = z
  .strictObject({
    source: domain.optional(),
    inserter: domain.optional(),
    matcher: domain.optional(),
    mm: z.number().int('must be an integer').min(0).optional(),
    partners: z.union([z.literal('*'), z.array(partnerId)], { error: "must be '*' or a list of partner ids" }),
  })
  .refine((r) => FIELDS.some((k) => r[k] !== undefined), {
    message: 'names none of source, inserter, matcher, mm: a rule matches on at least one of them',
  });
const partnerSchema = z.looseObject({
  id: z.string().min(1, 'must be a non-empty partner id'),
  openrtb: z.enum(['2.5', '2.6', 'both']).optional(),
  kind: z.enum(['dsp', 'dmp']).optional(),
  gvlVendorId: z.number().int().positive().optional(),
});
const configSchema = z.strictObject({
  permissions: z.array(ruleSchema).max(10_000).optional(),
  consent: z
    .strictObject({
      enforce: z.boolean().optional(),
      allowSources: z.array(domain).optional(),
      purposes: z.array(z.number().int().min(1).max(24)).min(1).optional(),
      legitimateInterest: z.boolean().optional(),
      gdprDefault: z.enum(['applies', 'does-not-apply', 'when-tc-string']).optional(),
      gpc: z.boolean().optional(),
      requiredPurposes: z.array(z.number().int().min(1).max(24)).optional(),
      gvl: z
        .custom<VendorListSource>(
          (v) =>
            typeof v === 'object' &&
            v !== null &&
            typeof (v as VendorListSource).list === 'function' &&
            typeof (v as VendorListSource).latest === 'function' &&
            typeof (v as VendorListSource).generation === 'number',
          'must be a Global Vendor List (parseVendorList) or a loader (createGvlLoader)',
        )
        .optional(),
      gvlFallback: z.enum(['refuse', 'tc-string']).optional(),
      gvlVersionMissing: z.enum(['refuse', 'newest']).optional(),
      requireDisclosedVendors: z.boolean().optional(),
    })
    .optional(),
  partners: z.array(partnerSchema).optional(),
  cacheSize: z.number().int().positive().optional(),
});

/** A rule ready for matching: its fields lowercased, its specificity, its partners (lowercased) as a set. */
export interface Compiled extends Fields {
  index: number;
  /** How many of source, inserter, matcher and mm the rule names (1–4): the most specific matching rule decides. */
  specificity: number;
  all: boolean;
  /** The partner ids, lowercased: partners match case-insensitively. */
  partners: ReadonlySet<string>;
  /** The partner ids as the rule writes them, for messages. */
  listed: readonly string[];
  /** The partners as bits (`partnerBits` in eid-codes.ts); every bit but EXEMPT for '*'. */
  mask: number;
}

/** The compiled rules, each list most specific first: the first rule that matches an eid decides. */
export interface CompiledRules {
  /** Every rule, in the order written. */
  rules: Compiled[];
  /** By lowercased source: the rules naming that source, with the rules naming no source merged in. */
  bySource: Map<string, Compiled[]>;
  /** The rules naming no source: the candidates for an eid of any other source (undefined when none). */
  anySource: Compiled[] | undefined;
}

/** A rule (or the eids two rules share) in words: `source uidapi.com, inserter pub.example, mm 3`. */
export function describeRule(f: Fields): string {
  return FIELDS.filter((k) => f[k] !== undefined)
    .map((k) => `${k} ${f[k]}`)
    .join(', ');
}

/** The fields a rule names, as bits in FIELDS order. */
const signatureOf = (f: Fields) => FIELDS.reduce((bits, k, i) => (f[k] === undefined ? bits : bits | (1 << i)), 0);
/** The values of `f` for the fields in `signature`: equal for two rules exactly when they agree on those fields. */
// null stands for an unnamed field: no field has it as a value (mm may be 0).
const projection = (f: Fields, signature: number) =>
  JSON.stringify(FIELDS.map((k, i) => (signature & (1 << i) ? f[k] : null)));

/** Past this many ties, the rest are not listed (a broken policy stays a short error, found in bounded time). */
const MAX_TIES = 20;

/**
 * Refuses two equally specific rules that could both decide one eid — they name no field with different values —
 * unless a more specific rule matches every eid both match (it names only fields of theirs, with their values).
 * Rules are grouped by the fields they name, so only pairs that agree on their common fields are compared: a
 * policy of 10,000 rules on one source is checked in linear time, not 50 million comparisons.
 */
function checkTies(rules: readonly Compiled[], problems: string[]): void {
  const exact = new Set(rules.map((r) => projection(r, signatureOf(r))));
  const covered = (both: Fields, specificity: number) => {
    const union = signatureOf(both);
    // Every subset of the shared fields naming more than the tied rules: does a rule name exactly it?
    for (let sub = union; sub > 0; sub = (sub - 1) & union) {
      if (popcount(sub) > specificity && exact.has(projection(both, sub))) return true;
    }
    return false;
  };
  const ties: [Compiled, Compiled, Fields][] = [];
  const bySignature = groupBy(rules, (r) => signatureOf(r));
  const signatures = [...bySignature.keys()].sort((x, y) => x - y);
  outer: for (const sa of signatures) {
    for (const sb of signatures.filter((s) => s >= sa && popcount(s) === popcount(sa))) {
      // Rules of the two groups that agree on their common fields, found by those fields' values.
      const common = sa & sb;
      const byCommon = groupBy(bySignature.get(sa)!, (r) => projection(r, common));
      for (const b of bySignature.get(sb)!) {
        for (const a of byCommon.get(projection(b, common)) ?? []) {
          if (sa === sb && a.index >= b.index) continue;
          const both = shared(a, b);
          if (!covered(both, a.specificity)) ties.push(a.index < b.index ? [a, b, both] : [b, a, both]);
          if (ties.length > MAX_TIES) break outer;
        }
      }
    }
  }
  ties.sort(([a1, b1], [a2, b2]) => a1.index - a2.index || b1.index - b2.index);
  for (const [a, b, both] of ties.slice(0, MAX_TIES)) {
    problems.push(
      `permissions[${a.index}] and permissions[${b.index}] tie: both are the most specific rule for an eid with ` +
        `${describeRule(both)}; add a more specific rule for it, or remove one`,
    );
  }
  if (ties.length > MAX_TIES) problems.push(`more than ${MAX_TIES} ties: the others are not listed`);
}

/** The fields of the eids two agreeing rules both match: every field either names, with its value. */
function shared(a: Fields, b: Fields): Fields {
  const out: Fields = {};
  for (const k of FIELDS) {
    const v = a[k] ?? b[k];
    if (v !== undefined) (out as Record<string, unknown>)[k] = v;
  }
  return out;
}

/** How many bits are set. */
function popcount(bits: number): number {
  let n = 0;
  for (let b = bits; b; b &= b - 1) n++;
  return n;
}

/** The items by key, each list in the items' order. */
function groupBy<T, K>(items: readonly T[], key: (item: T) => K): Map<K, T[]> {
  const groups = new Map<K, T[]>();
  for (const item of items) {
    const k = key(item);
    const group = groups.get(k);
    if (group) group.push(item);
    else groups.set(k, [item]);
  }
  return groups;
}

type Rule = z.infer<typeof ruleSchema>;
type Partner = z.infer<typeof partnerSchema>;

/**
 * The rules and partners of a configuration that are well formed, each with its index (a checked configuration
 * has only those; a broken one, the others are its errors). `partners` is undefined when the configuration gives
 * no partner list. At most 10,000 rules, the cap.
 */
function wellFormed(config: unknown): { partners?: [number, Partner][]; permissions: [number, Rule][] } {
  const c = (config !== null && typeof config === 'object' ? config : {}) as {
    partners?: unknown;
    permissions?: unknown;
  };
  const each = <T>(list: unknown, schema: z.ZodType<T>): [number, T][] =>
    (Array.isArray(list) ? list.slice(0, 10_000) : []).flatMap((item, i): [number, T][] => {
      const r = schema.safeParse(item);
      return r.success ? [[i, r.data]] : [];
    });
  return {
    partners: Array.isArray(c.partners) ? each(c.partners, partnerSchema) : undefined,
    permissions: each(c.permissions, ruleSchema),
  };
}

/** Most specific first, then in the order written. */
const bySpecificity = (a: Compiled, b: Compiled) => b.specificity - a.specificity || a.index - b.index;

/**
 * Validates a policy configuration and compiles its rules, most specific first; throws
 * {@link ForwardingPolicyError} naming each bad rule or field.
 */
export function compilePolicy(config: unknown): { cfg: z.infer<typeof configSchema> } & CompiledRules {
  const parsed = configSchema.safeParse(config);
  const problems = parsed.success
    ? []
    : parsed.error.issues.map((i) => `${formatPath(i.path) || 'policy'}: ${i.message}`);
  // One round of errors: the checks across rules (unknown partners, ties) run on the rules and partners that are
  // well formed even when others are not, so fixing the first list never reveals a second.
  const { partners, permissions } = parsed.success ? wellFormed(parsed.data) : wellFormed(config);
  // Partner ids match case-insensitively, as Prebid Server matches bidder names: two partners that differ only
  // by case could not be told apart by a rule.
  const known = new Map<string, number>();
  partners?.forEach(([i, p]) => {
    const first = known.get(p.id.toLowerCase());
    if (first === undefined) known.set(p.id.toLowerCase(), i);
    else problems.push(`partners[${i}].id: "${p.id}" is partners[${first}].id up to case (ids are case-insensitive)`);
  });
  const rules: Compiled[] = permissions.map(([index, r]) => {
    const listed = r.partners === '*' ? [] : r.partners;
    if (partners && r.partners !== '*') {
      const unknown = listed.filter((p) => !known.has(p.toLowerCase()));
      const names = unknown.map((p) => `"${p}"`).join(', ');
      if (unknown.length) problems.push(`permissions[${index}].partners: unknown partner ${names}`);
    }
    const c: Compiled = {
      index,
      specificity: 0,
      all: r.partners === '*',
      partners: new Set(listed.map((p) => p.toLowerCase())),
      listed,
      mask: -1,
    };
    if (r.source !== undefined) c.source = r.source.toLowerCase();
    if (r.inserter !== undefined) c.inserter = r.inserter.toLowerCase();
    if (r.matcher !== undefined) c.matcher = r.matcher.toLowerCase();
    if (r.mm !== undefined) c.mm = r.mm;
    c.specificity = FIELDS.filter((k) => c[k] !== undefined).length;
    return c;
  });
  checkTies(rules, problems);
  if (!parsed.success || problems.length) throw new ForwardingPolicyError(problems);
  const cfg = parsed.data;
  const groups = groupBy(rules, (r) => r.source);
  const anySource = (groups.get(undefined) ?? []).sort(bySpecificity);
  const bySource = new Map<string, Compiled[]>();
  for (const [source, list] of groups) {
    if (source !== undefined) bySource.set(source, [...list, ...anySource].sort(bySpecificity));
  }
  return { cfg, rules, bySource, anySource: anySource.length ? anySource : undefined };
}
