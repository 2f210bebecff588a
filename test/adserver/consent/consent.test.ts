// Consent enforced on the server, with real consent strings: TC strings encoded by @iabtcf/core (the demo's
// shared encoder), GPP strings by @iabgpp/cmpapi.
import { describe, expect, test } from 'vitest';
import { GppModel } from '@iabgpp/cmpapi';
import { GVL, PurposeRestriction, RestrictionType, TCModel, TCString } from '@iabtcf/core';
import type { EncodingOptions } from '@iabtcf/core';
import {
  buildBidRequest,
  createConsentDecoder,
  createForwardingPolicy,
  explainForwarding,
  parseAdCall,
} from '../../../src/adserver/index.js';
import type { AdCall, AdCallConsent, DemandPartner } from '../../../src/adserver/index.js';
// @ts-expect-error: plain JS helper shared with the demo CMP
import { encodeTcString } from '../../support/tcf/tc-string.mjs';
// @ts-expect-error: plain JS, the demo CMP's vendor list
import { vendorList } from '../../support/tcf/gvl.mjs';
import { ID5, UID2, callWith } from '../fixtures.js';

/** The segments of a TCF v2.3 string: the core, the disclosed vendors (the whole list), the publisher's. */
const WITH_DISCLOSED = { segments: ['core', 'vendorsDisclosed', 'publisherTC'] } as EncodingOptions;
const tc: (purposes: number[], vendors: number[], vendorLI?: number[], purposeLI?: number[]) => string = encodeTcString;
const PUBCID = { source: 'pubcid.org', uids: [{ id: 'first-party-1', atype: 1 }] };
const EIDS = [ID5, UID2, PUBCID];
const call = (consent: AdCallConsent): AdCall => ({ ...callWith({ eids: EIDS }), consent });
const DSP: DemandPartner & { openrtb?: '2.6' } = { id: 'dsp', gvlVendorId: 131 };
const policy = createForwardingPolicy({ consent: { allowSources: ['PUBCID.org'] } });
const sent = (c: AdCall, partner: DemandPartner & { openrtb?: '2.6' } = DSP, p = policy) =>
  buildBidRequest(c, partner, { policy: p }).user?.eids ?? [];

/** A GPP string with the given fields set in each section, encoded by @iabgpp/cmpapi. */
function gpp(fields: Record<string, Record<string, unknown>>): string {
  const m = new GppModel();
  for (const [section, values] of Object.entries(fields))
    for (const [k, v] of Object.entries(values)) m.setFieldValue(section, k, v);
  return m.encode();
}

