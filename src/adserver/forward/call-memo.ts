/**
 * Speed for the forwarding policy (policy.ts): what depends on the call only (its decoded consent signals, each
 * eid's code) is worked out once and kept for the next partner of the same call. Bid requests go out in a loop over
 * partners, and the policy must add little to it (docs/project.md, "Measured sizes and ratios"). The call is taken
 * as unchanged while its requests are built.
 */
import type { Eid } from '../../core/index.js';
import type { ConsentDecoder, DecodedConsent } from '../consent/index.js';
import type { AdCall, AdCallConsent } from '../parse/index.js';
import type { EidCodes } from './eid-codes.js';

/** A call prepared for its partners. */
export interface Prepared {
  call: AdCall;
  consent: AdCallConsent;
  eids: readonly Eid[];
  length: number;
  extra: readonly Eid[] | undefined;
  extraLength: number;
  /** The call's eids, then the extra ones. */
  all: readonly Eid[];
  /** Per eid: its deciding rule's partner bits (ALL without a rule), plus EXEMPT when consent spares it. */
  codes: number[];
  /** The bits every eid has: a partner holding one of them, without a consent refusal, receives every eid. */
  common: number;
  /** The call's signals decoded; undefined when consent is not enforced. */
  decoded: DecodedConsent | undefined;
  /** The vendor lists' generation the decoding was made for. */
  gen: number;
}

/** The last call prepared, and the last consent signals decoded. */
export class CallMemo {
  private last: Prepared | undefined;
  /**
   * The last call's consent signals and their decoding: a user's calls repeat them, and each call is a new object.
   * Decoded anew when the vendor lists change (`gen`), so the partners' refusals kept in their slots are redone.
   */
  private lastConsent: (AdCallConsent & { decoded: DecodedConsent; gen: number }) | undefined;

  constructor(
    private readonly codes: EidCodes,
    private readonly decoder: ConsentDecoder,
    private readonly enforce: boolean,
  ) {}

  /** The call prepared; the last one when nothing it was made from changed. Small, so that it is inlined. */
  prepare(call: AdCall, extra: readonly Eid[] | undefined): Prepared {
    const l = this.last;
    if (
      l?.call === call &&
      l.consent === call.consent &&
      l.eids === call.eids &&
      l.length === call.eids.length &&
      l.extra === extra &&
      l.extraLength === (extra?.length ?? 0) &&
      l.gen === this.decoder.generation()
    )
      return l;
    return (this.last = this.prepareCall(call, extra));
  }

  private prepareCall(call: AdCall, extra: readonly Eid[] | undefined): Prepared {
    const all = extra?.length ? [...call.eids, ...extra] : call.eids;
    const { codes, common } = this.codes.codesOf(all);
    const decoded = this.enforce ? this.decode(call.consent) : undefined;
    const { consent, eids } = call;
    const extraLength = extra?.length ?? 0;
    const gen = this.decoder.generation();
    return { call, consent, eids, length: eids.length, extra, extraLength, all, codes, common, decoded, gen };
  }

  private decode(c: AdCallConsent): DecodedConsent {
    const m = this.lastConsent;
    const gen = this.decoder.generation();
    if (
      m?.gen === gen &&
      m.gdpr === c.gdpr &&
      m.gdprConsent === c.gdprConsent &&
      m.usPrivacy === c.usPrivacy &&
      m.gpp === c.gpp &&
      m.gpc === c.gpc
    ) {
      const a = m.gppSid;
      const b = c.gppSid;
      if (a === b) return m.decoded;
      if (a && a.length === b?.length && a.every((sid, i) => sid === b[i])) return m.decoded;
    }
    const decoded = this.decoder.decode(c);
    const { gdpr, gdprConsent, usPrivacy, gpp, gppSid, gpc } = c;
    // A copy of gpp_sid: the caller's array may change after this call.
    this.lastConsent = { gdpr, gdprConsent, usPrivacy, gpp, gppSid: gppSid && [...gppSid], gpc, decoded, gen };
    return decoded;
  }
}
