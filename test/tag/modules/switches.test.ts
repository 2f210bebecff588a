// @vitest-environment happy-dom
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { defineModule, flagName, registerExtension, whyOff } from '../../../src/tag/modules/_module.js';
import { overlayEids, type Eid } from '../../../src/core/index.js';
import { callOnce, fakeHost, gdprState, operatorEnables, resetPage, storageSnapshot } from './_host.js';

const w = window as any;
beforeEach(() => resetPage());
afterEach(() => resetPage());

// A module that stores something and returns one eid, so tests can see whether it ran.
function probe() {
  const starts: number[] = [];
  const ext = defineModule({
    name: 'probe',
    gvl: 131,
    start: () => {
      starts.push(1);
      localStorage.setItem('probe', '1');
      return { eids: () => [{ source: 'probe.example', uids: [{ id: 'p1' }] }], stop: () => starts.push(-1) };
    },
  });
  return { ext, starts };
}

describe('module switches', () => {
  test('a module runs only when the operator enabled it for the network', async () => {
    const { ext, starts } = probe();
    const host = fakeHost({});
    expect(await callOnce(ext, host)).toEqual({});
    expect(starts).toEqual([]);
    expect(host.logs.join('\n')).toContain('not enabled by the operator');
    expect(storageSnapshot()).toEqual({ cookie: '', local: {} });
  });

  test('its window flag turns it off even when the operator enabled it, and touches no storage', async () => {
    operatorEnables('probe');
    w[flagName('probe')] = true;
    const { ext, starts } = probe();
    const host = fakeHost({});
    expect(await callOnce(ext, host)).toEqual({});
    expect(starts).toEqual([]);
    expect(host.logs.join('\n')).toContain('window.sas_disable_probe');
    expect(storageSnapshot()).toEqual({ cookie: '', local: {} });
  });

  test('modules.<name>: false in setup turns it off', () => {
    operatorEnables('probe');
    expect(whyOff('probe', fakeHost({ modules: { probe: false } }))).toContain('setup');
    expect(whyOff('probe', fakeHost({ modules: { probe: {} } }))).toBeUndefined();
  });

  test('an enabled module with consent starts once and contributes its eids', async () => {
    operatorEnables('probe');
    const { ext, starts } = probe();
    const host = fakeHost({});
    expect(await callOnce(ext, host)).toEqual({
      eids: [{ source: 'probe.example', uids: [{ id: 'p1' }], inserter: 'localhost' }],
    });
    await ext.beforeCall!({ type: 'generic' });
    expect(starts).toEqual([1]);
  });

  test('a flag set after setup stops the module from sending', async () => {
    operatorEnables('probe');
    const { ext } = probe();
    const host = fakeHost({});
    await callOnce(ext, host);
    w[flagName('probe')] = true;
    expect(await ext.beforeCall!({ type: 'std' })).toEqual({});
  });

  test('without its vendor consent a module never starts; withdrawing consent stops it', async () => {
    operatorEnables('probe');
    const { ext, starts } = probe();
    const host = fakeHost({}, gdprState([1, 2], [97]));
    expect(await callOnce(ext, host)).toEqual({});
    expect(starts).toEqual([]);
    expect(storageSnapshot().local).toEqual({});
    host.state = gdprState([1, 2], [131]);
    expect((await ext.beforeCall!({ type: 'std' }))?.eids).toHaveLength(1);
    host.state = gdprState([2], [131]);
    expect(await ext.beforeCall!({ type: 'std' })).toEqual({});
    expect(starts).toEqual([1, -1]);
  });

  test('an opt-out of sale sends no module ids', async () => {
    operatorEnables('probe');
    const { ext, starts } = probe();
    expect(
      await callOnce(ext, fakeHost({}, { ready: true, usDenial: 'gpp usnat SaleOptOut=1', usPrivacy: '1YYN' })),
    ).toEqual({});
    expect(starts).toEqual([]);
  });

  test('a host without a consent reader leaves modules off (fail closed)', async () => {
    operatorEnables('probe');
    const { ext, starts } = probe();
    const host = fakeHost({}, null);
    expect(await callOnce(ext, host)).toEqual({});
    expect(starts).toEqual([]);
  });

  test('a module that throws while starting is contained', async () => {
    operatorEnables('boom');
    const ext = defineModule({
      name: 'boom',
      gvl: 45,
      start: () => {
        throw new Error('boom');
      },
    });
    const host = fakeHost({});
    expect(await callOnce(ext, host)).toEqual({});
    expect(host.logs.join('\n')).toContain('GUARD');
  });

  test('a module starts and answers in a task of its own, not in the task that set it up or called', async () => {
    operatorEnables('probe');
    const { ext, starts } = probe();
    const host = fakeHost({});
    ext.setup!(host);
    const answer = ext.beforeCall!({ type: 'std' });
    // Any number of promise callbacks (the rest of the task that ran the page's queued commands) starts nothing.
    for (let i = 0; i < 50; i++) await Promise.resolve();
    expect(starts).toEqual([]);
    expect(await answer).toEqual({
      eids: [{ source: 'probe.example', uids: [{ id: 'p1' }], inserter: 'localhost' }],
    });
    expect(starts).toEqual([1]);
  });

  test('registration goes through window.__sasx, once per module name', () => {
    const { ext } = probe();
    registerExtension(ext);
    registerExtension(ext);
    expect(w.__sasx).toHaveLength(1);
    const got: unknown[] = [];
    w.__sasx[0]((e: unknown) => got.push(e));
    expect(got).toEqual([ext]);
  });
});

describe('merge rules for module eids', () => {
  const page: Eid[] = [{ source: 'ID5-sync.com', uids: [{ id: 'page-id5' }] }];
  const modules: Eid[] = [
    { source: 'id5-sync.com', uids: [{ id: 'module-id5', atype: 1 }] },
    { source: 'hemsha256', uids: [{ id: 'h1', atype: 3 }] },
    {
      source: 'hemsha256',
      uids: [
        { id: 'h1', atype: 3 },
        { id: 'h2', atype: 3 },
      ],
    },
  ];
  test('page eids win by source (case-insensitive); module eids of other sources are added, merged and deduped', () => {
    expect(overlayEids(page, modules)).toEqual([
      { source: 'ID5-sync.com', uids: [{ id: 'page-id5' }] },
      {
        source: 'hemsha256',
        uids: [
          { id: 'h1', atype: 3 },
          { id: 'h2', atype: 3 },
        ],
      },
    ]);
  });
});
