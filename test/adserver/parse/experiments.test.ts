// The `xp` parameter and field: holdout experiments on GET, POST and the Prebid adapter's body, each entry checked
// on its own, broken ones dropped with an issue naming the field.
import { describe, expect, test } from 'vitest';
import { parseAdCall, readExperiments } from '../../../src/adserver/parse/index.js';
import { ID5, b64, b64url, getCall } from '../fixtures.js';

const ID5_HOLDOUT = { id: 'id5-q3', arm: 'h', pct: 10, src: ['id5-sync.com'], st: 1 };
const UID2_CONTROL = { id: 'uid2.ab_1', arm: 'c', pct: 33.33, src: ['uidapi.com', 'euid.eu'], st: 0 };
const DECODED = [
  { id: 'id5-q3', arm: 'holdout', share: 0.1, sources: ['id5-sync.com'], sticky: true },
  { id: 'uid2.ab_1', arm: 'control', share: 0.3333, sources: ['uidapi.com', 'euid.eu'], sticky: false },
];

describe('xp on every ad call', () => {
  test('GET: Base64 JSON as eids (URL-safe or standard), beside the eids', () => {
    for (const enc of [b64url, b64]) {
      const call = getCall({ nwid: 1, eids: b64url([ID5]), xp: enc([ID5_HOLDOUT, UID2_CONTROL]) });
      expect(call.experiments).toEqual(DECODED);
      expect(call.eids).toHaveLength(1);
      expect(call.issues).toEqual([]);
    }
  });
  test('POST /genericpost, /call and the Prebid adapter /prebid/v1: the top-level `xp` array', () => {
    for (const path of ['/genericpost', '/call', '/prebid/v1']) {
      const body = JSON.stringify({ networkId: 1, eids: [ID5], xp: [ID5_HOLDOUT, UID2_CONTROL] });
      const call = parseAdCall({ url: `https://ads.example${path}`, method: 'POST', body });
      expect(call.experiments, path).toEqual(DECODED);
      expect(call.issues, path).toEqual([]);
    }
    // A framework's parsed object too.
    const call = parseAdCall({ url: '/genericpost', body: { networkId: 1, xp: [ID5_HOLDOUT] } });
    expect(call.experiments).toEqual([DECODED[0]]);
  });
  test('no xp: no experiments key at all', () => {
    expect(getCall({ nwid: 1 })).not.toHaveProperty('experiments');
    expect(parseAdCall({ url: '/genericpost', body: '{"networkId":1}' })).not.toHaveProperty('experiments');
  });
  test('each broken entry is dropped with an issue naming its field; the rest kept', () => {
    const bad = [
      ID5_HOLDOUT,
      { ...UID2_CONTROL, pct: 100 },
      { ...UID2_CONTROL, pct: 0 },
      { ...UID2_CONTROL, pct: 12.345 },
      { ...UID2_CONTROL, arm: 'x' },
      { ...UID2_CONTROL, id: 'has space' },
      { ...UID2_CONTROL, src: [] },
      { ...UID2_CONTROL, src: ['a'.repeat(101)] },
    ];
    const call = parseAdCall({ url: '/call', body: JSON.stringify({ xp: bad }) });
    expect(call.experiments).toEqual([DECODED[0]]);
    expect(call.issues.map((i) => i.path)).toEqual([
      'xp[1].pct',
      'xp[2].pct',
      'xp[3].pct',
      'xp[4].arm',
      'xp[5].id',
      'xp[6].src',
      'xp[7].src[0]',
    ]);
    const more = readExperiments([{ ...ID5_HOLDOUT, st: 2 }, { ...ID5_HOLDOUT, src: Array(11).fill('x.com') }, 'x']);
    expect(more.issues.map((i) => i.path)).toEqual(['xp[0].st', 'xp[1].src', 'xp[2]']);
  });
  test('more than 8 entries: the first 8 kept, one issue; a repeated id kept once', () => {
    const many = Array.from({ length: 12 }, (_, i) => ({ ...ID5_HOLDOUT, id: `e${i}` }));
    const call = getCall({ xp: b64url(many) });
    expect(call.experiments?.map((x) => x.id)).toEqual(['e0', 'e1', 'e2', 'e3', 'e4', 'e5', 'e6', 'e7']);
    expect(call.issues).toEqual([{ path: 'xp', message: 'more than 8 experiments: 4 dropped' }]);
    const twice = getCall({ xp: b64url([ID5_HOLDOUT, { ...ID5_HOLDOUT, arm: 'c' }]) });
    expect(twice.experiments).toHaveLength(1);
    expect(twice.issues[0].path).toBe('xp[1].id');
  });
  test('sources are lowercased and trimmed; an xp that is no Base64, no JSON or no array is ignored with an issue', () => {
    const call = getCall({ xp: b64url([{ ...ID5_HOLDOUT, src: [' ID5-Sync.com '] }]) });
    expect(call.experiments?.[0].sources).toEqual(['id5-sync.com']);
    expect(getCall({ xp: '!!!' }).issues).toEqual([{ path: 'xp', message: 'not valid Base64; experiments ignored' }]);
    expect(getCall({ xp: b64url({ a: 1 }) }).issues).toEqual([
      { path: 'xp', message: 'must be an array of experiments; ignored' },
    ]);
    expect(getCall({ xp: 'A'.repeat(20_000) }).issues[0].message).toMatch(/longer than 16384/);
    expect(parseAdCall({ url: '/call', body: '{"xp":{"id":"a"}}' }).issues[0].path).toBe('xp');
  });
  test('an entry whose getter throws is dropped, the call goes on', () => {
    const hostile = {
      get id(): string {
        throw new Error('boom');
      },
    };
    const call = parseAdCall({ url: '/genericpost', body: { networkId: 1, xp: [hostile, ID5_HOLDOUT] } });
    expect(call.experiments).toEqual([DECODED[0]]);
    expect(call.issues).toEqual([{ path: 'xp[0]', message: 'could not be read; dropped' }]);
  });
});
