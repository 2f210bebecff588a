// @vitest-environment happy-dom
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { CmpApi } from '@iabtcf/cmpapi';
import { CmpApi as GppCmpApi } from '@iabgpp/cmpapi';
import { consentParams, hasLegalBasis, mayRunModule } from '../../src/tag/consent-rules.js';
import {
  createCmpCaller,
  createConsentExtension,
  createConsentReader,
  resetConsentReader,
} from '../../src/tag/consent.js';
import { builtinExtensions } from '../../src/tag/builtins.js';
import { installTag } from '../../src/tag/tag.js';
import { eidsParam, fakeWindow } from './helpers.js';
import { gppDenial } from '../../src/tag/modules/_module.js';
import { fakeHost, gdprState, resetPage, tcString } from './modules/_host.js';

const w = window as any;
beforeEach(() => {
  resetPage();
  resetConsentReader();
});
afterEach(() => resetPage());

describe('consent rules', () => {
  test('a module runs where GDPR does not apply and nobody opted out', () => {
    expect(mayRunModule({ ready: true }, 131)).toBe(true);
    expect(mayRunModule({ ready: true, gdprApplies: false }, 131)).toBe(true);
  });
  test('where GDPR applies a module needs purpose 1 and its own vendor consent', () => {
    expect(mayRunModule(gdprState([1, 2], [131]), 131)).toBe(true);
    expect(mayRunModule(gdprState([2], [131]), 131)).toBe(false);
    expect(mayRunModule(gdprState([1, 2], [97]), 131)).toBe(false);
    expect(mayRunModule({ ...gdprState([1], [131]), tcString: undefined }, 131)).toBe(false);
  });
  test('a US denial, an opt-out of sale or an unanswered consent platform stops every module', () => {
    expect(mayRunModule({ ready: true, usDenial: 'gpp usnat SaleOptOut=1' }, 45)).toBe(false);
    expect(mayRunModule({ ready: true, usDenial: '' }, 45)).toBe(true);
    expect(mayRunModule({ ready: true, usPrivacy: '1nyn' }, 45)).toBe(false);
    // An invalid US Privacy string says nothing (as Prebid Server reads it).
    expect(mayRunModule({ ready: true, usPrivacy: '2YYY' }, 45)).toBe(true);
    expect(mayRunModule({ ready: true, usPrivacy: '1YYN' }, 45)).toBe(false);
    expect(mayRunModule({ ready: true, usPrivacy: '1YNN' }, 45)).toBe(true);
    expect(mayRunModule({ ready: false }, 45)).toBe(false);
  });
  test('eids need a legal basis for vendor 45 and one of purposes 2 to 10 where GDPR applies', () => {
    expect(hasLegalBasis({ ready: true })).toBe(true);
    expect(hasLegalBasis(gdprState([1, 2], [45]))).toBe(true);
    expect(hasLegalBasis(gdprState([1], [45]))).toBe(false);
    expect(hasLegalBasis(gdprState([1, 2], [131]))).toBe(false);
    expect(hasLegalBasis({ ...gdprState([], []), vendorLI: { 45: true }, purposeLI: { 10: true } })).toBe(true);
    expect(hasLegalBasis({ ready: false })).toBe(false);
  });
  test('the call parameters carry every known signal and nothing unknown', () => {
    expect(consentParams({ ready: true })).toEqual({});
    expect(
      consentParams({
        ready: true,
        gdprApplies: true,
        tcString: 'CQ',
        gppString: 'DBA',
        gppSid: [7, 8],
        usPrivacy: '1YNN',
      }),
    ).toEqual({
      gdpr: '1',
      gdpr_consent: 'CQ',
      gpp: 'DBA',
      gpp_sid: '7,8',
      us_privacy: '1YNN',
    });
    expect(consentParams({ ready: true, gdprApplies: false })).toEqual({ gdpr: '0' });
  });
});

