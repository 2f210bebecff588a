// Property tests of the forwarding policy: what buildBidRequest sends and what explainForwarding says always agree.
import { describe, expect, test } from 'vitest';
import fc from 'fast-check';
import { GppModel } from '@iabgpp/cmpapi';
import {
  buildBidRequest,
  createForwardingPolicy,
  explainForwarding,
  ForwardingPolicyError,
} from '../../../src/adserver/index.js';
import type {
  AdCall,
  AdCallConsent,
  DemandPartner,
  ForwardingPolicy,
  ForwardingPolicyConfig,
  OrtbEid,
  PermissionRule,
} from '../../../src/adserver/index.js';
import { validateEids } from '../../../src/core/index.js';
// @ts-expect-error: plain JS helper shared with the demo CMP
import { encodeTcString } from '../../support/tcf/tc-string.mjs';
import { pureDecisions } from './pure-rule.js';

const SOURCES = ['id5-sync.com', 'uidapi.com', 'pubcid.org', 'liveramp.com', 'example.org'];
const INSERTERS = ['pub.example', 'ssp.example'];
const MATCHERS = ['id5-sync.com', 'matcher.example'];
const PARTNERS = ['dsp-a', 'dsp-b', 'dsp-c', 'dmp'];
const VENDORS = [45, 131, 21];

// Real consent strings, encoded once (encoding is slow): TCF by @iabtcf/core, GPP by @iabgpp/cmpapi.
const TC = [
  encodeTcString([1, 2, 3, 4], VENDORS),
  encodeTcString([1, 2], [45]),
  encodeTcString([], [131]),
  encodeTcString([], [], [21], [2]),
  'garbage',
];
const usnatOptOut = new GppModel();
usnatOptOut.setFieldValue('usnat', 'SaleOptOut', 1);
const usnatFine = new GppModel();
// Opted in, with every notice given: sharing allowed.
for (const [field, value] of Object.entries({
  SharingNotice: 1,
  SaleOptOutNotice: 1,
  SharingOptOutNotice: 1,
  TargetedAdvertisingOptOutNotice: 1,
  SaleOptOut: 2,
}))
  usnatFine.setFieldValue('usnat', field, value);
const GPP = [usnatOptOut.encode(), usnatFine.encode(), 'DBABzYA~garbage'];

const opt = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined, freq: 2 });
const strip = <T extends object>(o: T) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;

const eidArb = fc
  .record({
    source: fc.constantFrom(...SOURCES, 'ID5-SYNC.com'),
    uids: fc.array(
      fc
        .record({ id: fc.string({ minLength: 1, maxLength: 6 }), atype: opt(fc.constantFrom(1, 3, 4, 571187)) })
        .map(strip),
      { minLength: 1, maxLength: 2 },
    ),
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
    gpc: opt(fc.boolean()),
  })
  .map(strip);

const callArb = fc.tuple(fc.array(eidArb, { maxLength: 6 }), consentArb).map(([raw, consent]): AdCall => ({
  endpoint: 'call',
  formats: [{ id: 1 }],
  eids: validateEids(raw).value,
  consent,
  issues: [],
}));

/** An id as written somewhere else: same letters, any case (partner ids match case-insensitively). */
const anyCase = (id: string) => fc.constantFrom(id, id.toUpperCase(), id[0].toUpperCase() + id.slice(1));

// A rule names any of the four fields, at least one (not necessarily the source), and partners in any case.
const ruleArb: fc.Arbitrary<PermissionRule> = fc
  .record({
    source: opt(fc.constantFrom(...SOURCES)),
    inserter: opt(fc.constantFrom(...INSERTERS)),
    matcher: opt(fc.constantFrom(...MATCHERS)),
    mm: opt(fc.integer({ min: 0, max: 5 })),
    partners: fc.oneof(
      fc.constant('*' as const),
      fc.subarray(PARTNERS).chain((ids) => fc.tuple(...ids.map(anyCase))),
    ),
  })
  .map(strip)
  .filter((r) => r.source !== undefined || r.inserter !== undefined || r.matcher !== undefined || r.mm !== undefined);

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
      id: anyCase(id),
      openrtb: opt(fc.constantFrom('2.5' as const, '2.6' as const, 'both' as const)),
      gvlVendorId: opt(fc.constantFrom(...VENDORS, 999)),
      kind: fc.constant(id === 'dmp' ? ('dmp' as const) : undefined),
      preferredProvider: fc.constant(id === 'dmp' ? 'id5-sync.com' : undefined),
    })
    .map(strip),
);

/** The policy of `config`; a configuration refused (a random tie, as it should be) skips the run. */
function validPolicy(config: ForwardingPolicyConfig): ForwardingPolicy {
  try {
    return createForwardingPolicy(config);
  } catch (e) {
    if (e instanceof ForwardingPolicyError) fc.pre(false);
    throw e;
  }
}

