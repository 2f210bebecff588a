// @vitest-environment happy-dom
// Experiments (holdouts): declarations, assignment (share, stickiness, no storage without consent), withholding on
// every call whoever set the eids, and the `xp` wire encoding (GET Base64 parameter, POST array field).
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { armOf, checkExperiments, fnv1a32, XID_KEY, type ExperimentEntry } from '../../../src/core/index.js';
import { createExperiments, randomXid, XID_TTL } from '../../../src/tag/modules/experiments.js';
import { saveItem } from '../../../src/tag/modules/_storage.js';
import type { TagExtension } from '../../../src/tag/extension.js';
import { eidsParam, flush, loadedTag, SAMPLE } from '../helpers.js';
import { fakeHost, gdprState, resetPage, storageSnapshot } from './_host.js';

const w = window as any;
const reset = () => {
  resetPage();
  delete w.__sasxp;
};
beforeEach(reset);
afterEach(reset);

/** The `xp` query parameter of a GET URL, decoded. */
const xpParam = (url: string): ExperimentEntry[] | undefined => {
  const v = new URL(url).searchParams.get('xp');
  return v === null ? undefined : (JSON.parse(Buffer.from(v, 'base64url').toString('utf8')) as ExperimentEntry[]);
};

/** A stored id whose arm in experiment `id` (share 50) is `arm`. */
function storeXidIn(id: string, arm: 'h' | 'c'): string {
  for (;;) {
    const xid = randomXid();
    if (armOf(xid, id, 50) === arm) {
      saveItem('localStorage', XID_KEY, xid, XID_TTL);
      return xid;
    }
  }
}

/** A module-like extension that contributes eids, as provider modules do. */
const moduleGiving = (source: string): TagExtension => ({
  name: 'mod-' + source,
  beforeCall: () => ({ eids: [{ source, uids: [{ id: 'm-' + source, atype: 1 }] }] }),
});

/** A consent extension like the built-in one, under the test's control (storage allowed unless `state` says not). */
const consentExt = (state = { ready: true } as Parameters<typeof fakeHost>[1]): TagExtension => ({
  name: 'consent',
  setup: (h) => void (h.consent = () => Promise.resolve({ ...state! })),
});

describe('declarations', () => {
  test('modules become their sources; sources are lowercased and deduplicated; the share is rounded', () => {
    const r = checkExperiments([
      { id: 'id5-lift', modules: ['idLinking'], sources: ['ID5-Sync.com'], share: 10 },
      { id: 'uid', modules: ['uid2', 'identityLink'], share: 33.333 },
    ]);
    expect(r.issues).toEqual([]);
    expect(r.value).toEqual([
      { id: 'id5-lift', sources: ['id5-sync.com'], share: 10 },
      { id: 'uid', sources: ['uidapi.com', 'euid.eu', 'hemsha256', 'liveramp.com'], share: 33.33 },
    ]);
  });

  test('each bad entry is dropped with an issue naming it; the rest are kept', () => {
    const taken = ['op'];
    const r = checkExperiments(
      [
        { id: 'ok', sources: ['a.example'], share: 5 },
        { id: 'bad id!', sources: ['a.example'], share: 5 },
        { id: 'op', sources: ['a.example'], share: 5 },
        { id: 'zero', sources: ['a.example'], share: 0 },
        { id: 'all', sources: ['a.example'], share: 100 },
        { id: 'tiny', sources: ['a.example'], share: 0.001 },
        { id: 'str', sources: ['a.example'], share: '10' },
        { id: 'nomod', modules: ['prebid'], share: 5 },
        { id: 'proto', modules: ['constructor'], share: 5 },
        { id: 'nosrc', share: 5 },
        { id: 'badsrc', sources: ['a b'], share: 5 },
        { id: 'many', sources: Array.from({ length: 11 }, (_, i) => `s${i}.example`), share: 5 },
        null,
      ],
      'experiments',
      taken,
    );
    expect(r.value.map((x) => x.id)).toEqual(['ok']);
    expect(r.issues.map((i) => i.path)).toEqual([
      'experiments[1].id',
      'experiments[2].id',
      'experiments[3].share',
      'experiments[4].share',
      'experiments[5].share',
      'experiments[6].share',
      'experiments[7].modules',
      'experiments[8].modules',
      'experiments[9]',
      'experiments[10].sources',
      'experiments[11]',
      'experiments[12].id',
    ]);
    expect(r.issues.every((i) => i.message.endsWith('; dropped'))).toBe(true);
    expect(r.issues[6].message).toMatch(/prebid is not one of identityLink, idLinking, criteo, uid2/);
    expect(taken).toEqual(['op', 'ok']);
    expect(checkExperiments({ id: 'x' }).issues).toEqual([
      { path: 'experiments', message: 'must be an array; dropped' },
    ]);
  });

  test('at most 8 experiments', () => {
    const r = checkExperiments(
      Array.from({ length: 10 }, (_, i) => ({ id: 'e' + i, sources: ['a.example'], share: 1 })),
    );
    expect(r.value).toHaveLength(8);
    expect(r.issues.map((i) => i.path)).toEqual(['experiments[8]', 'experiments[9]']);
  });
});

