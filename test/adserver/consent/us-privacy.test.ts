// US state privacy and GDPR applicability on the server, from real GET ad calls: each case a call forwarded eids on
// before the MSPA rules, now withheld with the signal and field that decided (docs/wire-format.md#us-state-privacy).
import { describe, expect, test } from 'vitest';
import { GppModel } from '@iabgpp/cmpapi';
import {
  buildBidRequest,
  createDecisionLog,
  createForwardingPolicy,
  createReport,
  parseAdCall,
} from '../../../src/adserver/index.js';
import type { AdCall, DemandPartner } from '../../../src/adserver/index.js';
import { usDenial } from '../../../src/core/index.js';
import { ID5, UID2, b64url } from '../fixtures.js';

const EIDS = [ID5, UID2];
const DSP: DemandPartner = { id: 'dsp-a', gvlVendorId: 131 };
const policy = createForwardingPolicy();
const get = (params: Record<string, string>, headers: Record<string, string> = {}): AdCall =>
  parseAdCall({ url: `/ac?${new URLSearchParams({ nwid: '1', eids: b64url(EIDS), ...params })}`, headers });
const sent = (c: AdCall) => buildBidRequest(c, DSP, { policy }).user?.eids ?? [];
const why = (c: AdCall) => policy.explain(c, [DSP]).partners[0].consent?.reason;

/** A GPP string with the given fields set in each section, encoded by @iabgpp/cmpapi. */
function gpp(fields: Record<string, Record<string, unknown>>): string {
  const m = new GppModel();
  for (const [section, values] of Object.entries(fields))
    for (const [k, v] of Object.entries(values)) m.setFieldValue(section, k, v);
  return m.encode();
}
/** Every notice given, opted in: sharing allowed. */
const OPTED_IN = {
  SharingNotice: 1,
  SaleOptOutNotice: 1,
  SharingOptOutNotice: 1,
  TargetedAdvertisingOptOutNotice: 1,
  SaleOptOut: 2,
  SharingOptOut: 2,
  TargetedAdvertisingOptOut: 2,
};

describe('US state privacy on the server', () => {
  test.each([
    ['DBABLA~BAAAAAAAAZA.QA', '7', 'gpp usnat MspaServiceProviderMode=1'],
    ['DBABLA~BAAAAAAAAQA.YA', '7', 'gpp usnat Gpc=1'],
    ['DBABBg~BAAAAABk.QA', '8', 'gpp usca MspaServiceProviderMode=1'],
    ['DBABTA~1yyn', '6', 'gpp uspv1 OptOutSale=Y'],
  ])('gpp=%s gpp_sid=%s: eids withheld (%s)', (g, sid, reason) => {
    const c = get({ gpp: g, gpp_sid: sid });
    expect(sent(c)).toEqual([]);
    expect(why(c)).toBe(reason);
  });

  test.each([
    [{ ...OPTED_IN, SaleOptOutNotice: 2 }, 'SaleOptOutNotice=2'],
    [{ ...OPTED_IN, SharingOptOutNotice: 0 }, 'SharingOptOut=2, SharingOptOutNotice=0'],
    [{ ...OPTED_IN, SharingNotice: 0 }, 'SharingOptOut=2, SharingNotice=0'],
    [{ ...OPTED_IN, PersonalDataConsents: 2 }, 'PersonalDataConsents=2'],
    [{ ...OPTED_IN, KnownChildSensitiveDataConsents: [0, 1] }, 'KnownChildSensitiveDataConsents[1]=1'],
    [{ ...OPTED_IN, SensitiveDataProcessing: [0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0] }, 'SensitiveDataProcessing[2]=1'],
    [{ ...OPTED_IN, SensitiveDataProcessing: [2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0] }, 'SensitiveDataProcessing[0]=2'],
  ])('usnat %j: withheld (%s)', (fields, reason) => {
    expect(why(get({ gpp: gpp({ usnat: fields }), gpp_sid: '7' }))).toBe(`gpp usnat ${reason}`);
  });

  test('every notice given and opted in: eids go; a second applicable section can still refuse', () => {
    expect(sent(get({ gpp: gpp({ usnat: OPTED_IN }), gpp_sid: '7' }))).toEqual(EIDS);
    const both = gpp({ usnat: OPTED_IN, usco: { SaleOptOut: 1 } });
    expect(sent(get({ gpp: both, gpp_sid: '7' }))).toEqual(EIDS);
    expect(why(get({ gpp: both, gpp_sid: '7,10' }))).toBe('gpp usco SaleOptOut=1');
  });

  test('the newer states are read as the national section (Florida, Oregon, Maryland)', () => {
    expect(why(get({ gpp: gpp({ usfl: { SaleOptOut: 1 } }), gpp_sid: '13' }))).toBe('gpp usfl SaleOptOut=1');
    expect(usDenial('usor', { Version: 1, SensitiveDataProcessing: [0, 0, 0, 0, 2] })).toBe(
      'SensitiveDataProcessing[4]=2',
    );
    expect(usDenial('usmd', { MspaVersion: 1, MspaMode: 2 })).toBe('MspaServiceProviderMode=1');
    expect(usDenial('usmd', { MspaVersion: 1, MspaMode: 1, ProcessingNotice: 2 })).toBe('SharingNotice=2');
  });

  test('a section named in gpp_sid that the string lacks, or that eidkit cannot read, fails closed', () => {
    const usnat = gpp({ usnat: OPTED_IN });
    expect(why(get({ gpp: usnat, gpp_sid: '8' }))).toBe('gpp unreadable');
    expect(policy.explain(get({ gpp: usnat, gpp_sid: '28' }), [DSP]).partners[0].consent?.message).toMatch(
      /names section 28/,
    );
    expect(why(get({ gpp_sid: '7' }))).toBe('gpp unreadable');
    // Canada's TCF section is not enforced.
    expect(sent(get({ gpp: usnat, gpp_sid: '5' }))).toEqual(EIDS);
  });

  test('US Privacy reads like the peers: a valid string, either case; an invalid one says nothing', () => {
    expect(why(get({ us_privacy: '1nyn' }))).toBe('usp us_privacy[2]=Y');
    expect(sent(get({ us_privacy: '2YYY' }))).toEqual(EIDS);
    expect(sent(get({ us_privacy: '1YNN' }))).toEqual(EIDS);
  });

  test('Global Privacy Control (gpc=1, Sec-GPC: 1) withholds, unless an applicable GPP US section speaks', () => {
    expect(why(get({ gpc: '1' }))).toBe('gpc gpc=1');
    expect(why(get({}, { 'sec-gpc': '1' }))).toBe('gpc gpc=1');
    expect(get({}, { 'sec-gpc': '1' }).consent.gpc).toBe(true);
    expect(sent(get({ gpc: '0' }))).toEqual(EIDS);
    expect(sent(get({ gpc: '1', gpp: gpp({ usnat: OPTED_IN }), gpp_sid: '7' }))).toEqual(EIDS);
    expect(sent(get({ gpc: '1' }))).toEqual([]);
    const off = createForwardingPolicy({ consent: { gpc: false } });
    expect(buildBidRequest(get({ gpc: '1' }), DSP, { policy: off }).user?.eids).toEqual(EIDS);
    // Passed on to partners: OpenRTB 2.6 `regs.gpc`, and `regs.ext.gpc` as Prebid Server writes it.
    expect(buildBidRequest(get({ gpc: '1' }), DSP).regs).toMatchObject({ gpc: 1, ext: { gpc: '1' } });
  });
});

