/**
 * The one base of every configuration error eidkit throws where something is set up (a networks file, a deals file,
 * the deal client's connection, a forwarding policy, CORS, DMPs, the ad server's options): a `TypeError` carrying
 * every problem found as an {@link Issue} naming the field. Each entry point keeps its own subclass, so
 * `instanceof NetworksConfigError` and the like still tell them apart, and `instanceof ConfigurationError` catches
 * them all.
 */
import type { Issue } from './eid.js';

/** A configuration that cannot be used; `issues` names each field at fault (`permissions[2].partners`). */
export class ConfigurationError extends TypeError {
  override name = 'ConfigurationError';
  /** Every problem found, each with the path of its field (`''` for the whole configuration). */
  readonly issues: readonly Issue[];
  constructor(message: string, issues: readonly Issue[] = [], options?: { cause?: unknown }) {
    super(message, options);
    this.issues = issues;
  }
}

/**
 * The issue of a `path: message` problem line (`dmps[1].source ("x"): …` keeps what follows the path as the message);
 * the whole line is the message when it starts with no path.
 */
export function issueOfProblem(problem: string): Issue {
  const m = /^([\w$.[\]-]+)(?:: | (?=\())([\s\S]*)$/.exec(problem);
  return m ? { path: m[1], message: m[2] } : { path: '', message: problem };
}
