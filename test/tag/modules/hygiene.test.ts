// @vitest-environment happy-dom
// Storage hygiene: a module switched off, or one consent does not allow, deletes what it stored, also on a later page
// view; never the provider's own entries.
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { defineModule, flagName } from '../../../src/tag/modules/_module.js';
import { identityLinkModule } from '../../../src/tag/modules/identityLink.js';
import { idLinkingModule } from '../../../src/tag/modules/idLinking.js';
import { criteoModule } from '../../../src/tag/modules/criteo.js';
import { uid2Module } from '../../../src/tag/modules/uid2.js';
import { prebidModule } from '../../../src/tag/modules/prebid.js';
import { MODULE_KEYS } from '../../../src/core/index.js';
import { saveItem } from '../../../src/tag/modules/_storage.js';
import { callOnce, fakeHost, gdprState, operatorEnables, resetPage, storageSnapshot } from './_host.js';

const w = window as any;
const HASH = 'a'.repeat(64);
const cookieNames = () => (document.cookie ? document.cookie.split('; ').map((c) => c.split('=')[0]) : []);

/** What earlier page views left: both modules' keys, and the providers' own entries (never ours to delete). */
function earlierVisit() {
  saveItem('localStorage', '_sas_hem', HASH, 864e5);
  saveItem('cookie', '_sas_hem', HASH, 864e5);
  saveItem(
    'localStorage',
    '_sas_idl',
    JSON.stringify({ id: 'ID5*cached', pd: '', gdpr: '', refreshAt: Date.now() + 864e5 }),
    864e5,
  );
  localStorage.setItem('_lr_env', btoa(JSON.stringify({ envelope: 'ENVELOPE' })));
  document.cookie = '_lr_env=abc;path=/';
  document.cookie = 'cto_bidid=BID;path=/';
}

const settings = { identityLink: { placementId: 1 }, idLinking: { url: 'http://127.0.0.1:9/g/v2' } };
const modules = () => [defineModule(identityLinkModule), defineModule(idLinkingModule)];

beforeEach(() => {
  resetPage();
  earlierVisit();
});
afterEach(() => resetPage());

describe('what modules store, and when it goes', () => {
  test('the table of stored keys is what each module declares', () => {
    for (const def of [identityLinkModule, idLinkingModule, criteoModule, uid2Module, prebidModule])
      expect(def.keys ?? [], def.name).toEqual(MODULE_KEYS[def.name] ?? []);
    expect(MODULE_KEYS).toEqual({ identityLink: ['_sas_hem'], idLinking: ['_sas_idl'] });
  });

  test.each([
    ['not enabled by the operator', () => operatorEnables('criteo'), {}],
    [
      'off by its window flag',
      () => {
        operatorEnables('identityLink', 'idLinking');
        w[flagName('identityLink')] = w[flagName('idLinking')] = true;
      },
      {},
    ],
    ['off in setup', () => operatorEnables('identityLink', 'idLinking'), { identityLink: false, idLinking: false }],
  ])(
    'a module %s deletes its keys, in localStorage and cookies, and leaves the providers’ own',
    async (_w, arrange, off) => {
      arrange();
      for (const ext of modules()) await callOnce(ext, fakeHost({ modules: { ...settings, ...off } }));
      const { local } = storageSnapshot();
      expect(Object.keys(local).sort()).toEqual(['_lr_env']);
      expect(cookieNames().sort()).toEqual(['_lr_env', 'cto_bidid']);
    },
  );

  test('a page view where consent does not allow the modules deletes what an earlier one stored', async () => {
    operatorEnables('identityLink', 'idLinking');
    // Storage (purpose 1) but neither LiveRamp (97) nor ID5 (131).
    for (const ext of modules())
      expect(await callOnce(ext, fakeHost({ modules: settings }, gdprState([1], [45])))).toEqual({});
    expect(Object.keys(storageSnapshot().local)).toEqual(['_lr_env']);
    expect(cookieNames().sort()).toEqual(['_lr_env', 'cto_bidid']);
  });

  test('a consent platform that has not answered yet deletes nothing', async () => {
    operatorEnables('identityLink', 'idLinking');
    for (const ext of modules()) await callOnce(ext, fakeHost({ modules: settings }, { ready: false }));
    expect(Object.keys(storageSnapshot().local).sort()).toEqual(['_lr_env', '_sas_hem', '_sas_idl']);
  });

  test('a window flag set while the page runs deletes the keys at the next call', async () => {
    operatorEnables('idLinking');
    const ext = defineModule(idLinkingModule);
    const out = await callOnce(ext, fakeHost({ modules: settings }));
    expect(out.eids?.map((e) => e.source)).toEqual(['id5-sync.com']);
    w[flagName('idLinking')] = true;
    expect(await ext.beforeCall!({ type: 'std' })).toEqual({});
    expect(storageSnapshot().local._sas_idl).toBeUndefined();
  });

  test('withdrawing consent while the module runs deletes its keys, as before', async () => {
    operatorEnables('identityLink');
    const ext = defineModule(identityLinkModule);
    const host = fakeHost({ modules: settings });
    expect((await callOnce(ext, host)).eids?.map((e) => e.source)).toContain('hemsha256');
    host.state = gdprState([1], [45]);
    expect(await ext.beforeCall!({ type: 'std' })).toEqual({});
    expect(storageSnapshot().local._sas_hem).toBeUndefined();
    expect(cookieNames()).not.toContain('_sas_hem');
  });
});