describe('GDPR (TCF v2 string decoded with @iabtcf/core)', () => {
  test('consent for the vendor and a purpose: every eid goes', () => {
    expect(sent(call({ gdpr: 1, gdprConsent: tc([1, 2, 3, 4], [131]) }))).toEqual(EIDS);
  });

  test('consent refused (no purpose): only allowSources go, and explain names the reason', () => {
    const c = call({ gdpr: 1, gdprConsent: tc([], [131]) });
    expect(sent(c)).toEqual([PUBCID]);
    const p = explainForwarding(c, [DSP], policy).partners[0];
    const why =
      'GDPR applies: vendor 131 has no legal basis for any of purposes 2, 3, 4, 5, 6, 7, 8, 9, 10 in the TC string';
    expect(p.removed.map((d) => d.reason)).toEqual([
      { code: 'gdpr', message: why },
      { code: 'gdpr', message: why },
    ]);
    expect(p.kept[0].reason.code).toBe('allow-source');
  });

  test('vendor missing from the TC string: that partner gets none, another with consent gets all', () => {
    const c = call({ gdpr: 1, gdprConsent: tc([1, 2, 4], [45]) });
    expect(sent(c)).toEqual([PUBCID]);
    expect(sent(c, { id: 'equativ', gvlVendorId: 45 })).toEqual(EIDS);
    expect(explainForwarding(c, [DSP], policy).partners[0].consent?.message).toBe(
      'GDPR applies: vendor 131 has no consent in the TC string',
    );
  });

  test('legitimate interest only is a legal basis by default, and not when the policy requires consent', () => {
    const c = call({ gdpr: 1, gdprConsent: tc([], [], [131], [2, 7]) });
    expect(sent(c)).toEqual(EIDS);
    const strict = createForwardingPolicy({ consent: { legitimateInterest: false } });
    expect(sent(c, DSP, strict)).toEqual([]);
    expect(explainForwarding(c, [DSP], strict).partners[0].consent?.message).toBe(
      'GDPR applies: vendor 131 has legitimate interest only, and the policy requires consent in the TC string',
    );
  });

  test("each basis pairs the vendor's with the purpose's: vendor consent with only purpose legitimate interest is none", () => {
    expect(sent(call({ gdpr: 1, gdprConsent: tc([], [131], [], [2, 7]) }))).toEqual([PUBCID]);
    expect(sent(call({ gdpr: 1, gdprConsent: tc([1], [], [131], [2]) }))).toEqual(EIDS);
  });

  test("the publisher's restrictions hold: a purpose not allowed to the vendor, or allowed on the other basis only, gives none", () => {
    const restricted = (type: RestrictionType, purposes: number[], consents = [1, 2, 3, 4]) => {
      const m = new TCModel(new GVL(vendorList));
      m.cmpId = 10;
      m.cmpVersion = 1;
      m.isServiceSpecific = true;
      m.purposeConsents.set(consents);
      m.vendorConsents.set([131]);
      for (const p of purposes) m.publisherRestrictions.add(131, new PurposeRestriction(p, type));
      return TCString.encode(m, WITH_DISCLOSED);
    };
    // Purpose 2 is still allowed.
    expect(sent(call({ gdpr: 1, gdprConsent: restricted(RestrictionType.NOT_ALLOWED, [3, 4]) }))).toEqual(EIDS);
    // Purpose 4 is allowed, but not purpose 2, which every eid needs (requiredPurposes).
    const no2 = call({ gdpr: 1, gdprConsent: restricted(RestrictionType.NOT_ALLOWED, [2, 3]) });
    expect(sent(no2)).toEqual([PUBCID]);
    expect(explainForwarding(no2, [DSP], policy).partners[0].consent).toEqual({
      code: 'gdpr',
      message:
        'GDPR applies: vendor 131 has no legal basis for purpose 2 in the TC string, within the publisher restrictions',
      reason: 'tcf vendor 131 publisher restriction on purpose 2',
    });
    const c = call({ gdpr: 1, gdprConsent: restricted(RestrictionType.NOT_ALLOWED, [2, 3, 4]) });
    expect(sent(c)).toEqual([PUBCID]);
    expect(explainForwarding(c, [DSP], policy).partners[0].consent?.message).toMatch(
      /vendor 131 has no legal basis .* within the publisher restrictions/,
    );
    // Purpose 2 is flexible for vendor 131 in the demo vendor list: restricted to legitimate interest, its consent
    // no longer counts, and the vendor has no legitimate interest.
    expect(sent(call({ gdpr: 1, gdprConsent: restricted(RestrictionType.REQUIRE_LI, [2], [1, 2]) }))).toEqual([PUBCID]);
    expect(sent(call({ gdpr: 1, gdprConsent: restricted(RestrictionType.REQUIRE_CONSENT, [2], [1, 2]) }))).toEqual(
      EIDS,
    );
  });

  test('the purposes that count are configurable', () => {
    const c = call({ gdpr: 1, gdprConsent: tc([1, 2], [131]) });
    expect(sent(c, DSP, createForwardingPolicy({ consent: { purposes: [4] } }))).toEqual([]);
    expect(sent(c, DSP, createForwardingPolicy({ consent: { purposes: [2] } }))).toEqual(EIDS);
  });

  test('GDPR applies with no TC string, an unreadable one, or a partner without gvlVendorId: fail closed', () => {
    expect(sent(call({ gdpr: 1 }))).toEqual([PUBCID]);
    expect(sent(call({ gdpr: 1, gdprConsent: 'not-a-tc-string' }))).toEqual([PUBCID]);
    const c = call({ gdpr: 1, gdprConsent: tc([1, 2], [131]) });
    expect(sent(c, { id: 'no-gvl' })).toEqual([PUBCID]);
    expect(explainForwarding(c, [{ id: 'no-gvl' }], policy).partners[0].consent?.message).toMatch(/has no gvlVendorId/);
  });

  test('gdpr=0 skips TCF; an absent gdpr applies GDPR only when a TC string is there (configurable)', () => {
    expect(sent(call({ gdpr: 0, gdprConsent: tc([], []) }))).toEqual(EIDS);
    expect(sent(call({ gdprConsent: tc([], []) }))).toEqual([PUBCID]);
    expect(sent(call({}))).toEqual(EIDS);
    expect(sent(call({}), DSP, createForwardingPolicy({ consent: { gdprDefault: 'applies' } }))).toEqual([]);
  });

  test("a TC string carried only in GPP's tcfeuv2 section is used where that section applies", () => {
    const m = new GppModel();
    m.decodeSection('tcfeuv2', tc([1, 2], [131]));
    expect(sent(call({ gdpr: 1, gpp: m.encode(), gppSid: [2] }))).toEqual(EIDS);
    expect(sent(call({ gdpr: 1, gpp: m.encode(), gppSid: [7] }))).toEqual([PUBCID]);
    m.decodeSection('tcfeuv2', tc([1, 2], [45]));
    expect(sent(call({ gdpr: 1, gpp: m.encode(), gppSid: [2] }))).toEqual([PUBCID]);
  });
});

