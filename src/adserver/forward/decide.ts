/**
 * The forwarding rule for one eid and one partner, as pure functions (no cache, no clock, nothing kept): what
 * `ForwardingPolicy.explain` says and what `eidsFor` sends are this rule; policy.ts adds what makes it fast.
 *
 * In order, the first that removes the eid naming the reason: a DMP receives only its preferred provider's eids;
 * then the permission rule that decides the eid (the most specific one matching it, `ruleFor`) must list the
 * partner; then the consent refusal that applies to the partner (consent/decoder.ts `consentRefusal`) removes it,
 * unless its source is in `allowSources`. An eid no rule matches goes to every partner.
 */
import { providerForSource } from '../../core/index.js';
import type { Eid, Provider } from '../../core/index.js';
import type { ConsentRefusal } from '../consent/index.js';
import { describeRule } from './permissions.js';
import type { Compiled, CompiledRules } from './permissions.js';
import { preferredProviderOf } from './partners.js';
import type { DemandPartner } from './partners.js';

/** Why an eid was kept or removed for one partner. */
export interface ForwardingReason {
  /**
   * `no-rule`: kept, no permission rule matched (default); `rule`: kept or removed by `permissions[rule]`;
   * `dmp`: removed, a DMP receives only its preferred provider; `gdpr`, `usp`, `gpp`, `gpc`: removed by consent;
   * `allow-source`: kept although consent refused, because the source is in `allowSources`.
   */
  code: 'no-rule' | 'rule' | 'dmp' | 'gdpr' | 'usp' | 'gpp' | 'gpc' | 'allow-source';
  /** Index of the deciding rule in `permissions`, for `rule` (and for consent codes when a rule had allowed it). */
  rule?: number;
  /** One sentence a person can read. */
  message: string;
}

/** What decides one eid for one partner. */
export interface EidForwardingInput {
  eid: Eid;
  /** The partner's id (rules list partners case-insensitively). */
  partnerId: string;
  /** For a DMP, the one provider whose eids it receives (`preferredOf`); undefined for a DSP. */
  preferred?: Provider;
  /** The permission rule that decides the eid (`ruleFor`); undefined when no rule matches it. */
  rule?: Compiled;
  /** Whether the eid's source is in `allowSources`: sent whatever the consent signals. */
  allowSource: boolean;
  /** The consent refusal that applies to the partner; undefined when consent allows it or is not enforced. */
  refusal?: ConsentRefusal;
}

/** The decision without its sentence: kept or not, the reason's code, the rule that matched (if any). */
export interface EidVerdict {
  kept: boolean;
  code: ForwardingReason['code'];
  rule?: Compiled;
}

/** The provider a partner is limited to: a DMP's preferred one (throws when it has none); none for a DSP. */
export function preferredOf(partner: DemandPartner): Provider | undefined {
  return (partner.kind ?? 'dsp') === 'dmp' ? preferredProviderOf(partner) : undefined;
}

/** The first of `rules` (most specific first) that `eid` matches: every field a rule names, domains in any case. */
export function matchRule(eid: Eid, rules: readonly Compiled[]): Compiled | undefined {
  for (const r of rules) {
    // Domains usually come lowercase already: compare as they are first, lowercase only when that fails.
    if (
      (r.inserter === undefined || r.inserter === eid.inserter || r.inserter === eid.inserter?.toLowerCase()) &&
      (r.matcher === undefined || r.matcher === eid.matcher || r.matcher === eid.matcher?.toLowerCase()) &&
      (r.mm === undefined || r.mm === eid.mm)
    )
      return r;
  }
  return undefined;
}

/** The rules an eid of `source` may match, most specific first: its source's, else those naming no source. */
export function candidatesFor(source: string, rules: CompiledRules): Compiled[] | undefined {
  return rules.bySource.get(source.toLowerCase()) ?? rules.anySource;
}

/** The permission rule that decides `eid`: the most specific one matching it; undefined when none does. */
export function ruleFor(eid: Eid, rules: CompiledRules): Compiled | undefined {
  const candidates = candidatesFor(eid.source, rules);
  return candidates && matchRule(eid, candidates);
}

/** The rule, without the sentence (what `eidsFor` needs). */
export function eidVerdict(input: EidForwardingInput): EidVerdict {
  const { eid, rule, preferred, refusal } = input;
  if (preferred !== undefined && providerForSource(eid.source).id !== preferred.id) return { kept: false, code: 'dmp' };
  if (rule && !rule.all && !rule.partners.has(input.partnerId.toLowerCase()))
    return { kept: false, code: 'rule', rule };
  if (refusal)
    return input.allowSource ? { kept: true, code: 'allow-source', rule } : { kept: false, code: refusal.code, rule };
  return { kept: true, code: rule ? 'rule' : 'no-rule', rule };
}

/** The sentence of a verdict. */
export function reasonOf(v: EidVerdict, input: EidForwardingInput): ForwardingReason {
  const { eid, refusal } = input;
  const r = v.rule;
  const rule = r ? `permissions[${r.index}] (${describeRule(r)})` : '';
  const allowed = r && (r.all ? 'every partner' : r.listed.length ? r.listed.join(', ') : 'no partner');
  const message =
    v.code === 'no-rule'
      ? `no permission rule matches ${eid.source}: every partner receives it (default)`
      : v.code === 'rule'
        ? `${rule} allows ${v.kept ? input.partnerId : allowed === 'no partner' ? allowed : `only ${allowed}`}`
        : v.code === 'dmp'
          ? `a DMP receives only its preferred provider's eids (${input.preferred?.name})`
          : v.code === 'allow-source'
            ? `${eid.source} is in allowSources: sent although ${refusal?.message}`
            : (refusal?.message ?? v.code);
  return r ? { code: v.code, rule: r.index, message } : { code: v.code, message };
}

/**
 * Whether the partner receives the eid, and why.
 * @example decideEidForwarding({ eid, partnerId: 'dsp-a', rule: ruleFor(eid, rules), allowSource: false })
 */
export function decideEidForwarding(input: EidForwardingInput): { kept: boolean; reason: ForwardingReason } {
  const v = eidVerdict(input);
  return { kept: v.kept, reason: reasonOf(v, input) };
}
