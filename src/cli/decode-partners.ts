/**
 * `eidkit decode --partners partners.json`: what each partner would receive from a decoded ad call,
 * and why, under the forwarding policy in the file.
 */
import { ConfigurationError } from '../core/config-error.js';
import { readFileSync } from 'node:fs';
import type { Eid } from '../core/index.js';
import { fileErrorText } from '../core/file-error.js';
import { EXIT } from './exit-codes.js';
import { fieldText } from './format.js';
import { createForwardingPolicy, ForwardingPolicyError } from '../adserver/index.js';
import type {
  AdCall,
  DemandPartner,
  ForwardingPolicy,
  ForwardingPolicyConfig,
  ForwardingReason,
} from '../adserver/index.js';

/** One partner's share in `eidkit decode --partners --json` output. */
export interface DecodedForwarding {
  /** The partner id. */
  partner: string;
  /** Where its bid request puts the eids. */
  openrtb: '2.5' | '2.6' | 'both';
  /** Why consent keeps eids from it, if it does. */
  consent?: string;
  /** The eids it would receive: position in the decoded eids, source, and why. */
  kept: { index: number; source: string; reason: ForwardingReason }[];
  /** The eids it would not receive, and why. */
  removed: { index: number; source: string; reason: ForwardingReason }[];
}

/** A partners file that cannot be used; the CLI exits with the validation code. */
class PartnersFileError extends ConfigurationError {
  readonly exitCode = EXIT.VALIDATION;
  override name = 'PartnersFileError';
}

/**
 * Reads a partners file: a JSON array of partners (`{ id, gvlVendorId?, openrtb?, kind?, preferredProvider? }`),
 * or a forwarding policy (`{ partners: [...], permissions?: [...], consent?: {...} }`).
 */
export function readPartnersFile(path: string): { policy: ForwardingPolicy; partners: DemandPartner[] } {
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new PartnersFileError(
      `${path}: ${e instanceof SyntaxError ? `not valid JSON (${e.message})` : `could not be read (${fileErrorText(e)})`}`,
    );
  }
  const config = (Array.isArray(data) ? { partners: data } : data) as ForwardingPolicyConfig;
  if (!config || typeof config !== 'object' || !Array.isArray(config.partners) || config.partners.length === 0) {
    throw new PartnersFileError(
      `${path}: needs a non-empty list of partners (an array, or { "partners": [...], "permissions": [...] })`,
    );
  }
  try {
    return { policy: createForwardingPolicy(config), partners: [...(config.partners as readonly DemandPartner[])] };
  } catch (e) {
    if (e instanceof ForwardingPolicyError) throw new PartnersFileError(`${path}: ${e.message}`);
    throw e;
  }
}

/** Each partner's kept and removed eids for the decoded call. */
export function forwardingOf(
  call: AdCall,
  policy: ForwardingPolicy,
  partners: readonly DemandPartner[],
): DecodedForwarding[] {
  const brief = (d: { index: number; eid: Eid; reason: ForwardingReason }) => ({
    index: d.index,
    source: d.eid.source,
    reason: d.reason,
  });
  return policy.explain(call, partners).partners.map((p) => ({
    partner: p.partner,
    openrtb: p.openrtb,
    ...(p.consent ? { consent: p.consent.message } : {}),
    kept: p.kept.map(brief),
    removed: p.removed.map(brief),
  }));
}

/**
 * The human-readable form: per partner, `+` for each eid it receives, `-` for each it does not, with the reason;
 * every field is terminal-safe ({@link fieldText}).
 */
export function formatForwarding(rows: readonly DecodedForwarding[]): string {
  const lines = [`forwarding to ${rows.length} partner${rows.length === 1 ? '' : 's'}`];
  for (const p of rows) {
    const total = p.kept.length + p.removed.length;
    const consent = p.consent ? `; consent: ${fieldText(p.consent)}` : '';
    lines.push(
      `  ${fieldText(p.partner)}  (OpenRTB ${p.openrtb}): receives ${p.kept.length} of ${total} eid${total === 1 ? '' : 's'}${consent}`,
    );
    const all = [...p.kept.map((d) => ({ ...d, sign: '+' })), ...p.removed.map((d) => ({ ...d, sign: '-' }))].sort(
      (a, b) => a.index - b.index,
    );
    const sources = all.map((d) => fieldText(d.source));
    const width = Math.max(6, ...sources.map((s) => s.length));
    all.forEach((d, n) => lines.push(`    ${d.sign} ${sources[n].padEnd(width)}  ${fieldText(d.reason.message)}`));
  }
  return lines.join('\n') + '\n';
}
