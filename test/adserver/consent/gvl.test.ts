// The Global Vendor List in GDPR decisions: the v3 list checked and compiled (parseVendorList), and every way a
// vendor's declarations decide, on the synthetic snapshot test/support/gvl/vendor-list-v150.json.
import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { GVL, PurposeRestriction, TCModel, TCString } from '@iabtcf/core';
import type { EncodingOptions } from '@iabtcf/core';
import {
  buildBidRequest,
  createConsentDecoder,
  createForwardingPolicy,
  explainForwarding,
  ForwardingPolicyError,
  GlobalVendorList,
  GvlError,
  parseVendorList,
} from '../../../src/adserver/index.js';
import type { AdCall, DemandPartner, TcfRules, VendorListSource } from '../../../src/adserver/index.js';
import { ID5, callWith } from '../fixtures.js';

const SNAPSHOT = new URL('../../support/gvl/vendor-list-v150.json', import.meta.url);
const json = (): Record<string, unknown> & { vendors: Record<string, Record<string, unknown>> } =>
  JSON.parse(readFileSync(SNAPSHOT, 'utf8')) as never;
const list = parseVendorList(readFileSync(SNAPSHOT, 'utf8'));

/**
 * The list as a lax consent platform sees it: every vendor declares every purpose on both bases, flexible, so the
 * IAB encoder keeps whatever signals a case sets (a real platform's bugs, or a list it read wrongly), and the
 * string names list version `version`.
 */
function laxGvl(version = 150): GVL {
  const all = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
  const doc = json();
  for (const v of Object.values(doc.vendors)) {
    Object.assign(v, { purposes: all, legIntPurposes: all, flexiblePurposes: all });
    delete v.deletedDate;
  }
  // And a vendor the list does not have (the platform's list is wrong).
  doc.vendors['3'] = { ...doc.vendors['45'], id: 3 };
  return new GVL({ ...doc, vendorListVersion: version } as never);
}

interface Signals {
  consents?: number[];
  purposeLI?: number[];
  vendors?: number[];
  vendorLI?: number[];
  /** [vendor, purpose, type]: 0 not allowed, 1 consent only, 2 legitimate interest only. */
  restrictions?: [number, number, 0 | 1 | 2][];
  version?: number;
  /** Without the disclosed-vendors segment (a TCF v2.2 string). */
  noDisclosed?: boolean;
}

/** A TC string written by @iabtcf/core with these signals. */
function tc(s: Signals): string {
  const m = new TCModel(laxGvl(s.version));
  m.cmpId = 10;
  m.cmpVersion = 1;
  m.isServiceSpecific = true;
  m.purposeConsents.set(s.consents ?? []);
  m.purposeLegitimateInterests.set(s.purposeLI ?? []);
  m.vendorConsents.set(s.vendors ?? []);
  m.vendorLegitimateInterests.set(s.vendorLI ?? []);
  for (const [v, p, t] of s.restrictions ?? []) m.publisherRestrictions.add(v, new PurposeRestriction(p, t));
  const segments = s.noDisclosed ? ['core', 'publisherTC'] : ['core', 'vendorsDisclosed', 'publisherTC'];
  return TCString.encode(m, { segments } as EncodingOptions);
}

/** The refusal reason for `vendor` under `rules` (undefined: it receives eids). */
function reasonFor(signals: Signals, vendor: number, rules: TcfRules = { gvl: list }): string | undefined {
  const d = createConsentDecoder(rules);
  return d.refusal(d.decode({ gdpr: 1, gdprConsent: tc(signals) }), vendor)?.reason;
}

const CONSENT_ALL = { consents: [1, 2, 3, 4, 7, 9, 10] };

