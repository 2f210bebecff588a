/**
 * The size caps applied to every ad call (docs/ad-server.md "Caps"). Anything over a cap is dropped with an issue;
 * the ad call itself always goes on: bad input never fails an ad call.
 */

import { MAX_ID_LENGTH } from '../../core/index.js';
import { OptionsError, positiveOption } from '../common/index.js';

/** Every cap the parser applies; pass a partial object to override some. */
export interface AdCallLimits {
  /** Longest `eids` GET parameter, in characters, before decoding. Longer: the parameter is ignored. */
  maxEidsParamLength: number;
  /** Largest POST body, in bytes. Larger: the body is not read (its fields and eids are lost, with an issue). */
  maxBodyBytes: number;
  /** Most EIDs kept per call; the rest are dropped. */
  maxEids: number;
  /** Most UIDs kept per EID; the rest are dropped. */
  maxUids: number;
  /** Longest EID `source`, `inserter` or `matcher`, or UID `id`, in characters. */
  maxIdLength: number;
  /** Longest `ext` of an EID or a UID, in characters of its JSON. Longer: that ext is dropped (a UID's, the UID). */
  maxExtLength: number;
  /** Most levels of objects and arrays in one `ext`, the ext itself being level 1. Deeper: dropped as above. */
  maxExtDepth: number;
  /** Longest publisher `uid` and `pid` cookie value, in characters. */
  maxUserIdLength: number;
  /** Longest free-text field (`tgt`/`target`, page id, consent strings), in characters. */
  maxTextLength: number;
  /** Most formats kept from a one-call (`/call`) body. */
  maxFormats: number;
  /** Most issues listed per call; the rest are counted in `issuesOmitted` and one last issue says how many. */
  maxIssues: number;
}

/** The defaults: generous for real traffic (the tag keeps GET URLs under 8,000 characters), tight for abuse. */
export const DEFAULT_LIMITS: Readonly<AdCallLimits> = Object.freeze({
  maxEidsParamLength: 16_384,
  maxBodyBytes: 262_144,
  maxEids: 64,
  maxUids: 16,
  // The longest id the tag takes from the page, too.
  maxIdLength: MAX_ID_LENGTH,
  maxExtLength: 4_096,
  maxExtDepth: 16,
  maxUserIdLength: 256,
  maxTextLength: 4_096,
  maxFormats: 32,
  maxIssues: 100,
});

/**
 * Fills the caps not given (absent or `undefined`) with the defaults; a cap that is not a whole number > 0, or a
 * name that is no cap, throws an {@link OptionsError} naming it (`limits.maxEids`).
 */
export function resolveLimits(limits?: Partial<AdCallLimits>): Readonly<AdCallLimits> {
  if (!limits) return DEFAULT_LIMITS;
  const out = { ...DEFAULT_LIMITS };
  for (const k of Object.keys(limits)) {
    if (!Object.hasOwn(DEFAULT_LIMITS, k))
      throw new OptionsError(`limits.${k}`, `is not a cap (known: ${Object.keys(DEFAULT_LIMITS).join(', ')})`);
    const v = limits[k as keyof AdCallLimits];
    if (v !== undefined) out[k as keyof AdCallLimits] = positiveOption(v, `limits.${k}`, true);
  }
  return out;
}