describe('ad calls with the built-in consent reader', () => {
  test("with no platform the call leaves after the page's synchronous code, before any timer, as it was made", async () => {
    const { win, sent } = fakeWindow();
    const sas = installTag(win, 'https://cdn.example/tag/1234/sas.js', builtinExtensions)!;
    sas.setup({ domain: 'https://ads.example', uid: 'user-a' });
    sas.setEids([{ source: 'id5-sync.com', uids: [{ id: 'ID5-a' }] }]);
    const call = sas.call('std', {});
    // A logout in the same tick: the call made before it still carries user a's ids.
    sas.setEids(null);
    sas.setup({ uid: 'user-b' });
    expect(sent).toHaveLength(0);
    // Sent before the first timer runs: the reader answers at once, the request leaves in promise callbacks.
    const atTimer = await new Promise((r) => setTimeout(() => r(sent.length), 0));
    expect(atTimer).toBe(1);
    expect(new URL(sent[0].url).searchParams.get('uid')).toBe('user-a');
    expect(eidsParam(sent[0].url)).toEqual([{ source: 'id5-sync.com', uids: [{ id: 'ID5-a' }] }]);
    expect((await call).eids).toEqual([{ source: 'id5-sync.com', uids: [{ id: 'ID5-a' }] }]);
    expect(sas.getEids()).toEqual([]);
  });
});