describe('assignment', () => {
  test('FNV-1a 32 is the standard one', () => {
    expect(fnv1a32('')).toBe(0x811c9dc5);
    expect(fnv1a32('a')).toBe(0xe40c292c);
    expect(fnv1a32('foobar')).toBe(0xbf9cf968);
  });

  test('over many browsers the held-out share is close to the declared one, independently per experiment', () => {
    const n = 40_000;
    const xids = Array.from({ length: n }, randomXid);
    for (const share of [0.5, 10, 33.33, 50]) {
      const held = xids.filter((x) => armOf(x, 'exp-a', share) === 'h').length / n;
      const sd = Math.sqrt(((share / 100) * (1 - share / 100)) / n);
      expect(Math.abs(held - share / 100)).toBeLessThan(4 * sd);
    }
    // Two experiments at 50 %: the arms are independent (about a quarter of browsers held out of both).
    const both = xids.filter((x) => armOf(x, 'exp-a', 50) === 'h' && armOf(x, 'exp-b', 50) === 'h').length / n;
    expect(Math.abs(both - 0.25)).toBeLessThan(4 * Math.sqrt((0.25 * 0.75) / n));
  });

  test('where storage is allowed the id is stored once and the arms are kept across page views', async () => {
    const decl = [{ id: 'a', sources: ['id5-sync.com'], share: 50 }];
    const arms: string[] = [];
    for (let view = 0; view < 5; view++) {
      const ext = createExperiments();
      const host = fakeHost({ experiments: decl });
      ext.setup!(host);
      const out = (await ext.beforeCall!({ type: 'generic' })) as { params: { xp: ExperimentEntry[] } };
      expect(out.params.xp).toHaveLength(1);
      expect(out.params.xp[0].st).toBe(1);
      arms.push(out.params.xp[0].arm);
    }
    expect(new Set(arms).size).toBe(1);
    const stored = JSON.parse(localStorage.getItem(XID_KEY)!) as { v: string; e: number };
    expect(stored.v).toMatch(/^[0-9a-f]{32}$/);
    expect(armOf(stored.v, 'a', 50)).toBe(arms[0]);
    expect(stored.e - Date.now()).toBeGreaterThan(XID_TTL - 60_000);
  });

  test('without storage consent the arm is per page view, nothing is stored, and an earlier id is deleted', async () => {
    saveItem('localStorage', XID_KEY, randomXid(), XID_TTL);
    document.cookie = `${XID_KEY}=x;path=/`;
    const decl = [{ id: 'a', sources: ['id5-sync.com'], share: 50 }];
    const arms = new Set<string>();
    for (let view = 0; view < 40; view++) {
      const ext = createExperiments();
      // GDPR applies, purposes 2-10 only: no purpose 1, no storage.
      const host = fakeHost({ experiments: decl }, gdprState([2, 3, 4], [45]));
      ext.setup!(host);
      const out = (await ext.beforeCall!({ type: 'generic' })) as { params: { xp: ExperimentEntry[] } };
      expect(out.params.xp[0]).toMatchObject({ id: 'a', st: 0, pct: 50, src: ['id5-sync.com'] });
      arms.add(out.params.xp[0].arm);
      expect(storageSnapshot()).toEqual({ cookie: '', local: {} });
    }
    // 40 page views at 50 %: both arms seen (a fresh id per page view).
    expect(arms).toEqual(new Set(['h', 'c']));
  });

  test('a consent platform that has not answered stores nothing, deletes nothing, and holds every source out', async () => {
    const xid = storeXidIn('a', 'c');
    const ext = createExperiments();
    const host = fakeHost({ experiments: [{ id: 'a', sources: ['id5-sync.com'], share: 50 }] });
    host.consent = () => new Promise(() => undefined);
    ext.setup!(host);
    await flush();
    expect(host.withhold).toEqual(['id5-sync.com']);
    expect(w.__sasxp).toEqual({ out: ['id5-sync.com'], xp: undefined });
    expect(JSON.parse(localStorage.getItem(XID_KEY)!).v).toBe(xid);
  });

  test('consent withdrawn on the page: the stored id is deleted and the arms become per page view', async () => {
    storeXidIn('a', 'h');
    const ext = createExperiments();
    const host = fakeHost({ experiments: [{ id: 'a', sources: ['id5-sync.com'], share: 50 }] });
    ext.setup!(host);
    let out = (await ext.beforeCall!({ type: 'onecall' })) as { params: { xp: ExperimentEntry[] } };
    expect(out.params.xp[0]).toMatchObject({ arm: 'h', st: 1 });
    host.state = { ready: true, usPrivacy: '1YYN' };
    out = (await ext.beforeCall!({ type: 'onecall' })) as { params: { xp: ExperimentEntry[] } };
    expect(out.params.xp[0].st).toBe(0);
    expect(localStorage.getItem(XID_KEY)).toBeNull();
  });

  test('storage that refuses the write gives per-page-view arms', async () => {
    const spy = vi.spyOn(localStorage, 'setItem').mockImplementation(() => {
      throw new Error('QuotaExceededError');
    });
    try {
      const ext = createExperiments();
      ext.setup!(fakeHost({ experiments: [{ id: 'a', sources: ['x.example'], share: 10 }] }));
      const out = (await ext.beforeCall!({ type: 'generic' })) as { params: { xp: ExperimentEntry[] } };
      expect(out.params.xp[0].st).toBe(0);
    } finally {
      spy.mockRestore();
    }
  });
});

