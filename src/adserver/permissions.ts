/**
 * The permission rules of a forwarding policy (forwarding.ts): the policy's schema (zod), each rule compiled for
 * matching, and the check that no two rules tie for the most specific match of one eid.
 */
import { z } from 'zod';
import { formatPath } from '../core/path.js';

/** One permission rule: the eids it matches go only to `partners` (`'*'`: every partner; `[]`: none). */
export interface PermissionRule {
  /** The eid source (case-insensitive), for example `id5-sync.com`. */
  source: string;
  /** Matches only eids with this `inserter` (case-insensitive). */
  inserter?: string;
  /** Matches only eids with this `matcher` (case-insensitive). */
  matcher?: string;
  /** Matches only eids with this match method (`mm`). */
  mm?: number;
  /** Partner ids that may receive the matched eids, or `'*'` for every partner. */
  partners: readonly string[] | '*';
}

/** A policy configuration that cannot be used: the message names the rule or field (`permissions[2].partners: …`). */
export class ForwardingPolicyError extends TypeError {
  override readonly name = 'ForwardingPolicyError';
  /** Every problem found, each as `path: message`. */
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`invalid forwarding policy: ${problems.join('; ')}`);
    this.problems = problems;
  }
}

const domain = z.string().trim().min(1, 'must be a non-empty string');
const partnerId = z.string().min(1, 'must be a non-empty partner id').refine((s) => s !== '*', "'*' stands alone: partners: '*'");
const ruleSchema = z.strictObject({
  source: domain,
  inserter: domain.optional(),
  matcher: domain.optional(),
  mm: z.number().int('must be an integer').min(0).optional(),
  partners: z.union([z.literal('*'), z.array(partnerId)], { error: "must be '*' or a list of partner ids" }),
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
    })
    .optional(),
  partners: z.array(partnerSchema).optional(),
  cacheSize: z.number().int().positive().optional(),
});

/** A rule ready for matching: lowercased, with its specificity and its partner set. */
export interface Compiled {
  index: number;
  source: string;
  inserter?: string;
  matcher?: string;
  mm?: number;
  specificity: number;
  all: boolean;
  partners: ReadonlySet<string>;
  /** The partners as bits (see `bitOf` in createForwardingPolicy); every bit but EXEMPT for '*'. */
  mask: number;
}

/** The optional fields a rule may match on, besides the source. */
const FIELDS = ['inserter', 'matcher', 'mm'] as const;
/** The optional fields of a rule, or of the eids two rules share. */
type Fields = Pick<Compiled, (typeof FIELDS)[number]>;


/** A rule (or the eids two rules share) in words: `source uidapi.com, inserter pub.example, mm 3`. */
export function describeRule(source: string, f: Fields): string {
  return [`source ${source}`, ...FIELDS.filter((k) => f[k] !== undefined).map((k) => `${k} ${f[k]}`)].join(', ');
}

/** Refuses two equally specific rules that could both decide one eid, unless a more specific rule covers them. */
function checkTies(source: string, rules: readonly Compiled[], problems: string[]): void {
  for (let i = 0; i < rules.length; i++) {
    for (let j = i + 1; j < rules.length; j++) {
      const a = rules[i];
      const b = rules[j];
      if (a.specificity !== b.specificity || FIELDS.some((k) => a[k] !== undefined && b[k] !== undefined && a[k] !== b[k])) continue;
      const both: Fields = {};
      for (const k of FIELDS) if (a[k] !== undefined || b[k] !== undefined) (both as Record<string, unknown>)[k] = a[k] ?? b[k];
      const covered = rules.some((r) => r.specificity > a.specificity && FIELDS.every((k) => r[k] === undefined || r[k] === both[k]));
      if (covered) continue;
      problems.push(
        `permissions[${a.index}] and permissions[${b.index}] tie: both are the most specific rule for an eid with ${describeRule(source, both)}; ` +
          'add a more specific rule for it, or remove one',
      );
    }
  }
}

/**
 * Validates a policy configuration and compiles its rules by lowercased source, most specific first; throws
 * {@link ForwardingPolicyError} naming each bad rule or field.
 */
export function compilePolicy(config: unknown): { cfg: z.infer<typeof configSchema>; bySource: Map<string, Compiled[]> } {
  const parsed = configSchema.safeParse(config);
  if (!parsed.success) throw new ForwardingPolicyError(parsed.error.issues.map((i) => `${formatPath(i.path) || 'policy'}: ${i.message}`));
  const cfg = parsed.data;
  const problems: string[] = [];
  const known = cfg.partners ? new Set(cfg.partners.map((p) => p.id)) : undefined;
  const bySource = new Map<string, Compiled[]>();
  (cfg.permissions ?? []).forEach((r, index) => {
    if (known && r.partners !== '*') {
      const unknown = r.partners.filter((p) => !known.has(p));
      if (unknown.length) problems.push(`permissions[${index}].partners: unknown partner ${unknown.map((p) => `"${p}"`).join(', ')}`);
    }
    const c: Compiled = {
      index,
      source: r.source,
      specificity: 0,
      all: r.partners === '*',
      partners: new Set(r.partners === '*' ? [] : r.partners),
      mask: -1,
    };
    if (r.inserter !== undefined) c.inserter = r.inserter.toLowerCase();
    if (r.matcher !== undefined) c.matcher = r.matcher.toLowerCase();
    if (r.mm !== undefined) c.mm = r.mm;
    c.specificity = FIELDS.filter((k) => c[k] !== undefined).length;
    const key = r.source.toLowerCase();
    bySource.set(key, [...(bySource.get(key) ?? []), c]);
  });
  for (const [source, rules] of bySource) {
    checkTies(source, rules, problems);
    // Most specific first, so the first match decides.
    rules.sort((a, b) => b.specificity - a.specificity || a.index - b.index);
  }
  if (problems.length) throw new ForwardingPolicyError(problems);
  return { cfg, bySource };

}
