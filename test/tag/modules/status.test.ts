// @vitest-environment happy-dom
// Each module reports how its last call went on window.__sasms (the modules demo page shows it).
import { afterEach, beforeEach, expect, test } from 'vitest';
import { defineModule } from '../../../src/tag/modules/_module.js';
import { fakeHost, gdprState, operatorEnables, resetPage } from './_host.js';

const w = window as any;
const probe = (found: boolean) =>
  defineModule({
    name: 'probe',
    gvl: 131,
    start: () => ({ eids: () => (found ? [{ source: 'x.example', uids: [{ id: '1' }] }] : []) }),
  });

beforeEach(() => {
  resetPage();
  delete w.__sasms;
});
afterEach(() => resetPage());

test('a module not enabled by the operator reports why it is off', () => {
  probe(true).setup!(fakeHost());
  expect(w.__sasms.probe.state).toBe('off: not enabled by the operator');
});

test('a module whose window flag is set reports it, even when set after setup', async () => {
  operatorEnables('probe');
  const ext = probe(true);
  ext.setup!(fakeHost());
  w.sas_disable_probe = true;
  await ext.beforeCall!({ type: 'std' });
  expect(w.__sasms.probe.state).toBe('off: window.sas_disable_probe');
});

test('a module reports no consent, then found with its sources, then no id', async () => {
  operatorEnables('probe');
  const host = fakeHost({}, gdprState([1], []));
  const ext = probe(true);
  ext.setup!(host);
  await ext.beforeCall!({ type: 'std' });
  expect(w.__sasms.probe).toMatchObject({ state: 'no consent' });
  host.state = gdprState([1], [131]);
  await ext.beforeCall!({ type: 'std' });
  expect(w.__sasms.probe).toEqual({ state: 'found', sources: ['x.example'] });

  const empty = defineModule({ name: 'empty', gvl: 131, start: () => ({ eids: () => [] }) });
  operatorEnables('probe', 'empty');
  empty.setup!(host);
  await empty.beforeCall!({ type: 'std' });
  expect(w.__sasms.empty.state).toBe('no id');
});