describe('withholding and the wire', () => {
  const decl = [
    { id: 'id5', modules: ['idLinking'], share: 50 },
    { id: 'crit', sources: ['criteo.com'], share: 50 },
  ];

  async function tagWith(arms: { id5: 'h' | 'c'; crit: 'h' | 'c' }) {
    // One stored id with the wanted arm in each experiment.
    for (;;) {
      const xid = randomXid();
      if (armOf(xid, 'id5', 50) === arms.id5 && armOf(xid, 'crit', 50) === arms.crit) {
        saveItem('localStorage', XID_KEY, xid, XID_TTL);
        break;
      }
    }
    const t = await loadedTag({
      extensions: [consentExt(), createExperiments(), moduleGiving('id5-sync.com'), moduleGiving('uidapi.com')],
    });
    t.sas.setup({ experiments: decl });
    // The page sets the held-out source itself too, in another case.
    t.sas.setEids([
      { source: 'ID5-sync.com', uids: [{ id: 'page-id5' }] },
      SAMPLE[1],
      { source: 'criteo.com', uids: [{ id: 'c1' }] },
    ]);
    return t;
  }

  test('held out: the sources leave GET and POST calls and getEids, whoever set them; xp names the arms', async () => {
    const { sas, sent } = await tagWith({ id5: 'h', crit: 'c' });
    await sas.call('std', { siteId: 1, pageId: 2, formatId: 3 });
    await sas.call('generic', { siteId: 1, pageId: 2, formatId: 3 });
    await sas.call('onecall', { siteId: 1, pageId: 2, formatId: 3 });
    const sources = (eids: unknown) => (eids as { source: string }[]).map((e) => e.source.toLowerCase()).sort();
    const want = ['criteo.com', 'liveramp.com', 'uidapi.com'];
    expect(sources(eidsParam(sent[0].url))).toEqual(want);
    const xp: ExperimentEntry[] = [
      { id: 'id5', arm: 'h', pct: 50, src: ['id5-sync.com'], st: 1 },
      { id: 'crit', arm: 'c', pct: 50, src: ['criteo.com'], st: 1 },
    ];
    expect(xpParam(sent[0].url)).toEqual(xp);
    for (const post of sent.slice(1)) {
      const body = JSON.parse(post.body!) as { eids: unknown; xp: unknown };
      expect(sources(body.eids)).toEqual(want);
      expect(body.xp).toEqual(xp);
    }
    expect(sources(sas.getEids())).toEqual(want);
    expect(w.__sasxp).toEqual({ out: ['id5-sync.com'], xp });
  });

  test('control: every source goes; both held out: both leave', async () => {
    let t = await tagWith({ id5: 'c', crit: 'c' });
    await t.sas.call('std', {});
    expect((eidsParam(t.sent[0].url) as { source: string }[]).map((e) => e.source)).toEqual(
      expect.arrayContaining(['ID5-sync.com', 'criteo.com', 'uidapi.com']),
    );
    expect(xpParam(t.sent[0].url)!.map((e) => e.arm)).toEqual(['c', 'c']);
    reset();
    t = await tagWith({ id5: 'h', crit: 'h' });
    await t.sas.call('generic', {});
    const body = JSON.parse(t.sent[0].body!) as { eids: { source: string }[] };
    expect(body.eids.map((e) => e.source).sort()).toEqual(['liveramp.com', 'uidapi.com']);
  });

  test('no experiments: no xp parameter or field, nothing withheld, nothing stored', async () => {
    const { sas, sent } = await loadedTag({ extensions: [consentExt(), createExperiments()] });
    sas.setEids([SAMPLE[0]]);
    await sas.call('std', {});
    await sas.call('generic', {});
    expect(new URL(sent[0].url).searchParams.has('xp')).toBe(false);
    expect(JSON.parse(sent[1].body!)).not.toHaveProperty('xp');
    expect(eidsParam(sent[0].url)).toEqual([SAMPLE[0]]);
    expect(localStorage.getItem(XID_KEY)).toBeNull();
  });

  test('an experiments extension that never answers still keeps its sources out (fail closed)', async () => {
    const { sas, sent } = await loadedTag({
      extensions: [
        { name: 'consent', setup: (h) => void (h.consent = () => new Promise(() => undefined)) },
        createExperiments(),
      ],
    });
    sas.setup({ eidsTimeout: 20, experiments: [{ id: 'a', sources: ['id5-sync.com'], share: 1 }] });
    sas.setEids(SAMPLE);
    await sas.call('std', {});
    expect((eidsParam(sent[0].url) as { source: string }[]).map((e) => e.source)).toEqual([
      'liveramp.com',
      'example.org',
    ]);
    expect(new URL(sent[0].url).searchParams.has('xp')).toBe(false);
  });

  test('bad declarations are reported in debug and dropped; the call still goes', async () => {
    const { sas, sent, warnings } = await loadedTag({ extensions: [consentExt(), createExperiments()] });
    sas.setup({
      experiments: [
        { id: 'ok', sources: ['a.example'], share: 10 },
        { id: 'no', share: 500 },
      ],
    });
    await sas.call('std', {});
    expect(xpParam(sent[0].url)!.map((e) => e.id)).toEqual(['ok']);
    expect(warnings().join('\n')).toMatch(/experiments\[1\]\.share: must be a percent in \(0, 100\); dropped/);
    sas.setup({ experiments: 'nope' });
    const r = await sas.call('std', {});
    expect(r.ok).toBe(true);
    expect(new URL(sent[1].url).searchParams.has('xp')).toBe(false);
  });

  test('the operator declares experiments through the served switches; a page repeating an id is refused', async () => {
    w.__sasop = { modules: [], experiments: [{ id: 'op', sources: ['uidapi.com'], share: 50 }] };
    const { sas, sent, warnings } = await loadedTag({ extensions: [consentExt(), createExperiments()] });
    sas.setup({ experiments: [{ id: 'op', sources: ['criteo.com'], share: 5 }] });
    await sas.call('std', {});
    expect(xpParam(sent[0].url)).toEqual([
      expect.objectContaining({ id: 'op', pct: 50, src: ['uidapi.com'] }) as ExperimentEntry,
    ]);
    expect(warnings().join('\n')).toMatch(/experiments\[0\]\.id: op is declared twice/);
  });
});
