// @vitest-environment happy-dom
// Consent where the tag really runs: in a frame below the consent platform (IAB locator frames and
// postMessage protocol), with a platform that loads late, and with GDPR signalled only through GPP's EU section.
// Cross-origin frames in real Chromium: test/e2e/consent-frames.spec.ts.
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { CmpApi } from '@iabtcf/cmpapi';
import { CmpApi as GppCmpApi } from '@iabgpp/cmpapi';
import { consentParams, hasLegalBasis, mayRunModule } from '../../src/tag/consent-rules.js';
import { createCmpCaller, createConsentReader, resetConsentReader } from '../../src/tag/consent.js';
import { gppDenial } from '../../src/tag/modules/_module.js';
import { resetPage, tcString } from './modules/_host.js';

const w = window as any;
beforeEach(() => {
  resetPage();
  resetConsentReader();
});
afterEach(() => resetPage());

type Listener = (e: { data: unknown; source: unknown }) => void;

/**
 * A frame window below `top`: it has no consent API of its own; `top` holds the locator frame(s) and answers
 * `<api>Call` messages with `<api>Return` from `answer(api, command, parameter)` (undefined: stays silent).
 */
function frameBelow(
  answer: (api: string, command: string, parameter: unknown) => unknown,
  locators = ['__tcfapiLocator', '__gppLocator', '__uspapiLocator'],
) {
  const listeners: Listener[] = [];
  const frame: any = { frames: {}, addEventListener: (_: string, l: Listener) => listeners.push(l) };
  const top: any = {
    frames: Object.fromEntries(locators.map((n) => [n, {}])),
    posted: [] as unknown[],
    postMessage(msg: Record<string, any>) {
      top.posted.push(msg);
      const [key, call] = Object.entries(msg)[0];
      const api = key.replace(/Call$/, '');
      const value = answer(api, call.command, call.parameter);
      if (value !== undefined)
        setTimeout(() =>
          listeners.forEach((l) =>
            l({ data: { [api + 'Return']: { returnValue: value, success: true, callId: call.callId } }, source: top }),
          ),
        );
    },
  };
  top.top = top;
  frame.top = top;
  frame.parent = top;
  return { frame, top, deliver: (data: unknown, source: unknown) => listeners.forEach((l) => l({ data, source })) };
}

const tcfData = (tc: string, purposes: number[], vendors: number[]) => ({
  eventStatus: 'tcloaded',
  gdprApplies: true,
  tcString: tc,
  purpose: { consents: Object.fromEntries(purposes.map((p) => [p, true])), legitimateInterests: {} },
  vendor: { consents: Object.fromEntries(vendors.map((v) => [v, true])), legitimateInterests: {} },
});

describe('consent through locator frames', () => {
  test('a tag in a frame reads TCF, GPP and US Privacy from the top page with the IAB message protocol', async () => {
    const tc = tcString([1, 2], [45, 131]);
    const { frame, top } = frameBelow((api) =>
      api === '__tcfapi'
        ? tcfData(tc, [1, 2], [45, 131])
        : api === '__gpp'
          ? {
              pingData: {
                signalStatus: 'ready',
                gppString: 'DBABLA~BVQqAAAAAgA.QA',
                applicableSections: [7],
                sectionList: [7],
              },
            }
          : { version: 1, uspString: '1YNN' },
    );
    const c = await createConsentReader(frame).read(500);
    expect(consentParams(c)).toEqual({
      gdpr: '1',
      gdpr_consent: tc,
      gpp: 'DBABLA~BVQqAAAAAgA.QA',
      gpp_sid: '7',
      us_privacy: '1YNN',
    });
    expect(mayRunModule(c, 131)).toBe(true);
    expect(top.posted.map((m: object) => Object.keys(m)[0]).sort()).toEqual([
      '__gppCall',
      '__tcfapiCall',
      '__uspapiCall',
    ]);
    expect(top.posted.find((m: any) => m.__tcfapiCall).__tcfapiCall).toMatchObject({
      command: 'addEventListener',
      version: 2,
    });
  });

  test("a module asks the top page's GPP for its US sections through the same protocol", async () => {
    const { frame, top } = frameBelow(
      (api, command, parameter) =>
        api === '__gpp' && command === 'getSection'
          ? { Version: 1, SaleOptOutNotice: 1, SaleOptOut: parameter === 'usca' ? 1 : 2 }
          : undefined,
      ['__gppLocator'],
    );
    const call = createCmpCaller(frame);
    expect(await gppDenial({ ready: true, gppSid: [8] }, call)).toBe('gpp usca SaleOptOut=1');
    expect(await gppDenial({ ready: true, gppSid: [7] }, call)).toBe('');
    expect(top.posted.map((m: any) => m.__gppCall.parameter)).toEqual(['usca', 'usnat']);
  });

  test('finds the locator in the nearest ancestor that has it, past ancestors that do not', async () => {
    const { frame: middle } = frameBelow(
      (api) => (api === '__uspapi' ? { uspString: '1YYN' } : undefined),
      ['__uspapiLocator'],
    );
    const listeners: Listener[] = [];
    const child: any = {
      frames: {},
      parent: middle,
      top: middle.top,
      addEventListener: (_: string, l: Listener) => listeners.push(l),
    };
    // Answers reach the frame that asked: forward what the middle frame's listeners get.
    middle.addEventListener('message', (e: any) => listeners.forEach((l) => l(e)));
    const c = await createConsentReader(child).read(500);
    expect(c.usPrivacy).toBe('1YYN');
  });

  test('ignores answers from any other frame than the one asked', async () => {
    const { frame, top, deliver } = frameBelow(() => undefined, ['__uspapiLocator']);
    const reader = createConsentReader(frame);
    const first = reader.read(60);
    const { callId } = top.posted[0].__uspapiCall;
    deliver({ __uspapiReturn: { returnValue: { uspString: '1NNN' }, success: true, callId } }, { other: 'frame' });
    deliver('not json', top);
    deliver(null, top);
    expect((await first).usPrivacy).toBeUndefined();
    deliver({ __uspapiReturn: { returnValue: { uspString: '1YNN' }, success: true, callId } }, top);
    expect((await reader.read(60)).usPrivacy).toBe('1YNN');
  });

  test('never throws where the frame may not look at its ancestors (sandbox, SafeFrame)', async () => {
    const frame: any = { frames: {}, addEventListener: () => {} };
    Object.defineProperty(frame, 'top', {
      get: () => {
        throw new DOMException('Blocked a frame', 'SecurityError');
      },
    });
    Object.defineProperty(frame, 'parent', {
      get: () => {
        throw new DOMException('Blocked a frame', 'SecurityError');
      },
    });
    const c = await createConsentReader(frame).read(500);
    expect(c).toEqual({ ready: true });
    expect(createCmpCaller(frame)('__tcfapi', 'ping', 2, () => {})).toBeFalsy();
  });
});