describe('US opt-outs', () => {
  test("US Privacy 'Y' (opt-out of sale) removes eids, 'N' does not", () => {
    expect(sent(call({ usPrivacy: '1YYN' }))).toEqual([PUBCID]);
    expect(sent(call({ usPrivacy: '1YNN' }))).toEqual(EIDS);
    expect(explainForwarding(call({ usPrivacy: '1YYN' }), [DSP], policy).partners[0].removed[0].reason.code).toBe(
      'usp',
    );
  });

  test.each([
    ['usnat', 'SaleOptOut', 7],
    ['usnat', 'SharingOptOut', 7],
    ['usnat', 'TargetedAdvertisingOptOut', 7],
    ['usca', 'SaleOptOut', 8],
    ['usca', 'SharingOptOut', 8],
    ['usva', 'TargetedAdvertisingOptOut', 9],
    ['usco', 'SaleOptOut', 10],
  ])('GPP %s %s = 1 removes eids', (section, field, sid) => {
    const c = call({ gpp: gpp({ [section]: { [field]: 1 } }), gppSid: [sid] });
    expect(sent(c)).toEqual([PUBCID]);
    expect(explainForwarding(c, [DSP], policy).partners[0].removed[0].reason).toEqual({
      code: 'gpp',
      message: `GPP section ${section} does not allow sharing ids with third parties (${field}=1)`,
    });
    expect(explainForwarding(c, [DSP], policy).partners[0].consent?.reason).toBe(`gpp ${section} ${field}=1`);
  });

  test('GPP opt-outs count only in the applicable sections (gpp_sid); 2 (did not opt out) keeps eids', () => {
    // Opted in (2) with every notice given (1): sharing allowed.
    const given = { SharingNotice: 1, SaleOptOutNotice: 1, SharingOptOutNotice: 1, TargetedAdvertisingOptOutNotice: 1 };
    const s = gpp({ usca: { SaleOptOut: 1 }, usnat: { ...given, SaleOptOut: 2, SharingOptOut: 2 } });
    expect(sent(call({ gpp: s, gppSid: [7] }))).toEqual(EIDS);
    expect(sent(call({ gpp: s, gppSid: [8] }))).toEqual([PUBCID]);
    expect(sent(call({ gpp: s }))).toEqual([PUBCID]);
    expect(sent(call({ gpp: gpp({ uspv1: { OptOutSale: 'Y' } }), gppSid: [6] }))).toEqual([PUBCID]);
  });

  test('an unreadable GPP string fails closed when a US section applies, and is ignored otherwise', () => {
    expect(sent(call({ gpp: 'DBABzYA~garbage', gppSid: [7] }))).toEqual([PUBCID]);
    expect(sent(call({ gpp: 'DBABzYA~garbage', gppSid: [5], gdpr: 0 }))).toEqual(EIDS);
  });

  test('parsed from a real GET ad call, the signals are enforced per partner', () => {
    const q = new URLSearchParams({
      nwid: '1',
      gdpr: '1',
      gdpr_consent: tc([1, 2, 4], [45, 131]),
      us_privacy: '1YNN',
      eids: Buffer.from(JSON.stringify(EIDS)).toString('base64url'),
    });
    const c = parseAdCall({ url: `/ac?${q}` });
    const out = explainForwarding(c, [DSP, { id: 'x', gvlVendorId: 999 }], policy);
    expect(out.partners.map((p) => p.kept.length)).toEqual([3, 1]);
  });

  test('consent.enforce: false forwards without looking at the signals', () => {
    expect(
      sent(call({ gdpr: 1, usPrivacy: '1YYN' }), DSP, createForwardingPolicy({ consent: { enforce: false } })),
    ).toEqual(EIDS);
  });
});