describe('consent reader', () => {
  test('with no consent platform it answers at once with no signals', async () => {
    const c = await createConsentReader(w).read(1000);
    expect(c).toEqual({ ready: true });
    expect(consentParams(c)).toEqual({});
  });

  test('reads purposes and vendors from a real TCF CMP (@iabtcf/cmpapi)', async () => {
    const cmp = new CmpApi(10, 1, true);
    const tc = tcString([1, 2, 7], [45, 131]);
    cmp.update(tc, false);
    const c = await createConsentReader(w).read(1000);
    expect(c.ready).toBe(true);
    expect(c.gdprApplies).toBe(true);
    expect(c.tcString).toBe(tc);
    expect(mayRunModule(c, 131)).toBe(true);
    expect(mayRunModule(c, 97)).toBe(false);
    expect(hasLegalBasis(c)).toBe(true);
  });

  test('a CMP saying GDPR does not apply sends gdpr=0 and lets modules run', async () => {
    new CmpApi(10, 1, true).update(null);
    const c = await createConsentReader(w).read(1000);
    expect(consentParams(c)).toEqual({ gdpr: '0' });
    expect(mayRunModule(c, 131)).toBe(true);
  });

  test('waits for the user decision while the CMP shows its UI, and follows later changes', async () => {
    const cmp = new CmpApi(10, 1, true);
    cmp.update('', true);
    const reader = createConsentReader(w);
    const first = reader.read(1000);
    setTimeout(() => cmp.update(tcString([1, 2], [45, 97]), false), 30);
    const c = await first;
    expect(mayRunModule(c, 97)).toBe(true);
    cmp.update(tcString([1], []), false);
    const later = await reader.read(1000);
    expect(mayRunModule(later, 97)).toBe(false);
    expect(hasLegalBasis(later)).toBe(false);
  });

  test('a silent CMP holds the first read at most the bound, fails closed, and later reads do not wait', async () => {
    w.__tcfapi = () => undefined;
    const reader = createConsentReader(w);
    const t0 = performance.now();
    const c = await reader.read(80);
    const waited = performance.now() - t0;
    expect(waited).toBeGreaterThanOrEqual(70);
    expect(waited).toBeLessThan(400);
    expect(c.ready).toBe(false);
    expect(hasLegalBasis(c)).toBe(false);
    const t1 = performance.now();
    await reader.read(80);
    expect(performance.now() - t1).toBeLessThan(40);
  });

  test('a CMP that throws counts as one that never answers', async () => {
    w.__tcfapi = () => {
      throw new Error('broken CMP');
    };
    const c = await createConsentReader(w).read(30);
    expect(c.ready).toBe(false);
    expect(mayRunModule(c, 45)).toBe(false);
  });

  test('US Privacy: the third character Y is an opt-out of sale', async () => {
    let usp = '1YYN';
    w.__uspapi = (cmd: string, v: number, cb: (d: unknown, ok: boolean) => void) =>
      cb({ version: 1, uspString: usp }, true);
    const reader = createConsentReader(w);
    const c = await reader.read(100);
    expect(mayRunModule(c, 131)).toBe(false);
    expect(hasLegalBasis(c)).toBe(true);
    expect(consentParams(c)).toEqual({ us_privacy: '1YYN' });
    usp = '1YNN';
    expect(mayRunModule(await reader.read(100), 131)).toBe(true);
  });

  test('GPP from a real CMP (@iabgpp/cmpapi): string and sections on the call, a US sale opt-out stops modules', async () => {
    w.__gpp = () => []; // the CMP's stub, which its API replaces
    const gpp = new GppCmpApi(10, 1);
    gpp.setFieldValue('usnat', 'SaleOptOutNotice', 1);
    gpp.setFieldValue('usnat', 'SaleOptOut', 1);
    gpp.setApplicableSections([7]);
    gpp.fireSectionChange('usnat');
    gpp.setSignalStatus('ready' as any);
    gpp.fireSectionChange('usnat');
    const c = await createConsentReader(w).read(500);
    expect(c.ready).toBe(true);
    expect(c.gppString).toBe(gpp.getGppString());
    expect(consentParams(c).gpp_sid).toBe('7');
    expect(await gppDenial(c, createCmpCaller(w))).toBe('gpp usnat SaleOptOut=1');
  });

  test('GPP with every notice given and no opt-out lets modules run', async () => {
    w.__gpp = () => []; // the CMP's stub, which its API replaces
    const gpp = new GppCmpApi(10, 1);
    for (const f of ['SharingNotice', 'SaleOptOutNotice', 'SharingOptOutNotice', 'TargetedAdvertisingOptOutNotice'])
      gpp.setFieldValue('usnat', f, 1);
    gpp.setFieldValue('usnat', 'SaleOptOut', 2);
    gpp.setApplicableSections([7]);
    gpp.setSignalStatus('ready' as any);
    gpp.fireSectionChange('usnat');
    const c = await createConsentReader(w).read(500);
    expect(await gppDenial(c, createCmpCaller(w))).toBe('');
    expect(mayRunModule(c, 131)).toBe(true);
  });

  test.each([
    ['usnat', 7, 'MspaServiceProviderMode', 1, 'gpp usnat MspaServiceProviderMode=1'],
    ['usnat', 7, 'Gpc', true, 'gpp usnat Gpc=1'],
    ['usnat', 7, 'SaleOptOutNotice', 2, 'gpp usnat SaleOptOutNotice=2'],
    ['usnat', 7, 'PersonalDataConsents', 2, 'gpp usnat PersonalDataConsents=2'],
    ['usca', 8, 'MspaServiceProviderMode', 1, 'gpp usca MspaServiceProviderMode=1'],
    ['usva', 9, 'KnownChildSensitiveDataConsents', 1, 'gpp usva KnownChildSensitiveDataConsents[0]=1'],
  ])('a real GPP CMP with %s (%i) %s = %s stops modules (%s)', async (section, sid, field, value, why) => {
    w.__gpp = () => [];
    const gpp = new GppCmpApi(10, 1);
    gpp.setFieldValue(section, field, value);
    gpp.setApplicableSections([sid]);
    gpp.setSignalStatus('ready' as any);
    gpp.fireSectionChange(section);
    const c = await createConsentReader(w).read(500);
    expect(await gppDenial(c, createCmpCaller(w))).toBe(why);
  });

  test("the browser's Global Privacy Control goes on the call as gpc=1", async () => {
    Object.defineProperty(navigator, 'globalPrivacyControl', { value: true, configurable: true });
    try {
      const c = await createConsentReader(w).read(50);
      expect(c.gpc).toBe(true);
      expect(consentParams(c)).toEqual({ gpc: '1' });
    } finally {
      delete (navigator as any).globalPrivacyControl;
    }
    expect((await createConsentReader(w).read(50)).gpc).toBeUndefined();
  });
});

