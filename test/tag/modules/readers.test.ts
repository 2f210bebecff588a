// @vitest-environment happy-dom
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { defineModule } from '../../../src/tag/modules/_module.js';
import { criteoModule } from '../../../src/tag/modules/criteo.js';
import { uid2Module } from '../../../src/tag/modules/uid2.js';
import { prebidModule } from '../../../src/tag/modules/prebid.js';
import { callOnce, fakeHost, gdprState, operatorEnables, resetPage } from './_host.js';

const w = window as any;
beforeEach(() => {
  resetPage();
  operatorEnables('criteo', 'uid2', 'prebid');
});
afterEach(() => resetPage());

const criteo = () => defineModule(criteoModule);
const uid2 = () => defineModule(uid2Module);
const prebid = () => defineModule(prebidModule);
// Readers stamp the page as inserter (happy-dom's page is on localhost) and leave mm to the provider: unset.
const PAGE = { inserter: 'localhost' };

describe('criteo reader', () => {
  test('transfers the ad-side id when the provider script is on the page', async () => {
    w.criteo_pubtag = {};
    document.cookie = 'cto_bidid=BID123;path=/';
    document.cookie = 'cto_bundle=BUNDLE;path=/';
    expect((await callOnce(criteo(), fakeHost())).eids).toEqual([
      { source: 'criteo.com', uids: [{ id: 'BID123', atype: 1 }], ...PAGE },
    ]);
  });

  test('reads localStorage too, and never sends the marketing-side bundle', async () => {
    w.Criteo = {};
    localStorage.setItem('cto_bidid', 'BIDLS');
    localStorage.setItem('cto_bundle', 'BUNDLE');
    const out = await callOnce(criteo(), fakeHost());
    expect(out.eids).toEqual([{ source: 'criteo.com', uids: [{ id: 'BIDLS', atype: 1 }], ...PAGE }]);
    expect(JSON.stringify(out)).not.toContain('BUNDLE');
  });

  test('sends nothing when the provider script is not on the page, even with its cookie', async () => {
    document.cookie = 'cto_bidid=BID123;path=/';
    expect((await callOnce(criteo(), fakeHost())).eids).toEqual([]);
  });

  test("needs Criteo's vendor consent where GDPR applies", async () => {
    w.criteo_pubtag = {};
    document.cookie = 'cto_bidid=BID123;path=/';
    expect(await callOnce(criteo(), fakeHost({}, gdprState([1, 2], [45])))).toEqual({});
    expect((await callOnce(criteo(), fakeHost({}, gdprState([1, 2], [45, 91])))).eids).toHaveLength(1);
  });
});

describe('unified id reader', () => {
  test('reads the UID 2.0 SDK token as uidapi.com', async () => {
    w.__uid2 = { getAdvertisingToken: () => 'UID2TOKEN' };
    expect((await callOnce(uid2(), fakeHost())).eids).toEqual([
      { source: 'uidapi.com', uids: [{ id: 'UID2TOKEN', atype: 3 }], ...PAGE },
    ]);
  });

  test('reads the European SDK token as euid.eu, waiting for its async getter', async () => {
    w.__euid = {
      getAdvertisingToken: () => undefined,
      getAdvertisingTokenAsync: () => new Promise((r) => setTimeout(() => r('EUIDTOKEN'), 5)),
    };
    expect((await callOnce(uid2(), fakeHost())).eids).toEqual([
      { source: 'euid.eu', uids: [{ id: 'EUIDTOKEN', atype: 3 }], ...PAGE },
    ]);
  });

  test('where GDPR applies only the European id is sent, and only with vendor 21 consent', async () => {
    w.__uid2 = { getAdvertisingToken: () => 'UID2TOKEN' };
    w.__euid = { getAdvertisingToken: () => 'EUIDTOKEN' };
    expect((await callOnce(uid2(), fakeHost({}, gdprState([1, 2], [21])))).eids).toEqual([
      { source: 'euid.eu', uids: [{ id: 'EUIDTOKEN', atype: 3 }], ...PAGE },
    ]);
    expect(await callOnce(uid2(), fakeHost({}, gdprState([1, 2], [45])))).toEqual({});
  });

  test('no SDK on the page, or one that throws: nothing', async () => {
    expect((await callOnce(uid2(), fakeHost())).eids).toEqual([]);
    w.__uid2 = {
      getAdvertisingToken: () => {
        throw new Error('sdk');
      },
    };
    expect((await callOnce(uid2(), fakeHost())).eids).toEqual([]);
  });
});

describe('header-bidding bridge', () => {
  const eids = [{ source: 'pubcid.org', uids: [{ id: 'shared-1', atype: 1 }] }];

  test('reads pbjs.getUserIdsAsEids() before the call', async () => {
    w.pbjs = { getUserIdsAsEids: () => eids };
    expect((await callOnce(prebid(), fakeHost())).eids).toEqual(eids);
  });

  test('waits for getUserIdsAsync when the library has it', async () => {
    let ready = false;
    w.pbjs = {
      getUserIdsAsync: () =>
        new Promise((r) =>
          setTimeout(() => {
            ready = true;
            r({});
          }, 5),
        ),
      getUserIdsAsEids: () => (ready ? eids : []),
    };
    expect((await callOnce(prebid(), fakeHost())).eids).toEqual(eids);
  });

  test('reads another global when modules.prebid.global names it', async () => {
    w.myHb = { getUserIdsAsEids: () => eids };
    expect((await callOnce(prebid(), fakeHost({ modules: { prebid: { global: 'myHb' } } }))).eids).toEqual(eids);
    delete w.myHb;
  });

  test('refuses a global that is not an identifier', async () => {
    const host = fakeHost({ modules: { prebid: { global: 'window.pbjs' } } });
    expect(await callOnce(prebid(), host)).toEqual({});
    expect(host.logs.join('\n')).toContain('global must be');
  });

  test('no library on the page: nothing', async () => {
    expect((await callOnce(prebid(), fakeHost())).eids).toEqual([]);
  });

  test('an opt-out of sale stops the bridge', async () => {
    w.pbjs = { getUserIdsAsEids: () => eids };
    expect(await callOnce(prebid(), fakeHost({}, { ready: true, usDenial: 'gpp usnat SaleOptOut=1' }))).toEqual({});
  });
});
