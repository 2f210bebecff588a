import { describe, expect, test } from 'vitest';
import fc from 'fast-check';
import { isValidAtype, mergeEids, overlayEids, validateEids, type Eid } from '../../src/core/index.js';

describe('validateEids', () => {
  test('an id, source, inserter or matcher holding an email address is never kept: only hashes leave', () => {
    const { value, issues } = validateEids([
      { source: 'a.com', uids: [{ id: 'jane@example.com' }, { id: 'ok' }], inserter: 'x%40y.org', matcher: 'm.com' },
      { source: 'me@b.com', uids: [{ id: 'x' }] },
    ]);
    expect(value).toEqual([{ source: 'a.com', uids: [{ id: 'ok' }], matcher: 'm.com' }]);
    expect(issues.map((i) => i.path)).toEqual(['eids[0].uids[0].id', 'eids[0].inserter', 'eids[1].source']);
    expect(issues[0].message).toMatch(/email address/);
  });

  test('keeps valid eids as copies with only the known fields', () => {
    const input = [
      {
        source: ' id5-sync.com ',
        uids: [{ id: 'a', atype: 1, ext: { linkType: 2 }, extra: 1 }],
        mm: 3,
        inserter: 'x.com',
        junk: true,
      },
    ];
    const { value, issues } = validateEids(input);
    expect(issues).toEqual([]);
    expect(value).toEqual([
      { source: 'id5-sync.com', uids: [{ id: 'a', atype: 1, ext: { linkType: 2 } }], mm: 3, inserter: 'x.com' },
    ]);
    expect(value[0].uids[0].ext).not.toBe(input[0].uids[0].ext);
  });

  test('drops each invalid eid and uid with an issue naming where and what', () => {
    const { value, issues } = validateEids([
      { source: 'a.com', uids: [{ id: '' }, { id: 'no', ext: 'x' }, { id: 'fine', atype: 571187 }] },
      { source: 7, uids: [{ id: 'x' }] },
      { source: 'b.com', uids: 'nope' },
      'string',
    ]);
    expect(value).toEqual([{ source: 'a.com', uids: [{ id: 'fine', atype: 571187 }] }]);
    expect(issues.map((i) => i.path)).toEqual([
      'eids[0].uids[0].id',
      'eids[0].uids[1].ext',
      'eids[1].source',
      'eids[2].uids',
      'eids[3]',
    ]);
  });

  test('keeps an integer atype outside 1, 2, 3 and >= 500 as it came, with an issue', () => {
    const { value, issues } = validateEids([
      {
        source: 'device.example',
        uids: [
          { id: 'a', atype: 4 },
          { id: 'b', atype: 5 },
          { id: 'c', atype: 0 },
        ],
      },
    ]);
    expect(value).toEqual([
      {
        source: 'device.example',
        uids: [
          { id: 'a', atype: 4 },
          { id: 'b', atype: 5 },
          { id: 'c', atype: 0 },
        ],
      },
    ]);
    expect(issues).toEqual([
      { path: 'eids[0].uids[0].atype', message: 'atype 4 is not 1, 2, 3 or >= 500 (AdCOM); kept as sent' },
      { path: 'eids[0].uids[1].atype', message: 'atype 5 is not 1, 2, 3 or >= 500 (AdCOM); kept as sent' },
      { path: 'eids[0].uids[2].atype', message: 'atype 0 is not 1, 2, 3 or >= 500 (AdCOM); kept as sent' },
    ]);
  });

  test('a non-integer atype costs the atype, never the id', () => {
    const { value, issues } = validateEids([
      {
        source: 'a.com',
        uids: [
          { id: 'x', atype: 2.5 },
          { id: 'y', atype: '1' },
          { id: 'z', atype: null },
        ],
      },
    ]);
    expect(value).toEqual([{ source: 'a.com', uids: [{ id: 'x' }, { id: 'y' }, { id: 'z' }] }]);
    expect(issues.map((i) => i.path)).toEqual([
      'eids[0].uids[0].atype',
      'eids[0].uids[1].atype',
      'eids[0].uids[2].atype',
    ]);
    expect(issues[0].message).toBe('atype must be an integer; atype dropped, uid kept');
  });

  test('keeps inserter, matcher, mm and ext exactly as sent, and names unusable ones it drops', () => {
    const good = {
      source: 'id5-sync.com',
      uids: [{ id: 'a', atype: 1 }],
      inserter: 'pub.example',
      matcher: 'id5-sync.com',
      mm: 7,
      ext: { stype: 'ppuid', n: { deep: [1, 'x'] } },
    };
    expect(validateEids([good])).toEqual({ value: [good], issues: [] });
    const { value, issues } = validateEids([
      { source: 'x.com', uids: [{ id: 'a' }], inserter: '', matcher: 5, mm: 1.5 },
    ]);
    expect(value).toEqual([{ source: 'x.com', uids: [{ id: 'a' }] }]);
    expect(issues).toEqual([
      { path: 'eids[0].inserter', message: 'inserter must be a non-empty string; inserter dropped' },
      { path: 'eids[0].matcher', message: 'matcher must be a non-empty string; matcher dropped' },
      { path: 'eids[0].mm', message: 'mm must be an integer >= 0; mm dropped' },
    ]);
  });

  test('keeps same-source eids with different provenance apart, and merges those with the same', () => {
    const a = { source: 'uidapi.com', uids: [{ id: 'u1' }], inserter: 'pub.example', mm: 3 };
    const b = { source: 'uidapi.com', uids: [{ id: 'u2' }], inserter: 'ssp.example', mm: 3 };
    const c = { source: 'UIDAPI.com', uids: [{ id: 'u3' }], inserter: 'pub.example', mm: 3 };
    const { value, issues } = validateEids([a, b, c]);
    expect(issues).toEqual([]);
    expect(value).toEqual([{ ...a, uids: [{ id: 'u1' }, { id: 'u3' }] }, b]);
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
    // The Node side measures the depth first (a cycle never ends, so it is too deep); the tag's build refuses it
    // in the JSON round trip.
    expect(r.issues[0].message).toMatch(/ext must be a plain JSON object|ext is nested deeper than \d+ levels/);
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
    expect(mergeEids([e('Criteo.com', 'a'), e('id5-sync.com', 'x'), e('criteo.COM', 'a', 'b')])).toEqual([
      e('Criteo.com', 'a', 'b'),
      e('id5-sync.com', 'x'),
    ]);
  });

  test('overlay: a source in the winner replaces that source in the others entirely', () => {
    expect(overlayEids([e('criteo.com', 'page')], [e('CRITEO.com', 'module'), e('pubcid.org', 'p')])).toEqual([
      e('criteo.com', 'page'),
      e('pubcid.org', 'p'),
    ]);
  });
});