describe('US privacy for modules', () => {
  const section =
    (name: string, fields: Record<string, unknown>) =>
    (cmd: string, cb: (v: unknown, ok: boolean) => void, p: string) =>
      cmd === 'getSection' && cb(p === name ? fields : null, p === name);
  test('a uspv1 section inside GPP with OptOutSale Y (either case) refuses', async () => {
    w.__gpp = section('uspv1', { Version: 1, Notice: 'y', OptOutSale: 'y', LspaCovered: 'n' });
    expect(await gppDenial({ ready: true, gppSid: [6] }, createCmpCaller(w))).toBe('gpp uspv1 OptOutSale=Y');
    expect(await gppDenial({ ready: true, gppSid: [2] }, createCmpCaller(w))).toBe('');
  });
  test('a GPP API that throws, a section it cannot give, or an unknown section id refuses (fail closed)', async () => {
    w.__gpp = () => {
      throw new Error('broken');
    };
    expect(await gppDenial({ ready: true, gppSid: [8] }, createCmpCaller(w))).toBe('gpp usca GPP API failed');
    w.__gpp = section('usnat', { Version: 1 });
    expect(await gppDenial({ ready: true, gppSid: [8] }, createCmpCaller(w))).toBe('gpp usca unreadable');
    expect(await gppDenial({ ready: true, gppSid: [31] }, createCmpCaller(w))).toBe('gpp 31 section 31 unknown');
  });
  test('a section given as subsections (core, GPC) is read as one', async () => {
    w.__gpp = section('usco', [
      { Version: 1, SaleOptOut: 0 },
      { GpcSegmentType: 1, Gpc: true },
    ]);
    expect(await gppDenial({ ready: true, gppSid: [10] }, createCmpCaller(w))).toBe('gpp usco Gpc=1');
  });
  test('a module does not run under a GPP state-section opt-out, nor under GPC without a US section', async () => {
    w.__gpp = section('usca', { Version: 1, SaleOptOut: 1 });
    (window as any).__sasop = { modules: ['probe'] };
    const { defineModule } = await import('../../src/tag/modules/_module.js');
    const ext = defineModule({
      name: 'probe',
      gvl: 45,
      start: () => ({ eids: () => [{ source: 'x.example', uids: [{ id: '1' }] }] }),
    });
    const host = fakeHost({}, { ready: true, gppString: 'DBABBg~xx', gppSid: [8] });
    ext.setup!(host);
    expect(await ext.beforeCall!({ type: 'std' })).toEqual({});
    host.state = { ready: true };
    expect((await ext.beforeCall!({ type: 'std' }))?.eids).toHaveLength(1);
    host.state = { ready: true, gpc: true };
    expect(await ext.beforeCall!({ type: 'std' })).toEqual({});
  });
});

describe('consent extension', () => {
  test('is built into the core tag', () => {
    expect(builtinExtensions.map((e) => e.name)).toContain('consent');
  });

  test('puts the signals on the call and blocks eids without a legal basis', async () => {
    new CmpApi(10, 1, true).update(tcString([1], [131]), false);
    const ext = createConsentExtension();
    const host = fakeHost({ eidsTimeout: 300 }, null);
    ext.setup!(host);
    const out = await ext.beforeCall!({ type: 'std' });
    expect(out?.params).toMatchObject({ gdpr: '1' });
    expect(out?.params?.gdpr_consent).toMatch(/^C/);
    expect(out?.blockEids).toBe(true);
  });

  test('installs host.consent for modules when the host has none', async () => {
    const ext = createConsentExtension();
    const host = fakeHost({}, null);
    ext.setup!(host);
    expect(typeof host.consent).toBe('function');
    expect(await host.consent!()).toMatchObject({ ready: true });
  });

  test('resolves before the host bound even when the CMP is silent', async () => {
    w.__tcfapi = () => undefined;
    const ext = createConsentExtension();
    const host = fakeHost({ eidsTimeout: 100 }, null);
    ext.setup!(host);
    const t0 = performance.now();
    const out = await ext.beforeCall!({ type: 'std' });
    expect(performance.now() - t0).toBeLessThan(100);
    expect(out?.blockEids).toBe(true);
  });
});
