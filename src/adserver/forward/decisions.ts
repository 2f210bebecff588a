/**
 * Every forwarding decision explained (docs/wire-format.md#explaining-decisions): the short reason each eid was sent
 * or withheld for a partner, and an optional decision log, one JSON line per partner per call, sampled at a rate the
 * operator sets. The report counts the same reasons per source and partner (`report.addForwarding`).
 */
import { given, OptionsError } from '../common/index.js';
import type { AdCall } from '../parse/index.js';
import type { EidDecision, ForwardingExplanation, PartnerForwarding } from './policy.js';

/**
 * What decided one eid for one partner, short and stable enough to count by: `sent` for an eid the partner
 * receives; else `permissions[<i>]` (a permission rule), `dmp` (a DMP's preferred provider only), or the consent
 * refusal's reason (`gpp usnat MspaServiceProviderMode=1`, `usp us_privacy[2]=Y`, `gpc gpc=1`,
 * `tcf vendor 131 no consent`, …).
 */
export function decisionReason(decision: EidDecision, partner: PartnerForwarding, kept: boolean): string {
  if (kept) return 'sent';
  const r = decision.reason;
  if (r.code === 'rule') return `permissions[${String(r.rule)}]`;
  if (r.code === 'dmp') return 'dmp';
  return partner.consent?.reason ?? r.code;
}

/** One line of the decision log, as JSON. */
export interface DecisionLogLine {
  /** When the call was decided (ISO 8601, UTC). */
  time: string;
  /** The call's network id; null without one. */
  networkId: number | null;
  /** The partner id. */
  partner: string;
  /** The consent refusal that applies to this partner, if any: its code and reason. */
  consent?: { code: string; reason: string };
  /** The sources the partner receives, in the call's order. */
  sent: string[];
  /** The sources withheld from it, each with its decision code and reason. */
  withheld: { source: string; code: string; reason: string }[];
}

/** Options of {@link createDecisionLog}. */
export interface DecisionLogOptions {
  /** Where each line goes (one JSON text, no newline): a function, or anything with `write(line)`. */
  write: ((line: string) => void) | { write(line: string): unknown };
  /** Share of calls logged, from 0 to 1 (all their partners together). Default 0.01. */
  sampleRate?: number;
  /** The random source of the sampling (default `Math.random`): tests make it fixed. */
  random?: () => number;
}

/** A decision log: `record` writes a sampled call's lines. */
export interface DecisionLog {
  /** Logs the call's decisions when the sample picks it; returns the lines written (none when not sampled). */
  record(call: AdCall, explanation: ForwardingExplanation, at?: Date): DecisionLogLine[];
}

/** The lines of one call's decisions, one per partner (unsampled: the log samples). */
export function decisionLines(call: AdCall, explanation: ForwardingExplanation, at?: Date): DecisionLogLine[] {
  const time = (at ?? new Date()).toISOString();
  return explanation.partners.map((p) => {
    const line: DecisionLogLine = {
      time,
      networkId: call.networkId ?? null,
      partner: p.partner,
      sent: p.kept.map((d) => d.eid.source),
      withheld: p.removed.map((d) => ({
        source: d.eid.source,
        code: d.reason.code,
        reason: decisionReason(d, p, false),
      })),
    };
    if (p.consent) line.consent = { code: p.consent.code, reason: p.consent.reason };
    return line;
  });
}

/**
 * A decision log: each sampled call's decisions, one JSON line per partner.
 * @example
 * const log = createDecisionLog({ write: (line) => process.stdout.write(line + '\n'), sampleRate: 0.05 });
 * log.record(call, policy.explain(call, partners));
 */
export function createDecisionLog(options: DecisionLogOptions): DecisionLog {
  const rate = options.sampleRate ?? 0.01;
  if (typeof rate !== 'number' || !(rate >= 0 && rate <= 1)) {
    throw new OptionsError('sampleRate', `must be a number from 0 to 1 (got ${given(rate)})`);
  }
  const w = options.write;
  const write = typeof w === 'function' ? w : typeof w?.write === 'function' ? (l: string) => w.write(l) : undefined;
  if (!write) throw new OptionsError('write', `must be a function or have a write method (got ${given(w)})`);
  const random = options.random ?? Math.random;
  return {
    record(call, explanation, at) {
      if (rate === 0 || (rate < 1 && random() >= rate)) return [];
      const lines = decisionLines(call, explanation, at);
      for (const line of lines) write(JSON.stringify(line));
      return lines;
    },
  };
}