describe('GDPR applies when gpp_sid names the EU section', () => {
  test('gdpr=0 with gpp_sid=2, or gpp_sid=2 alone, without a TC string: withheld', () => {
    expect(why(get({ gdpr: '0', gpp_sid: '2' }))).toBe('tcf missing');
    expect(why(get({ gpp_sid: '2' }))).toBe('tcf missing');
    expect(sent(get({ gdpr: '0' }))).toEqual(EIDS);
  });
});

describe('every decision explained: the decision log and the report', () => {
  const partners: DemandPartner[] = [DSP, { id: 'dsp-b', gvlVendorId: 45 }];
  const permissive = createForwardingPolicy({
    permissions: [{ source: 'uidapi.com', partners: ['dsp-a'] }],
  });

  test('a log line per partner per sampled call, with the signal and field that decided', () => {
    const lines: string[] = [];
    const log = createDecisionLog({ write: (l) => lines.push(l), sampleRate: 0.5, random: () => 0.2 });
    const c = get({ gpp: 'DBABLA~BAAAAAAAAQA.YA', gpp_sid: '7' });
    log.record(c, permissive.explain(c, partners), new Date('2026-11-28T10:00:00Z'));
    expect(lines.map((l) => JSON.parse(l))).toEqual([
      {
        time: '2026-11-28T10:00:00.000Z',
        networkId: 1,
        partner: 'dsp-a',
        consent: { code: 'gpp', reason: 'gpp usnat Gpc=1' },
        sent: [],
        withheld: [
          { source: 'id5-sync.com', code: 'gpp', reason: 'gpp usnat Gpc=1' },
          { source: 'uidapi.com', code: 'gpp', reason: 'gpp usnat Gpc=1' },
        ],
      },
      {
        time: '2026-11-28T10:00:00.000Z',
        networkId: 1,
        partner: 'dsp-b',
        consent: { code: 'gpp', reason: 'gpp usnat Gpc=1' },
        sent: [],
        withheld: [
          { source: 'id5-sync.com', code: 'gpp', reason: 'gpp usnat Gpc=1' },
          { source: 'uidapi.com', code: 'rule', reason: 'permissions[0]' },
        ],
      },
    ]);
    const skipped = createDecisionLog({ write: (l) => lines.push(l), sampleRate: 0.1, random: () => 0.2 });
    expect(skipped.record(c, permissive.explain(c, partners))).toEqual([]);
    expect(() => createDecisionLog({ write: () => {}, sampleRate: 2 })).toThrow(/sampleRate/);
  });

  test('the report counts eids sent and withheld per partner, provider and reason (JSON and CSV)', () => {
    const report = createReport();
    const at = new Date('2026-11-28T10:00:00Z');
    for (const c of [get({}), get({ gpc: '1' }), get({ gpp: 'DBABLA~BAAAAAAAAZA.QA', gpp_sid: '7' })]) {
      report.add(c, at);
      report.addForwarding(c, permissive.explain(c, partners), at);
    }
    const row = report.toJSON().rows[0];
    expect(row.calls).toBe(3);
    expect(row.forwarding).toEqual([
      {
        partner: 'dsp-a',
        providerId: 2,
        providerName: 'ID5',
        sent: 1,
        withheld: { 'gpc gpc=1': 1, 'gpp usnat MspaServiceProviderMode=1': 1 },
      },
      expect.objectContaining({ partner: 'dsp-a', providerName: 'Unified ID 2.0', sent: 1 }),
      expect.objectContaining({ partner: 'dsp-b', providerName: 'ID5', sent: 1 }),
      expect.objectContaining({ partner: 'dsp-b', sent: 0, withheld: { 'permissions[0]': 3 } }),
    ]);
    expect(report.toCSV()).toMatch(
      /,Eids Withheld,"?dsp-b\|\d+\|permissions\[0\]"?,.* withheld from dsp-b: permissions\[0\],3\r\n/,
    );
  });
});