describe('createConsentDecoder', () => {
  test('decodes each string once (cached) and reports the first reason of each US signal', () => {
    const d = createConsentDecoder();
    const consent = {
      gdpr: 1 as const,
      gdprConsent: tc([2], [131]),
      usPrivacy: '1YYN',
      gpp: gpp({ usnat: { SaleOptOut: 1, SharingOptOut: 1 } }),
    };
    const out = d.decode(consent);
    expect(out.gdprApplies).toBe(true);
    expect(out.usOptOuts).toEqual([
      { section: 'usp', field: 'us_privacy', value: 'us_privacy[2]=Y' },
      { section: 'usnat', field: 'SaleOptOut', value: 'SaleOptOut=1' },
    ]);
    expect(d.decode(consent).tcf).toBe(out.tcf);
    expect(d.refusal(out, 131)?.code).toBe('usp');
  });

  test('a TC string naming a vendor id within the cap is decoded, applied and cached; past the cap it is unreadable', () => {
    const d = createConsentDecoder();
    // A vendor list with vendor ids far beyond the real list's, so @iabtcf/core encodes them.
    const extra = (id: number) => ({ ...vendorList.vendors[131], id });
    const withVendor = (id: number) => {
      const m = new TCModel(new GVL({ ...vendorList, vendors: { ...vendorList.vendors, [id]: extra(id) } }));
      m.cmpId = 10;
      m.cmpVersion = 1;
      m.isServiceSpecific = true;
      m.purposeConsents.set([2]);
      m.vendorConsents.set([131, id]);
      return { gdpr: 1 as const, gdprConsent: TCString.encode(m, WITH_DISCLOSED) };
    };
    const within = withVendor(10_000);
    const out = d.decode(within);
    expect(d.refusal(out, 10_000)).toBeUndefined();
    expect(d.refusal(out, 9_999)?.code).toBe('gdpr');
    expect(d.decode(within).tcf).toBe(out.tcf);
    const past = d.decode(withVendor(60_000));
    expect(d.refusal(past, 131)).toEqual({
      code: 'gdpr',
      message:
        'GDPR applies: the TC string could not be used (segment 1, vendorConsents.maxId: vendor id 60,000, over the cap of 10,000)',
      reason: 'tcf unreadable',
    });
  });
});