describe('a consent platform that is late or silent', () => {
  test('a CMP that appears after the first call is asked on the next one, and its answer applies', async () => {
    const reader = createConsentReader(w);
    expect(await reader.read(200)).toEqual({ ready: true });
    new CmpApi(10, 1, true).update(tcString([1, 2], [45]), false);
    const c = await reader.read(500);
    expect(c.ready).toBe(true);
    expect(hasLegalBasis(c)).toBe(true);
    expect(c.tcString).toMatch(/^C/);
  });

  test('a locator frame that appears later is found on a later call', async () => {
    const tc = tcString([1, 2], [45]);
    const { frame, top } = frameBelow((api) => (api === '__tcfapi' ? tcfData(tc, [1, 2], [45]) : undefined), []);
    const reader = createConsentReader(frame);
    expect((await reader.read(100)).tcString).toBeUndefined();
    top.frames.__tcfapiLocator = {};
    expect((await reader.read(500)).tcString).toBe(tc);
  });

  test('a CMP that was silent is asked again, and its late answer is used from then on', async () => {
    let calls = 0;
    let ready: ((d: unknown, ok: boolean) => void) | undefined;
    w.__tcfapi = (cmd: string, v: number, cb: (d: unknown, ok: boolean) => void) => {
      calls++;
      ready = cb;
    };
    const reader = createConsentReader(w);
    const first = await reader.read(50);
    expect(first.ready).toBe(false);
    await reader.read(50);
    expect(calls).toBe(2);
    ready!(tcfData(tcString([1, 2], [45]), [1, 2], [45]), true);
    const later = await reader.read(50);
    expect(later.ready).toBe(true);
    expect(hasLegalBasis(later)).toBe(true);
    // Once it answered it is listened to, not asked again.
    await reader.read(50);
    expect(calls).toBe(2);
  });
});

describe('GDPR through GPP only (tcfeuv2)', () => {
  function gppWithEu(purposes: number[], vendors: number[]) {
    w.__gpp = () => []; // the CMP's stub, which its API replaces
    const gpp = new GppCmpApi(10, 1);
    gpp.setSectionString('tcfeuv2', tcString(purposes, vendors));
    gpp.setApplicableSections([2]);
    gpp.setSignalStatus('ready' as any);
    gpp.fireSectionChange('tcfeuv2');
    return gpp;
  }

  test('reads the TC string and consents from the EU section and applies the TCF rules', async () => {
    const gpp = gppWithEu([1, 2, 7], [45, 131]);
    const c = await createConsentReader(w).read(500);
    const params = consentParams(c);
    expect(params.gdpr).toBe('1');
    expect(params.gdpr_consent).toBe(gpp.getGppString().split('~')[1]);
    expect(params.gpp_sid).toBe('2');
    expect(hasLegalBasis(c)).toBe(true);
    expect(mayRunModule(c, 131)).toBe(true);
    expect(mayRunModule(c, 97)).toBe(false);
  });

  test('refused in the EU section: no legal basis, no module', async () => {
    gppWithEu([], []);
    const c = await createConsentReader(w).read(500);
    expect(c.gdprApplies).toBe(true);
    expect(hasLegalBasis(c)).toBe(false);
    expect(mayRunModule(c, 131)).toBe(false);
  });

  test('without purpose 1 a module does not run though eids may go (purpose 2 and vendor 45)', async () => {
    gppWithEu([2], [45, 131]);
    const c = await createConsentReader(w).read(500);
    expect(hasLegalBasis(c)).toBe(true);
    expect(mayRunModule(c, 131)).toBe(false);
  });

  test('a page that also has a TCF API is read from the TCF API', async () => {
    const tc = tcString([1], [131]);
    new CmpApi(10, 1, true).update(tc, false);
    gppWithEu([1, 2], [45, 131]);
    const c = await createConsentReader(w).read(500);
    expect(c.tcString).toBe(tc);
    expect(hasLegalBasis(c)).toBe(false);
  });
});