describe('parseVendorList: the v3 list, checked and compiled', () => {
  test('the snapshot: its versions, its vendors, deleted ones apart, and the same declarations as @iabtcf/core reads', () => {
    expect(list).toBeInstanceOf(GlobalVendorList);
    expect([list.version, list.specVersion, list.tcfPolicyVersion, list.lastUpdated]).toEqual([
      150,
      3,
      5,
      '2026-11-19T16:05:25Z',
    ]);
    expect([list.vendorCount, list.deletedCount]).toEqual([36, 2]);
    expect(list.vendor(755)).toEqual({
      id: 755,
      purposes: [1, 3],
      legIntPurposes: [2, 7, 9, 10],
      flexiblePurposes: [2, 7, 9, 10],
      specialPurposes: [1, 2, 3],
      features: [1, 2],
      specialFeatures: [],
    });
    expect([45, 12, 3, 99_999, 1.5, -1, NaN].map((id) => list.vendorState(id))).toEqual([1, 2, 0, 0, 0, 0, 0]);
    expect(list.vendor(12)?.deletedDate).toBe('2025-03-01T00:00:00Z');
    // IAB's library reads the same file: every vendor it keeps declares what ours says.
    const iab = new GVL(json() as never);
    for (const [id, v] of Object.entries(iab.vendors)) {
      const ours = list.vendor(Number(id))!;
      expect([ours.purposes, ours.legIntPurposes, ours.flexiblePurposes]).toEqual([
        v.purposes,
        v.legIntPurposes,
        v.flexiblePurposes,
      ]);
    }
  });

  test('a fixed list is its own source: its version only, never changing', () => {
    expect([list.list(150), list.list(149), list.latest(), list.generation]).toEqual([list, undefined, list, 0]);
  });

  const bad: [string, (doc: ReturnType<typeof json>) => unknown, string][] = [
    ['not JSON', () => '{"vendors":', ''],
    ['a v2 list', (d) => ({ ...d, gvlSpecificationVersion: 2 }), 'gvlSpecificationVersion'],
    ['version 0', (d) => ({ ...d, vendorListVersion: 0 }), 'vendorListVersion'],
    ['a version past 12 bits', (d) => ({ ...d, vendorListVersion: 4096 }), 'vendorListVersion'],
    ['no vendors', (d) => ({ ...d, vendors: undefined }), 'vendors'],
    ['no purposes map', (d) => ({ ...d, purposes: [] }), 'purposes'],
    ['lastUpdated not a date', (d) => ({ ...d, lastUpdated: 'yesterday' }), 'lastUpdated'],
    ['a purpose id past 24', (d) => setVendor(d, '45', { purposes: [1, 25] }), 'vendors.45.purposes[1]'],
    ['purposes as strings', (d) => setVendor(d, '45', { legIntPurposes: ['2'] }), 'vendors.45.legIntPurposes[0]'],
    ['no flexiblePurposes', (d) => setVendor(d, '45', { flexiblePurposes: undefined }), 'vendors.45.flexiblePurposes'],
    ['a deletedDate not a date', (d) => setVendor(d, '12', { deletedDate: 'soon' }), 'vendors.12.deletedDate'],
    ['a key that is not the id', (d) => setVendor(d, '45', { id: 46 }), 'vendors.45.id'],
    ['a key that is no id', (d) => ({ ...d, vendors: { ...d.vendors, abc: d.vendors['45'] } }), 'vendors.abc'],
  ];
  function setVendor(d: ReturnType<typeof json>, id: string, fields: Record<string, unknown>) {
    return { ...d, vendors: { ...d.vendors, [id]: { ...d.vendors[id], ...fields } } };
  }
  test.each(bad)('refused, naming the field: %s', (_, make, field) => {
    const input = make(json());
    let error: unknown;
    try {
      parseVendorList(input);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(GvlError);
    expect((error as GvlError).field).toBe(field);
    expect((error as GvlError).message).toMatch(field ? `${field}: ` : 'is not JSON');
  });

  test('vendors past id 10,000 (no TC string we read can name them) are not kept', () => {
    const d = json();
    d.vendors['20000'] = { ...d.vendors['45'], id: 20_000 };
    const l = parseVendorList(d);
    expect([l.vendorState(20_000), l.vendorCount]).toEqual([0, 36]);
  });
});

describe('the vendor declarations decide (policy with the snapshot as its gvl)', () => {
  // [case, signals, vendor, reason with the list (undefined: eids go), reason without a list]
  const cases: [string, Signals, number, string | undefined, string | undefined][] = [
    ['consent for declared consent purposes', { ...CONSENT_ALL, vendors: [45] }, 45, undefined, undefined],
    ['a vendor not in the list', { ...CONSENT_ALL, vendors: [3] }, 3, 'gvl vendor 3 not in list', undefined],
    ['a vendor deleted from the list', { ...CONSENT_ALL, vendors: [12] }, 12, 'gvl vendor 12 deleted', undefined],
    ['another deleted vendor', { ...CONSENT_ALL, vendors: [82] }, 82, 'gvl vendor 82 deleted', undefined],
    [
      'purpose 2 never declared (purposes 1 and 8 only)',
      { consents: [1, 2, 8], vendors: [804] },
      804,
      'gvl vendor 804 does not declare purpose 2',
      undefined,
    ],
    [
      'special purposes only: none of purposes 2 to 10',
      { ...CONSENT_ALL, vendors: [793] },
      793,
      'gvl vendor 793 declares none of the purposes',
      undefined,
    ],
    [
      'legitimate interest for purposes declared on consent only',
      { purposeLI: [2, 7, 9, 10], vendorLI: [45] },
      45,
      'gvl vendor 45 does not declare purpose 2 on legitimate interest',
      undefined,
    ],
    [
      'consent for a purpose declared on legitimate interest only, not flexible',
      { consents: [2], vendors: [21] },
      21,
      'gvl vendor 21 does not declare purpose 2 on consent',
      undefined,
    ],
    [
      'legitimate interest where declared (not flexible)',
      { purposeLI: [2, 7], vendorLI: [21] },
      21,
      undefined,
      undefined,
    ],
    [
      'consent for a flexible purpose declared on legitimate interest',
      { consents: [2, 7], vendors: [755] },
      755,
      undefined,
      undefined,
    ],
    [
      'a flexible purpose restricted to consent: consent serves',
      { consents: [2], vendors: [131], restrictions: [[131, 2, 1]] },
      131,
      undefined,
      undefined,
    ],
    [
      'a flexible purpose restricted to consent: legitimate interest does not',
      { purposeLI: [2, 7], vendorLI: [131], restrictions: [[131, 2, 1]] },
      131,
      'tcf vendor 131 publisher restriction on purpose 2',
      'tcf vendor 131 publisher restriction on purpose 2',
    ],
    [
      'a purpose restricted to consent, declared on legitimate interest only: no basis, whatever the string',
      { consents: [2, 7], vendors: [21], purposeLI: [2, 7], vendorLI: [21], restrictions: [[21, 2, 1]] },
      21,
      'gvl vendor 21 does not declare purpose 2 on consent',
      undefined,
    ],
    [
      'a flexible consent purpose restricted to legitimate interest: legitimate interest serves',
      { purposeLI: [2], vendorLI: [91], restrictions: [[91, 2, 2]] },
      91,
      undefined,
      undefined,
    ],
    [
      'a consent purpose, not flexible, restricted to legitimate interest: no basis',
      { purposeLI: [2, 7], vendorLI: [45], consents: [2, 7], vendors: [45], restrictions: [[45, 2, 2]] },
      45,
      'gvl vendor 45 does not declare purpose 2 on legitimate interest',
      undefined,
    ],
    [
      'purpose 2 not allowed by the publisher',
      { ...CONSENT_ALL, vendors: [45], restrictions: [[45, 2, 0]] },
      45,
      'tcf vendor 45 publisher restriction on purpose 2',
      'tcf vendor 45 publisher restriction on purpose 2',
    ],
    [
      'legitimate interest for purpose 4 (not a basis since TCF v2.2), purpose 2 by consent',
      { consents: [2], vendors: [755], purposeLI: [4], vendorLI: [755] },
      755,
      undefined,
      undefined,
    ],
    [
      'legitimate interest for purposes 3 to 6 only: no basis',
      { purposeLI: [3, 4, 5, 6], vendorLI: [131] },
      131,
      'tcf vendor 131 no legal basis',
      'tcf vendor 131 no legal basis',
    ],
    [
      'no signal for the vendor',
      { ...CONSENT_ALL, vendors: [97] },
      45,
      'tcf vendor 45 no consent',
      'tcf vendor 45 no consent',
    ],
    [
      'a TCF v2.3 string that does not disclose the vendor',
      { ...CONSENT_ALL, vendors: [45], noDisclosed: true },
      45,
      'tcf vendor 45 not disclosed',
      'tcf vendor 45 not disclosed',
    ],
    [
      'a string naming a list version that is not held',
      { ...CONSENT_ALL, vendors: [45], version: 151 },
      45,
      'gvl version not loaded',
      undefined,
    ],
  ];
  test.each(cases)('%s', (_, signals, vendor, withList, withoutList) => {
    expect(reasonFor(signals, vendor)).toBe(withList);
    expect(reasonFor(signals, vendor, {})).toBe(withoutList);
  });

  test('each refusal names the signal, the field and the list version in one sentence', () => {
    const d = createConsentDecoder({ gvl: list });
    const decoded = d.decode({ gdpr: 1, gdprConsent: tc({ ...CONSENT_ALL, vendors: [12, 3, 804, 45] }) });
    expect(d.refusal(decoded, 12)).toEqual({
      code: 'gdpr',
      message: 'GDPR applies: gvl vendor 12 is deleted from the Global Vendor List (version 150)',
      reason: 'gvl vendor 12 deleted',
    });
    expect(d.refusal(decoded, 3)?.message).toBe(
      'GDPR applies: gvl vendor 3 is not in the Global Vendor List (version 150)',
    );
    expect(d.refusal(decoded, 804)?.message).toBe(
      'GDPR applies: gvl vendor 804 does not declare purpose 2 (list version 150)',
    );
    const other = d.decode({ gdpr: 1, gdprConsent: tc({ ...CONSENT_ALL, vendors: [45], version: 151 }) });
    expect(d.refusal(other, 45)?.message).toBe(
      'GDPR applies: the TC string names Global Vendor List version 151, which is not loaded',
    );
  });

  test("a version not held: 'newest' decides with the newest list held", () => {
    const signals = { ...CONSENT_ALL, vendors: [45, 12], version: 151 };
    expect(reasonFor(signals, 45, { gvl: list, gvlVersionMissing: 'newest' })).toBeUndefined();
    expect(reasonFor(signals, 12, { gvl: list, gvlVersionMissing: 'newest' })).toBe('gvl vendor 12 deleted');
  });

  test('a vendor deleted in the newest list gets nothing, even where the version the string names lists it', () => {
    const d = json();
    delete d.vendors['12'].deletedDate;
    const olderWith12 = parseVendorList({ ...d, vendorListVersion: 149 });
    const both: VendorListSource = {
      generation: 0,
      list: (v) => (v === 149 ? olderWith12 : v === 150 ? list : undefined),
      latest: () => list,
    };
    expect(reasonFor({ ...CONSENT_ALL, vendors: [12], version: 149 }, 12, { gvl: both })).toBe('gvl vendor 12 deleted');
    // And a vendor the newest list no longer has at all.
    const gone = parseVendorList({
      ...json(),
      vendors: Object.fromEntries(Object.entries(json().vendors).filter(([k]) => k !== '45')),
    });
    const newer: VendorListSource = { generation: 0, list: (v) => (v === 150 ? list : undefined), latest: () => gone };
    expect(reasonFor({ ...CONSENT_ALL, vendors: [45] }, 45, { gvl: newer })).toBe('gvl vendor 45 not in list');
  });

  test("before any list is loaded: refused by default ('gvl not loaded'), or the TC string alone with 'tc-string'", () => {
    const empty: VendorListSource = { generation: 0, list: () => undefined, latest: () => undefined };
    const signals = { ...CONSENT_ALL, vendors: [12] };
    expect(reasonFor(signals, 12, { gvl: empty })).toBe('gvl not loaded');
    expect(reasonFor(signals, 12, { gvl: empty, gvlFallback: 'tc-string' })).toBeUndefined();
  });
});

describe('the forwarding policy with a list', () => {
  const partner: DemandPartner = { id: 'dsp', gvlVendorId: 12 };
  const callOf = (gdprConsent: string): AdCall => ({ ...callWith({ eids: [ID5] }), consent: { gdpr: 1, gdprConsent } });

  test('decisions memoized per TC string and partner are redone when the lists change (generation)', () => {
    // A source whose list changes under the policy, as a loader's does on a refresh.
    const d = json();
    delete d.vendors['12'].deletedDate;
    const listed = parseVendorList(d);
    let current = listed;
    let generation = 1;
    const source: VendorListSource = {
      get generation() {
        return generation;
      },
      list: (v) => (v === current.version ? current : undefined),
      latest: () => current,
    };
    const policy = createForwardingPolicy({ consent: { gvl: source } });
    const call = callOf(tc({ ...CONSENT_ALL, vendors: [12] }));
    expect(policy.eidsFor(call, partner)).toEqual([ID5]);
    current = list;
    generation++;
    // The same call object and partner object: nothing kept may answer for the old list.
    expect(policy.eidsFor(call, partner)).toEqual([]);
    expect(policy.eidsFor({ ...call }, partner)).toEqual([]);
    expect(explainForwarding(call, [partner], policy).partners[0].consent?.reason).toBe('gvl vendor 12 deleted');
    current = listed;
    generation++;
    const request = buildBidRequest({ ...call }, { ...partner, openrtb: '2.6' }, { policy });
    expect(request.user && 'eids' in request.user ? request.user.eids : undefined).toHaveLength(1);
  });

  test('the option is checked, and the frozen config keeps the list itself', () => {
    expect(() => createForwardingPolicy({ consent: { gvl: {} as VendorListSource } })).toThrow(ForwardingPolicyError);
    expect(() => createForwardingPolicy({ consent: { gvlFallback: 'open' as 'refuse' } })).toThrow(/gvlFallback/);
    const policy = createForwardingPolicy({ consent: { gvl: list, requiredPurposes: [2, 7] } });
    expect(policy.config.consent?.gvl).toBe(list);
    expect(Object.isFrozen(policy.config)).toBe(true);
    const c = callOf(tc({ consents: [2], vendors: [45] }));
    expect(explainForwarding(c, [{ id: 'dsp', gvlVendorId: 45 }], policy).partners[0].consent?.reason).toBe(
      'tcf vendor 45 no legal basis for purpose 7',
    );
  });
});
