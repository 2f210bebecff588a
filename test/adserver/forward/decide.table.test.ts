// The forwarding rule as a table: for one eid and one partner, under a policy and the call's consent signals, the
// decision (kept or removed), its reason code, the deciding rule, and words of its sentence. Each row goes through
// the pure rule (pure-rule.ts: compiled rules, decoded signals, TCF verdict, decideEidForwarding), then through a
// policy (explain and eidsFor), which must say the same.
import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { GppModel } from '@iabgpp/cmpapi';
import { createForwardingPolicy, parseVendorList } from '../../../src/adserver/index.js';
import type {
  AdCall,
  AdCallConsent,
  DemandPartner,
  ForwardingPolicyConfig,
  ForwardingReason,
  PermissionRule,
  TcfRules,
  VendorListSource,
} from '../../../src/adserver/index.js';
import type { Eid } from '../../../src/core/index.js';
// @ts-expect-error: plain JS helper shared with the demo CMP
import { encodeTcString } from '../../support/tcf/tc-string.mjs';
import { pureDecisions } from './pure-rule.js';

const tc = encodeTcString as (
  purposes: number[],
  vendors: number[],
  vendorLI?: number[],
  purposeLI?: number[],
) => string;
// The TC strings name list version 100; the snapshot is version 150, or passed off as 100.
const snapshot = readFileSync(new URL('../../support/gvl/vendor-list-v150.json', import.meta.url), 'utf8');
const GVL_150 = parseVendorList(snapshot);
const GVL_100 = parseVendorList({ ...(JSON.parse(snapshot) as object), vendorListVersion: 100 });
const NOT_LOADED: VendorListSource = { generation: 0, list: () => undefined, latest: () => undefined };

const usnat = (fields: Record<string, number>) => {
  const m = new GppModel();
  for (const [field, value] of Object.entries(fields)) m.setFieldValue('usnat', field, value);
  return m.encode();
};
const USNAT_OPT_OUT = usnat({ SaleOptOut: 1 });
// Opted in, with every notice given, GPC not set: sharing allowed.
const USNAT_FINE = usnat({
  SharingNotice: 1,
  SaleOptOutNotice: 1,
  SharingOptOutNotice: 1,
  TargetedAdvertisingOptOutNotice: 1,
  SaleOptOut: 2,
});

const ID5: Eid = { source: 'id5-sync.com', uids: [{ id: 'i' }] };
const UID2: Eid = { source: 'uidapi.com', uids: [{ id: 'u' }] };
const PUBCID: Eid = { source: 'pubcid.org', uids: [{ id: 'p' }] };
const ID5_PUB: Eid = { ...ID5, inserter: 'pub.example', mm: 3 };
const DSP_A: DemandPartner = { id: 'dsp-a', gvlVendorId: 45 };
const DSP_B: DemandPartner = { id: 'dsp-b', gvlVendorId: 131 };
const DMP: DemandPartner = { id: 'dmp', kind: 'dmp', preferredProvider: 'id5-sync.com' };

/** Purposes 1 to 4 and 7 with consent, for vendors 45 and 131: every default purpose rule is met. */
const FULL = tc([1, 2, 3, 4, 7], [45, 131]);
const GDPR = (gdprConsent: string): AdCallConsent => ({ gdpr: 1, gdprConsent });

interface Row {
  name: string;
  eid: Eid;
  partner: DemandPartner;
  permissions?: PermissionRule[];
  allowSources?: string[];
  /** The call's signals; `null`: consent not enforced. */
  consent: AdCallConsent | null;
  tcf?: TcfRules;
  kept: boolean;
  code: ForwardingReason['code'];
  rule?: number;
  /** Words the decision's sentence says. */
  says: string;
}

