// US privacy conformance: GPP strings, section ids and US Privacy strings with the decision the peers (Prebid.js,
// Prebid Server Java and Go) reach on them, in their own test suites or by their rules (fixtures/us-peer-cases.json:
// `deny` is true where either peer withholds eids). eidkit must withhold wherever a peer does; where it is stricter,
// the case is listed below with the reason, as docs/wire-format.md#us-state-privacy states it.
import { describe, expect, test } from 'vitest';
import { createConsentDecoder } from '../../../src/adserver/index.js';
import type { AdCallConsent } from '../../../src/adserver/index.js';
import { usDenial } from '../../../src/core/index.js';
import cases from './fixtures/us-peer-cases.json' with { type: 'json' };

interface PeerCase {
  n: number;
  peer: string;
  gppSid: number[];
  gpp: string | null;
  usPrivacy?: string;
  fields?: Record<string, unknown> | null;
  deny: boolean;
  checks: string;
}

/** Cases the peers allow and eidkit refuses, each with its documented reason. */
const STRICTER: Record<number, string> = {
  // gpp_sid names the EU TCF section: GDPR applies, and the call carries no TC string.
  199: 'tcf missing',
  // Florida and the newer states are read like the national section.
  206: 'gpp usfl SaleOptOut=1',
  // gpp_sid names the EU TCF section: GDPR applies, and the TC string gives the ad service no consent.
  228: 'tcf vendor 45 no consent',
  // 3 is no valid value: in a category that must not be processed at all, it refuses.
  235: 'gpp usnat SensitiveDataProcessing[5]=3',
  // gpp_sid names section 30, which eidkit cannot read (a newer state, maybe): fail closed.
  236: 'gpp unreadable',
};

const decoder = createConsentDecoder();
const refusalOf = (c: PeerCase) => {
  if (c.gpp === null) return c.fields ? usDenial('usnat', c.fields) || undefined : 'no section';
  const consent: AdCallConsent = { gpp: c.gpp, gppSid: c.gppSid, gdpr: 0 };
  if (c.usPrivacy !== undefined) consent.usPrivacy = c.usPrivacy;
  return decoder.refusal(decoder.decode(consent), 45)?.reason;
};

describe(`US privacy: ${cases.length} peer cases`, () => {
  test.each((cases as PeerCase[]).filter((c) => c.deny).map((c) => [c.n, c.peer, c.checks, c] as const))(
    'case %i (%s: %s): eids withheld',
    (_n, _peer, _checks, c) => {
      expect(refusalOf(c)).toBeTruthy();
    },
  );

  test('where every peer forwards, eidkit forwards too, but for the cases it is stricter on by design', () => {
    const stricter = (cases as PeerCase[]).filter((c) => !c.deny && refusalOf(c)).map((c) => `${c.n}: ${refusalOf(c)}`);
    expect(stricter).toEqual(Object.entries(STRICTER).map(([n, why]) => `${n}: ${why}`));
  });
});
