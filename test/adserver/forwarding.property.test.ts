// Property tests of the forwarding policy: what buildBidRequest sends and what explainForwarding says always agree.
import { describe, expect, test } from 'vitest';
import fc from 'fast-check';
import { GppModel } from '@iabgpp/cmpapi';
import { buildBidRequest, createForwardingPolicy, explainForwarding, ForwardingPolicyError } from '../../src/adserver/index.js';
import type { AdCall, AdCallConsent, DemandPartner, ForwardingPolicy, OrtbEid, PermissionRule } from '../../src/adserver/index.js';
import { validateEids } from '../../src/core/index.js';
// @ts-expect-error: plain JS helper shared with the demo CMP
import { encodeTcString } from '../../demo/modules/tc-string.mjs';

const SOURCES = ['id5-sync.com', 'uidapi.com', 'pubcid.org', 'liveramp.com', 'example.org'];
const INSERTERS = ['pub.example', 'ssp.example'];
const MATCHERS = ['id5-sync.com', 'matcher.example'];
const PARTNERS = ['dsp-a', 'dsp-b', 'dsp-c', 'dmp'];
const VENDORS = [45, 131, 21];

// Real consent strings, encoded once (encoding is slow): TCF by @iabtcf/core, GPP by @iabgpp/cmpapi.
const TC = [encodeTcString([1, 2, 3, 4], VENDORS), encodeTcString([1, 2], [45]), encodeTcString([], [131]), encodeTcString([], [], [21], [2]), 'garbage'];
const usnatOptOut = new GppModel();
usnatOptOut.setFieldValue('usnat', 'SaleOptOut', 1);
const usnatFine = new GppModel();
usnatFine.setFieldValue('usnat', 'SaleOptOut', 2);
const GPP = [usnatOptOut.encode(), usnatFine.encode(), 'DBABzYA~garbage'];

const opt = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined, freq: 2 });
const strip = <T extends object>(o: T) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;

const eidArb = fc
  .record({
    source: fc.constantFrom(...SOURCES, 'ID5-SYNC.com'),
    uids: fc.array(fc.record({ id: fc.string({ minLength: 1, maxLength: 6 }), atype: opt(fc.constantFrom(1, 3, 4, 571187)) }).map(strip), { minLength: 1, maxLength: 2 }),
    inserter: opt(fc.constantFrom(...INSERTERS, 'PUB.example')),
    matcher: opt(fc.constantFrom(...MATCHERS)),
    mm: opt(fc.integer({ min: 0, max: 5 })),
  })
  .map(strip);

const consentArb: fc.Arbitrary<AdCallConsent> = fc
  .record({
    gdpr: opt(fc.constantFrom(0 as const, 1 as const)),
    gdprConsent: opt(fc.constantFrom(...TC)),
    usPrivacy: opt(fc.constantFrom('1YYN', '1YNN', '1---')),
    gpp: opt(fc.constantFrom(...GPP)),
    gppSid: opt(fc.constantFrom<number[]>([7], [2], [2, 7])),
  })
  .map(strip);

const callArb = fc.tuple(fc.array(eidArb, { maxLength: 6 }), consentArb).map(([raw, consent]): AdCall => ({
  endpoint: 'call',
  formats: [{ id: 1 }],
  eids: validateEids(raw).value,
  consent,
  issues: [],
}));

const ruleArb: fc.Arbitrary<PermissionRule> = fc
  .record({
    source: fc.constantFrom(...SOURCES),
    inserter: opt(fc.constantFrom(...INSERTERS)),
    matcher: opt(fc.constantFrom(...MATCHERS)),
    mm: opt(fc.integer({ min: 0, max: 5 })),
    partners: fc.oneof(fc.constant('*' as const), fc.subarray(PARTNERS)),
  })
  .map(strip);

const policyArb = fc
  .record({
    permissions: fc.array(ruleArb, { maxLength: 6 }),
    allowSources: fc.subarray(SOURCES, { maxLength: 2 }),
    legitimateInterest: fc.boolean(),
    enforce: fc.boolean(),
  })
  .map(({ permissions, ...consent }) => {
    try {
      return createForwardingPolicy({ permissions, consent });
    } catch (e) {
      if (e instanceof ForwardingPolicyError) return undefined; // a random tie: refused, as it should be
      throw e;
    }
  });

const partnerArb: fc.Arbitrary<DemandPartner> = fc.constantFrom(...PARTNERS).chain((id) =>
  fc
    .record({
      id: fc.constant(id),
      openrtb: opt(fc.constantFrom('2.5' as const, '2.6' as const, 'both' as const)),
      gvlVendorId: opt(fc.constantFrom(...VENDORS, 999)),
      kind: fc.constant(id === 'dmp' ? ('dmp' as const) : undefined),
      preferredProvider: fc.constant(id === 'dmp' ? 'id5-sync.com' : undefined),
    })
    .map(strip),
);

/** The eids a bid request carries, from each place its version puts them. */
function received(call: AdCall, partner: DemandPartner, policy?: ForwardingPolicy): OrtbEid[][] {
  const r = buildBidRequest(call, partner, { policy, id: 'x' }) as { user?: { eids?: OrtbEid[]; ext?: { eids?: OrtbEid[] } } };
  const places = partner.openrtb === '2.5' ? [r.user?.ext?.eids] : partner.openrtb === 'both' ? [r.user?.eids, r.user?.ext?.eids] : [r.user?.eids];
  return places.map((p) => p ?? []);
}

describe('forwarding policy properties', () => {
  test('no partner ever receives an eid explainForwarding says is removed, and it receives every eid it says is kept', () => {
    let policies = 0;
    let removed = 0;
    fc.assert(
      fc.property(callArb, policyArb, fc.uniqueArray(partnerArb, { selector: (p) => p.id, minLength: 1, maxLength: 4 }), (call, policy, partners) => {
        fc.pre(policy !== undefined);
        policies++;
        const explanation = explainForwarding(call, partners, policy);
        partners.forEach((partner, i) => {
          const why = explanation.partners[i];
          removed += why.removed.length;
          for (const eids of received(call, partner, policy)) {
            expect(eids).toEqual(why.kept.map((d) => d.eid));
            for (const d of why.removed) expect(eids).not.toContain(d.eid);
          }
          expect(why.kept.length + why.removed.length).toBe(call.eids.length);
        });
      }),
      { numRuns: 400 },
    );
    expect(policies).toBeGreaterThan(200); // most random policies are valid, so the property is really exercised
    expect(removed).toBeGreaterThan(100); // and removals really happen
  });

  test('with an empty policy and full consent, every eid reaches every DSP unmodified: what was sent before any policy', () => {
    const full: AdCallConsent = { gdpr: 1, gdprConsent: TC[0], usPrivacy: '1YNN', gpp: GPP[1], gppSid: [7] };
    const empty = createForwardingPolicy();
    fc.assert(
      fc.property(callArb, fc.constantFrom(...VENDORS), fc.constantFrom('2.5' as const, '2.6' as const, 'both' as const), (c, gvlVendorId, openrtb) => {
        const call = { ...c, consent: full };
        const snapshot = JSON.stringify(call.eids);
        const partner: DemandPartner = { id: 'dsp-a', gvlVendorId, openrtb };
        for (const eids of received(call, partner, empty)) expect(JSON.stringify(eids)).toBe(snapshot);
        expect(received(call, partner, empty)).toEqual(received(call, partner));
        expect(JSON.stringify(call.eids)).toBe(snapshot);
      }),
      { numRuns: 300 },
    );
  });
});