const rows: Row[] = [
  // Permissions, consent allowing.
  {
    name: 'no rule, no signal: every partner receives it',
    eid: ID5,
    partner: DSP_A,
    consent: {},
    kept: true,
    code: 'no-rule',
    says: 'no permission rule matches id5-sync.com',
  },
  {
    name: 'consent not enforced, no rule',
    eid: ID5,
    partner: DSP_B,
    consent: null,
    kept: true,
    code: 'no-rule',
    says: 'every partner receives it',
  },
  {
    name: 'a rule on its source listing the partner',
    eid: ID5,
    partner: DSP_A,
    permissions: [{ source: 'id5-sync.com', partners: ['dsp-a'] }],
    consent: {},
    kept: true,
    code: 'rule',
    rule: 0,
    says: 'permissions[0] (source id5-sync.com) allows dsp-a',
  },
  {
    name: 'a rule on its source listing another partner',
    eid: ID5,
    partner: DSP_A,
    permissions: [{ source: 'id5-sync.com', partners: ['dsp-b'] }],
    consent: {},
    kept: false,
    code: 'rule',
    rule: 0,
    says: 'allows only dsp-b',
  },
  {
    name: 'a rule listing no partner',
    eid: ID5,
    partner: DSP_A,
    permissions: [{ source: 'id5-sync.com', partners: [] }],
    consent: {},
    kept: false,
    code: 'rule',
    rule: 0,
    says: 'allows no partner',
  },
  {
    name: "a rule for '*'",
    eid: ID5,
    partner: DSP_B,
    permissions: [{ source: 'id5-sync.com', partners: '*' }],
    consent: {},
    kept: true,
    code: 'rule',
    rule: 0,
    says: 'allows dsp-b',
  },
  {
    name: 'sources and partner ids match whatever their case',
    eid: { ...ID5, source: 'ID5-Sync.com' },
    partner: { id: 'DSP-A', gvlVendorId: 45 },
    permissions: [{ source: 'id5-sync.COM', partners: ['Dsp-A'] }],
    consent: {},
    kept: true,
    code: 'rule',
    rule: 0,
    says: 'allows DSP-A',
  },
  {
    name: 'a rule on another source does not decide',
    eid: UID2,
    partner: DSP_A,
    permissions: [{ source: 'id5-sync.com', partners: [] }],
    consent: {},
    kept: true,
    code: 'no-rule',
    says: 'no permission rule matches uidapi.com',
  },
  {
    name: 'source and inserter beat the source alone (domains in any case)',
    eid: { ...ID5_PUB, inserter: 'Pub.Example' },
    partner: DSP_A,
    permissions: [
      { source: 'id5-sync.com', partners: [] },
      { source: 'id5-sync.com', inserter: 'PUB.example', partners: ['dsp-a'] },
    ],
    consent: {},
    kept: true,
    code: 'rule',
    rule: 1,
    says: 'permissions[1] (source id5-sync.com, inserter pub.example)',
  },
  {
    name: 'an eid without the inserter: the source-wide rule decides',
    eid: ID5,
    partner: DSP_A,
    permissions: [
      { source: 'id5-sync.com', partners: [] },
      { source: 'id5-sync.com', inserter: 'pub.example', partners: ['dsp-a'] },
    ],
    consent: {},
    kept: false,
    code: 'rule',
    rule: 0,
    says: 'allows no partner',
  },
  {
    name: 'a rule on the match method',
    eid: ID5_PUB,
    partner: DSP_B,
    permissions: [{ source: 'id5-sync.com', mm: 3, partners: ['dsp-a'] }],
    consent: {},
    kept: false,
    code: 'rule',
    rule: 0,
    says: 'permissions[0] (source id5-sync.com, mm 3) allows only dsp-a',
  },
  {
    name: 'a rule naming no source matches any source with its inserter',
    eid: { ...UID2, inserter: 'pub.example' },
    partner: DSP_B,
    permissions: [{ inserter: 'pub.example', partners: ['dsp-a'] }],
    consent: {},
    kept: false,
    code: 'rule',
    rule: 0,
    says: 'allows only dsp-a',
  },
  {
    name: "a DMP receives its preferred provider's eids",
    eid: ID5,
    partner: DMP,
    consent: {},
    kept: true,
    code: 'no-rule',
    says: 'every partner receives it',
  },
  {
    name: "a DMP does not receive another provider's, whatever the rules",
    eid: UID2,
    partner: DMP,
    permissions: [{ source: 'uidapi.com', partners: '*' }],
    consent: {},
    kept: false,
    code: 'dmp',
    says: "a DMP receives only its preferred provider's eids (ID5)",
  },
  // GDPR.
  {
    name: 'GDPR applies, no TC string',
    eid: ID5,
    partner: DSP_A,
    consent: { gdpr: 1 },
    kept: false,
    code: 'gdpr',
    says: 'GDPR applies and the call carries no TC string',
  },
  {
    name: 'GDPR applies, a TC string that cannot be read',
    eid: ID5,
    partner: DSP_A,
    consent: GDPR('garbage'),
    kept: false,
    code: 'gdpr',
    says: 'the TC string could not be used',
  },
  {
    name: 'GDPR applies, the partner has no vendor id',
    eid: ID5,
    partner: { id: 'dsp-x' },
    consent: GDPR(FULL),
    kept: false,
    code: 'gdpr',
    says: 'has no gvlVendorId',
  },
  {
    name: 'TCF: vendor and purpose consent',
    eid: ID5,
    partner: DSP_A,
    consent: GDPR(FULL),
    kept: true,
    code: 'no-rule',
    says: 'every partner receives it',
  },
  {
    name: 'TCF: the vendor has no consent',
    eid: ID5,
    partner: DSP_B,
    consent: GDPR(tc([1, 2, 3, 4, 7], [45])),
    kept: false,
    code: 'gdpr',
    says: 'vendor 131 has no consent in the TC string',
  },
  {
    name: 'TCF: consent for purpose 1 only, none of the purposes',
    eid: ID5,
    partner: DSP_A,
    consent: GDPR(tc([1], [45])),
    kept: false,
    code: 'gdpr',
    says: 'vendor 45 has no legal basis for any of purposes 2, 3, 4, 5, 6, 7, 8, 9, 10',
  },
  {
    name: 'TCF: no basis for the required purpose 2',
    eid: ID5,
    partner: DSP_A,
    consent: GDPR(tc([1, 3, 4], [45])),
    kept: false,
    code: 'gdpr',
    says: 'vendor 45 has no legal basis for purpose 2',
  },
  {
    name: 'TCF: legitimate interest for vendor and purposes 2 and 7',
    eid: ID5,
    partner: DSP_A,
    consent: GDPR(tc([1], [], [45], [2, 7])),
    kept: true,
    code: 'no-rule',
    says: 'every partner receives it',
  },
  {
    name: 'TCF: legitimate interest only, where the policy requires consent',
    eid: ID5,
    partner: DSP_A,
    consent: GDPR(tc([1], [], [45], [2, 7])),
    tcf: { legitimateInterest: false },
    kept: false,
    code: 'gdpr',
    says: 'vendor 45 has legitimate interest only',
  },
  {
    name: 'TCF: purposes of the policy met by consent to purpose 9 alone, besides purpose 2',
    eid: ID5,
    partner: DSP_A,
    consent: GDPR(tc([1, 2, 9], [45])),
    tcf: { purposes: [9] },
    kept: true,
    code: 'no-rule',
    says: 'every partner receives it',
  },
  {
    name: 'TCF: a vendor the string does not disclose',
    eid: ID5,
    partner: { id: 'dsp-x', gvlVendorId: 999 },
    consent: GDPR(tc([1, 2, 3, 4, 7], [999])),
    kept: false,
    code: 'gdpr',
    says: "vendor 999 is not among the TC string's disclosed vendors",
  },
  {
    name: 'gdpr=0: the TC string is not read',
    eid: ID5,
    partner: DSP_B,
    consent: { gdpr: 0, gdprConsent: tc([], []) },
    kept: true,
    code: 'no-rule',
    says: 'every partner receives it',
  },
  {
    name: 'gdpr absent, a TC string: GDPR applies (default)',
    eid: ID5,
    partner: DSP_B,
    consent: { gdprConsent: tc([1, 2, 3, 4, 7], [45]) },
    kept: false,
    code: 'gdpr',
    says: 'vendor 131 has no consent',
  },
  {
    name: "gdpr absent, a TC string, gdprDefault 'does-not-apply'",
    eid: ID5,
    partner: DSP_B,
    consent: { gdprConsent: tc([1, 2, 3, 4, 7], [45]) },
    tcf: { gdprDefault: 'does-not-apply' },
    kept: true,
    code: 'no-rule',
    says: 'every partner receives it',
  },
  {
    name: 'a refusal spares a source in allowSources',
    eid: PUBCID,
    partner: DSP_B,
    allowSources: ['PubCid.org'],
    consent: GDPR(tc([1, 2, 3, 4, 7], [45])),
    kept: true,
    code: 'allow-source',
    says: 'pubcid.org is in allowSources: sent although GDPR applies: vendor 131 has no consent',
  },
  {
    name: 'allowSources does not override a permission rule',
    eid: PUBCID,
    partner: DSP_B,
    permissions: [{ source: 'pubcid.org', partners: ['dsp-a'] }],
    allowSources: ['pubcid.org'],
    consent: GDPR(tc([1, 2, 3, 4, 7], [45])),
    kept: false,
    code: 'rule',
    rule: 0,
    says: 'allows only dsp-a',
  },
  {
    name: 'a rule allowed it, consent removes it: the rule is named',
    eid: ID5,
    partner: DSP_B,
    permissions: [{ source: 'id5-sync.com', partners: ['dsp-b'] }],
    consent: GDPR(tc([1, 2, 3, 4, 7], [45])),
    kept: false,
    code: 'gdpr',
    rule: 0,
    says: 'vendor 131 has no consent',
  },
  // The Global Vendor List.
  {
    name: 'GVL: none loaded yet (refused by default)',
    eid: ID5,
    partner: DSP_A,
    consent: GDPR(FULL),
    tcf: { gvl: NOT_LOADED },
    kept: false,
    code: 'gdpr',
    says: 'no Global Vendor List is loaded yet',
  },
  {
    name: "GVL: none loaded yet, gvlFallback 'tc-string'",
    eid: ID5,
    partner: DSP_A,
    consent: GDPR(FULL),
    tcf: { gvl: NOT_LOADED, gvlFallback: 'tc-string' },
    kept: true,
    code: 'no-rule',
    says: 'every partner receives it',
  },
  {
    name: 'GVL: the version the TC string names is not held',
    eid: ID5,
    partner: DSP_A,
    consent: GDPR(FULL),
    tcf: { gvl: GVL_150 },
    kept: false,
    code: 'gdpr',
    says: 'the TC string names Global Vendor List version 100, which is not loaded',
  },
  {
    name: "GVL: the version is not held, gvlVersionMissing 'newest'",
    eid: ID5,
    partner: DSP_A,
    consent: GDPR(FULL),
    tcf: { gvl: GVL_150, gvlVersionMissing: 'newest' },
    kept: true,
    code: 'no-rule',
    says: 'every partner receives it',
  },
  {
    name: 'GVL: consent to purpose 2, which the vendor declares on legitimate interest only',
    eid: ID5,
    partner: { id: 'dsp-d', gvlVendorId: 21 },
    consent: GDPR(tc([1, 2, 3, 4, 7], [21])),
    tcf: { gvl: GVL_100 },
    kept: false,
    code: 'gdpr',
    says: 'gvl vendor 21 does not declare purpose 2 on consent (list version 100)',
  },
  {
    name: 'GVL: the vendor is not in the list',
    eid: ID5,
    partner: { id: 'dsp-x', gvlVendorId: 3 },
    consent: GDPR(tc([1, 2, 3, 4, 7], [3])),
    tcf: { gvl: GVL_100 },
    kept: false,
    code: 'gdpr',
    says: 'gvl vendor 3 is not in the Global Vendor List (version 100)',
  },
  {
    name: 'GVL: the vendor is deleted from the list',
    eid: ID5,
    partner: { id: 'dsp-x', gvlVendorId: 12 },
    consent: GDPR(tc([1, 2, 3, 4, 7], [12])),
    tcf: { gvl: GVL_100 },
    kept: false,
    code: 'gdpr',
    says: 'gvl vendor 12 is deleted from the Global Vendor List',
  },
  {
    name: 'GVL: declarations met',
    eid: ID5,
    partner: DSP_A,
    consent: GDPR(FULL),
    tcf: { gvl: GVL_100 },
    kept: true,
    code: 'no-rule',
    says: 'every partner receives it',
  },
  // US signals.
  {
    name: 'US Privacy: opted out of sale',
    eid: ID5,
    partner: DSP_A,
    consent: { usPrivacy: '1YYN' },
    kept: false,
    code: 'usp',
    says: 'US Privacy string signals an opt-out of sale',
  },
  {
    name: 'US Privacy: not opted out',
    eid: ID5,
    partner: DSP_A,
    consent: { usPrivacy: '1YNN' },
    kept: true,
    code: 'no-rule',
    says: 'every partner receives it',
  },
  {
    name: 'GPP usnat: opted out of sale',
    eid: ID5,
    partner: DSP_A,
    consent: { gpp: USNAT_OPT_OUT, gppSid: [7] },
    kept: false,
    code: 'gpp',
    says: 'GPP section usnat does not allow sharing ids with third parties (SaleOptOut=1)',
  },
  {
    name: 'GPP: gpp_sid names a section the string does not hold',
    eid: ID5,
    partner: DSP_A,
    consent: { gpp: USNAT_FINE, gppSid: [8] },
    kept: false,
    code: 'gpp',
    says: 'gpp_sid names section 8, which the GPP string does not hold',
  },
  {
    name: 'GPP: a string that cannot be read',
    eid: ID5,
    partner: DSP_A,
    consent: { gpp: 'DBABzYA~garbage' },
    kept: false,
    code: 'gpp',
    says: 'its US sections may forbid sharing ids',
  },
  {
    name: 'GPC, no US section applies',
    eid: ID5,
    partner: DSP_A,
    consent: { gpc: true },
    kept: false,
    code: 'gpc',
    says: 'the browser signals Global Privacy Control',
  },
  {
    name: 'GPC, an applicable usnat section allows sharing',
    eid: ID5,
    partner: DSP_A,
    consent: { gpc: true, gpp: USNAT_FINE, gppSid: [7] },
    kept: true,
    code: 'no-rule',
    says: 'every partner receives it',
  },
  {
    name: 'GPC, the policy does not enforce it',
    eid: ID5,
    partner: DSP_A,
    consent: { gpc: true },
    tcf: { gpc: false },
    kept: true,
    code: 'no-rule',
    says: 'every partner receives it',
  },
];