/** The eids a bid request carries, from each place its version puts them. */
function received(call: AdCall, partner: DemandPartner, policy?: ForwardingPolicy): OrtbEid[][] {
  const r = buildBidRequest(call, partner, { policy, id: 'x' }) as {
    user?: { eids?: OrtbEid[]; ext?: { eids?: OrtbEid[] } };
  };
  const places =
    partner.openrtb === '2.5'
      ? [r.user?.ext?.eids]
      : partner.openrtb === 'both'
        ? [r.user?.eids, r.user?.ext?.eids]
        : [r.user?.eids];
  return places.map((p) => p ?? []);
}

describe('forwarding policy properties', () => {
  test('no partner ever receives an eid explainForwarding says is removed, and it receives every eid it says is kept', () => {
    let policies = 0;
    let removed = 0;
    // Partner ids unique up to case: a policy refuses two partners that differ only by case.
    const partnersArb = fc.uniqueArray(partnerArb, { selector: (p) => p.id.toLowerCase(), minLength: 1, maxLength: 4 });
    fc.assert(
      fc.property(callArb, policyArb, partnersArb, (call, policy, partners) => {
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

  test('each eid goes where the most specific rule matching it says, by a model of the rules from their docs', () => {
    // The model: a rule matches an eid that has every field the rule names (source, inserter, matcher
    // case-insensitively, mm exactly); the matching rule naming the most fields decides (a valid policy has one);
    // partners match case-insensitively; no matching rule: every partner.
    const same = (a: string | undefined, b: string | undefined) =>
      b !== undefined && a?.toLowerCase() === b.toLowerCase();
    const matches = (r: PermissionRule, e: OrtbEid) =>
      (r.source === undefined || same(r.source, e.source)) &&
      (r.inserter === undefined || same(r.inserter, e.inserter)) &&
      (r.matcher === undefined || same(r.matcher, e.matcher)) &&
      (r.mm === undefined || r.mm === e.mm);
    const named = (r: PermissionRule) => [r.source, r.inserter, r.matcher, r.mm].filter((v) => v !== undefined).length;
    const idArb = fc.constantFrom(...PARTNERS).chain(anyCase);
    let decided = 0;
    fc.assert(
      fc.property(callArb, fc.array(ruleArb, { maxLength: 6 }), idArb, (call, permissions, id) => {
        const policy = validPolicy({ permissions, consent: { enforce: false } });
        const expected = call.eids.filter((e) => {
          const top = Math.max(0, ...permissions.filter((r) => matches(r, e)).map(named));
          const deciding = permissions.filter((r) => matches(r, e) && named(r) === top);
          expect(deciding.length).toBeLessThanOrEqual(1); // ties were refused
          if (!deciding.length) return true;
          decided++;
          const [r] = deciding;
          return r.partners === '*' || r.partners.some((p) => p.toLowerCase() === id.toLowerCase());
        });
        expect(policy.eidsFor(call, { id })).toEqual(expected);
      }),
      { numRuns: 500 },
    );
    expect(decided).toBeGreaterThan(100); // rules really decide, so the model is really compared
  });

  test('a policy serving call after call decides each call as a new policy with the same configuration does', () => {
    // The policy keeps what it worked out for the last calls and partners (codes per eid position, the decoded
    // consent, per partner object its refusal and kept positions). Each call here is the last one with one thing
    // changed (an eid's field, a consent signal, the partner's vendor id), or the same one again (as the same
    // object, a copy or parsed anew): none may get a decision made for another.
    // Rules on mm come first, so that an eid whose mm changes often changes hands.
    const mmRuleArb = fc.record({
      source: fc.constantFrom(...SOURCES),
      mm: fc.integer({ min: 0, max: 5 }),
      partners: fc.subarray(PARTNERS),
    });
    const configArb = fc.record({
      permissions: fc
        .tuple(fc.array(mmRuleArb, { maxLength: 3 }), fc.array(ruleArb, { maxLength: 4 }))
        .map(([a, b]) => [...a, ...b]),
      consent: fc.record({
        allowSources: fc.subarray(SOURCES, { maxLength: 2 }),
        enforce: fc.constantFrom(true, true, false),
      }),
    });
    const changeArb = fc.oneof(
      fc.record({ eid: fc.nat(), field: fc.constant('source'), value: fc.constantFrom(...SOURCES, 'ID5-SYNC.com') }),
      fc.record({
        eid: fc.nat(),
        field: fc.constant('inserter'),
        value: opt(fc.constantFrom(...INSERTERS, 'PUB.example')),
      }),
      fc.record({ eid: fc.nat(), field: fc.constant('matcher'), value: opt(fc.constantFrom(...MATCHERS)) }),
      fc.record({ eid: fc.nat(), field: fc.constant('mm'), value: opt(fc.integer({ min: 0, max: 5 })) }),
      fc.record({ signal: fc.constant('gdpr'), value: opt(fc.constantFrom(0, 1)) }),
      fc.record({ signal: fc.constant('gdprConsent'), value: opt(fc.constantFrom(...TC)) }),
      fc.record({ signal: fc.constant('usPrivacy'), value: opt(fc.constantFrom('1YYN', '1YNN', '1---')) }),
      fc.record({ signal: fc.constant('gpp'), value: opt(fc.constantFrom(...GPP)) }),
      fc.record({ signal: fc.constant('gppSid'), value: opt(fc.constantFrom<number[]>([7], [2], [2, 7])) }),
      fc.record({ vendor: opt(fc.constantFrom(...VENDORS, 999)) }),
      fc.record({ drop: fc.constant(true) }),
      fc.constant({}),
    );
    const stepArb = fc.record({
      change: changeArb,
      copy: fc.constantFrom('same', 'shallow', 'parsed anew'),
      partner: fc.nat(3),
      extra: fc.boolean(),
      all: fc.boolean(),
    });
    const steps = fc.array(stepArb, { minLength: 1, maxLength: 30 });
    let compared = 0;
    fc.assert(
      fc.property(configArb, callArb, callArb, steps, (config, first, other, steps) => {
        const policy = validPolicy(config);
        const partners: DemandPartner[] = [
          { id: 'dsp-a', gvlVendorId: 45 },
          { id: 'DSP-B', gvlVendorId: 131 },
          { id: 'dsp-c' },
          { id: 'other' },
        ];
        let call = first;
        // A first call to every partner in turn, as a server's first bid requests go out.
        const oracle = createForwardingPolicy(config);
        for (const p of partners) expect(policy.eidsFor(call, p)).toEqual(oracle.eidsFor(call, p));
        for (const { change, copy, partner: k, extra: withExtra, all } of steps) {
          const partner = partners[k];
          if ('eid' in change && call.eids.length) {
            const eids = call.eids.map((e) => ({ ...e }));
            const e = eids[change.eid % eids.length] as Record<string, unknown>;
            if (change.value === undefined) delete e[change.field];
            else e[change.field] = change.value;
            call = { ...call, eids };
          } else if ('signal' in change) {
            const consent = { ...call.consent } as Record<string, unknown>;
            if (change.value === undefined) delete consent[change.signal];
            else consent[change.signal] = change.value;
            call = { ...call, consent };
          }
          // The caller's partner object, changed between calls.
          else if ('vendor' in change) partner.gvlVendorId = change.vendor;
          else if ('drop' in change) call = { ...call, eids: call.eids.slice(0, -1) };
          else if (copy === 'shallow') call = { ...call, consent: { ...call.consent } };
          else if (copy === 'parsed anew') call = JSON.parse(JSON.stringify(call)) as AdCall;
          const extra = withExtra ? other.eids : undefined;
          // One partner, or every partner in turn as bid requests are built (the order the policy expects).
          const fresh = createForwardingPolicy(config);
          for (const p of all ? partners : [partner]) {
            expect(policy.eidsFor(call, p, extra)).toEqual(fresh.eidsFor(call, p, extra));
            compared++;
          }
        }
      }),
      { numRuns: 500 },
    );
    expect(compared).toBeGreaterThan(2000);
  });

  test('a policy serving call after call sends and explains what the pure rule decides, eid by eid', () => {
    // The pure rule (decide.ts through pure-rule.ts) keeps nothing; the policy keeps codes, decodings and partner
    // slots from call to call. Calls come in runs that repeat (the same call, copies of it), as a user's calls do.
    const configArb = fc.record({
      permissions: fc.array(ruleArb, { maxLength: 6 }),
      consent: fc.record({
        allowSources: fc.subarray(SOURCES, { maxLength: 2 }),
        legitimateInterest: fc.boolean(),
        enforce: fc.constantFrom(true, true, false),
      }),
    });
    const partnersArb = fc.uniqueArray(partnerArb, { selector: (p) => p.id.toLowerCase(), minLength: 1, maxLength: 4 });
    const stepArb = fc.record({ call: fc.nat(), copy: fc.boolean(), extra: fc.option(fc.nat(), { nil: undefined }) });
    let compared = 0;
    let removed = 0;
    fc.assert(
      fc.property(
        configArb,
        fc.array(callArb, { minLength: 1, maxLength: 4 }),
        partnersArb,
        fc.array(stepArb, { minLength: 1, maxLength: 12 }),
        (config, calls, partners, steps) => {
          const policy = validPolicy(config);
          for (const step of steps) {
            const base = calls[step.call % calls.length];
            const call = step.copy ? { ...base, consent: { ...base.consent } } : base;
            const extra = step.extra === undefined ? undefined : calls[step.extra % calls.length].eids;
            const explained = policy.explain(call, partners, extra).partners;
            partners.forEach((partner, i) => {
              const pure = pureDecisions(config, call, partner, extra);
              const eids = [...call.eids, ...(extra ?? [])];
              expect(policy.eidsFor(call, partner, extra)).toEqual(eids.filter((_, j) => pure[j].kept));
              const why = explained[i];
              const reasons = [...why.kept, ...why.removed].sort((a, b) => a.index - b.index).map((d) => d.reason);
              expect(reasons).toEqual(pure.map((d) => d.reason));
              compared += eids.length;
              removed += pure.filter((d) => !d.kept).length;
            });
          }
        },
      ),
      { numRuns: 300 },
    );
    expect(compared).toBeGreaterThan(2000);
    expect(removed).toBeGreaterThan(300);
  });

  test('a partner object whose gvlVendorId or id changes between calls is decided by its new values', () => {
    const policy = createForwardingPolicy({ permissions: [{ source: 'id5-sync.com', partners: ['dsp-a'] }] });
    const eids = validateEids([
      { source: 'id5-sync.com', uids: [{ id: 'x' }] },
      { source: 'pubcid.org', uids: [{ id: 'y' }] },
    ]).value;
    // TC[1]: consent for purposes 1 and 2, vendor 45 only.
    const consent: AdCallConsent = { gdpr: 1, gdprConsent: TC[1] };
    const call: AdCall = { endpoint: 'call', formats: [{ id: 1 }], eids, consent, issues: [] };
    const again = () => ({ ...call, consent: { ...call.consent } });
    const partner: DemandPartner = { id: 'dsp-a', gvlVendorId: 45 };
    expect(policy.eidsFor(call, partner)).toEqual(eids);
    partner.gvlVendorId = 131;
    expect(policy.eidsFor(again(), partner)).toEqual([]);
    partner.gvlVendorId = 45;
    expect(policy.eidsFor(again(), partner)).toEqual(eids);
    partner.id = 'dsp-b';
    expect(policy.eidsFor(again(), partner)).toEqual([eids[1]]);
  });

  test('past 64 partner objects and 64 eids, a policy still decides as a new one does', () => {
    const permissions: PermissionRule[] = [
      { source: 'id5-sync.com', partners: ['dsp-1', 'dsp-2'] },
      { source: 'uidapi.com', inserter: 'pub.example', partners: ['dsp-3'] },
    ];
    const config = { permissions, consent: { allowSources: ['pubcid.org'] } };
    const policy = createForwardingPolicy(config);
    // Eids as a service may add them (extraEids), not merged by source: 80 of them.
    const eids: AdCall['eids'] = Array.from({ length: 80 }, (_, i) => ({
      source: i % 2 ? SOURCES[i % SOURCES.length] : `s${i}.example`,
      uids: [{ id: `u${i}` }],
      ...(i % 3 ? { inserter: 'pub.example' } : {}),
    }));
    const consents: AdCallConsent[] = [
      { gdpr: 1, gdprConsent: TC[0] },
      { gdpr: 1, gdprConsent: TC[1] },
      { usPrivacy: '1YYN' },
    ];
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 100; i++) {
        const consent = consents[(i + round) % 3];
        const some = eids.slice(0, 40 + ((i * 7) % 41));
        const call: AdCall = { endpoint: 'call', formats: [{ id: 1 }], eids: some, consent, issues: [] };
        const partner: DemandPartner = { id: `dsp-${i % 5}`, gvlVendorId: VENDORS[i % 3] };
        expect(policy.eidsFor(call, partner)).toEqual(createForwardingPolicy(config).eidsFor(call, partner));
      }
    }
  });

  test('with an empty policy and full consent, every eid reaches every DSP unmodified: what was sent before any policy', () => {
    const full: AdCallConsent = { gdpr: 1, gdprConsent: TC[0], usPrivacy: '1YNN', gpp: GPP[1], gppSid: [7] };
    const empty = createForwardingPolicy();
    fc.assert(
      fc.property(
        callArb,
        fc.constantFrom(...VENDORS),
        fc.constantFrom('2.5' as const, '2.6' as const, 'both' as const),
        (c, gvlVendorId, openrtb) => {
          const call = { ...c, consent: full };
          const snapshot = JSON.stringify(call.eids);
          const partner: DemandPartner = { id: 'dsp-a', gvlVendorId, openrtb };
          for (const eids of received(call, partner, empty)) expect(JSON.stringify(eids)).toBe(snapshot);
          expect(received(call, partner, empty)).toEqual(received(call, partner));
          expect(JSON.stringify(call.eids)).toBe(snapshot);
        },
      ),
      { numRuns: 300 },
    );
  });
});
