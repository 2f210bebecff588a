import { describe, expect, test } from 'vitest';
import fc from 'fast-check';
import { isValidAtype, mergeEids, overlayEids, validateEids, type Eid } from '../../src/core/index.js';

describe('validateEids', () => {
  test('keeps valid eids as copies with only the known fields', () => {
    const input = [{ source: ' id5-sync.com ', uids: [{ id: 'a', atype: 1, ext: { linkType: 2 }, extra: 1 }], mm: 3, inserter: 'x.com', junk: true }];
    const { value, issues } = validateEids(input);
    expect(issues).toEqual([]);
    expect(value).toEqual([{ source: 'id5-sync.com', uids: [{ id: 'a', atype: 1, ext: { linkType: 2 } }], mm: 3, inserter: 'x.com' }]);
    expect(value[0].uids[0].ext).not.toBe(input[0].uids[0].ext);
  });

  test('drops each invalid eid and uid with an issue naming where and what', () => {
    const { value, issues } = validateEids([
      { source: 'a.com', uids: [{ id: '' }, { id: 'ok', atype: 2.5 }, { id: 'fine', atype: 571187 }] },
      { source: 7, uids: [{ id: 'x' }] },
      { source: 'b.com', uids: 'nope' },
      'string',
    ]);
    expect(value).toEqual([{ source: 'a.com', uids: [{ id: 'fine', atype: 571187 }] }]);
    expect(issues.map((i) => i.path)).toEqual(['eids[0].uids[0].id', 'eids[0].uids[1].atype', 'eids[1].source', 'eids[2].uids', 'eids[3]']);
  });

  test('accepts atype 1, 2, 3 and 500 or more only', () => {
    expect([1, 2, 3, 500, 571187].every(isValidAtype)).toBe(true);
    expect([0, 4, 499, -1, 1.5, '1', NaN, null].some(isValidAtype)).toBe(false);
  });

  test('never throws, whatever it is given', () => {
    fc.assert(
      fc.property(fc.anything(), (v) => {
        const r = validateEids(v);
        expect(Array.isArray(r.value)).toBe(true);
      }),
    );
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const r = validateEids([{ source: 's.com', uids: [{ id: 'a', ext: cyclic }] }]);
    expect(r.value).toEqual([]);
    expect(r.issues[0].message).toMatch(/ext must be a plain JSON object/);
  });

  test('caps the number of eids and reports how many were dropped', () => {
    const many = Array.from({ length: 10_000 }, (_, i) => ({ source: `s${i}.com`, uids: [{ id: 'x' }] }));
    const r = validateEids(many);
    expect(r.value).toHaveLength(1000);
    expect(r.issues).toEqual([{ path: 'eids', message: 'more than 1000 eids: 9000 dropped' }]);
  });
});

describe('mergeEids and overlayEids', () => {
  const e = (source: string, ...ids: string[]): Eid => ({ source, uids: ids.map((id) => ({ id })) });

  test('merges same-source eids case-insensitively, first spelling wins, uid ids deduped', () => {
    expect(mergeEids([e('Criteo.com', 'a'), e('id5-sync.com', 'x'), e('criteo.COM', 'a', 'b')])).toEqual([e('Criteo.com', 'a', 'b'), e('id5-sync.com', 'x')]);
  });

  test('overlay: a source in the winner replaces that source in the others entirely', () => {
    expect(overlayEids([e('criteo.com', 'page')], [e('CRITEO.com', 'module'), e('pubcid.org', 'p')])).toEqual([e('criteo.com', 'page'), e('pubcid.org', 'p')]);
  });
});