const configOf = (row: Row): ForwardingPolicyConfig => ({
  permissions: row.permissions ?? [],
  consent: { ...row.tcf, enforce: row.consent !== null, allowSources: row.allowSources ?? [] },
});
const callOf = (row: Row): AdCall => ({
  endpoint: 'ac',
  formats: [{ id: 1 }],
  eids: [row.eid],
  consent: row.consent ?? {},
  issues: [],
});

describe('the forwarding rule, one eid for one partner', () => {
  test('the table covers every reason code, kept and removed', () => {
    expect(rows.length).toBeGreaterThanOrEqual(25);
    const codes = new Set(rows.map((r) => `${r.code} ${r.kept}`));
    for (const code of ['no-rule true', 'rule true', 'rule false', 'dmp false', 'allow-source true'])
      expect(codes).toContain(code);
    for (const code of ['gdpr', 'usp', 'gpp', 'gpc']) expect(codes).toContain(`${code} false`);
  });

  test.each(rows.map((r) => [r.name, r] as const))('%s', (_, row) => {
    const [decision] = pureDecisions(configOf(row), callOf(row), row.partner);
    expect({ kept: decision.kept, code: decision.reason.code, rule: decision.reason.rule }).toEqual({
      kept: row.kept,
      code: row.code,
      rule: row.rule,
    });
    expect(decision.reason.message).toContain(row.says);
    // A policy says the same, and sends what it says.
    const policy = createForwardingPolicy(configOf(row));
    const [explained] = policy.explain(callOf(row), [row.partner]).partners;
    expect(row.kept ? explained.kept : explained.removed).toEqual([
      { index: 0, eid: row.eid, reason: decision.reason },
    ]);
    expect(policy.eidsFor(callOf(row), row.partner)).toEqual(row.kept ? [row.eid] : []);
  });
});
