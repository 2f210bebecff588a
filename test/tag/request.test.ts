import { describe, expect, test } from 'vitest';
import { buildRequest, fitEids, MAX_GET_URL, targetString } from '../../src/tag/request.js';
import { decodeBase64Json, type Eid } from '../../src/core/index.js';

const ctx = (eids: Eid[] = [], params: Record<string, string> = {}) => ({
  domain: 'https://ads.example',
  networkId: 1234,
  eids,
  params,
  now: 1_700_000_000_000,
});
const eid = (source: string, size: number): Eid => ({ source, uids: [{ id: 'x'.repeat(size) }] });

describe('buildRequest', () => {
  test('GET carries the documented parameters in order, extension params, then eids last', () => {
    const r = buildRequest(
      'std',
      { siteId: 1, pageId: 2, formatId: 3, target: 'k=v' },
      { ...ctx([eid('criteo.com', 3)], { gdpr: '1' }), uid: 'u' },
    );
    expect(r.url).toMatch(
      /^https:\/\/ads\.example\/ac\?gdpr=1&nwid=1234&siteid=1&pgid=2&fmtid=3&tgt=k%3Dv&tmstp=1700000000000&uid=u&eids=[\w-]+$/,
    );
  });

  test('extension params cannot replace the call parameters or the eids', () => {
    const r = buildRequest('std', { siteId: 1 }, ctx([eid('criteo.com', 3)], { siteid: '666', eids: 'forged' }));
    const q = new URL(r.url).searchParams;
    expect(q.getAll('siteid')).toEqual(['1']);
    expect(q.getAll('eids')).toHaveLength(1);
    expect(q.get('eids')).not.toBe('forged');
    const body = JSON.parse(buildRequest('generic', { siteId: 1 }, ctx([], { siteId: '666', networkId: '1' })).body!);
    expect(body).toMatchObject({ siteId: 1, networkId: 1234 });
  });

  test('numeric strings become numbers and junk ids are left out', () => {
    const body = JSON.parse(buildRequest('generic', { siteId: ' 12 ', pageId: {}, formatId: NaN }, ctx()).body!);
    expect(body.siteId).toBe(12);
    expect('pageId' in body).toBe(false);
    expect('formatId' in body).toBe(false);
  });

  test('onecall without formats falls back to formatId', () => {
    const body = JSON.parse(buildRequest('onecall', { formatId: 9 }, ctx()).body!);
    expect(body.formats).toEqual([{ id: 9 }]);
  });

  test('POST bodies carry every eid, whatever their size', () => {
    const eids = Array.from({ length: 50 }, (_, i) => eid(`s${i}.example`, 500));
    const r = buildRequest('generic', {}, ctx(eids));
    expect(JSON.parse(r.body!).eids).toHaveLength(50);
    expect(r.dropped).toEqual([]);
  });
});

describe('fitEids and the GET URL limit', () => {
  test(`keeps every GET URL under ${MAX_GET_URL} characters, dropping unknown sources first, then the largest`, () => {
    const eids = [
      eid('criteo.com', 1500),
      eid('a.example', 300),
      eid('id5-sync.com', 5000),
      eid('pubcid.org', 200),
      eid('b.example', 100),
    ];
    const r = buildRequest('video', {}, ctx(eids));
    expect(r.url.length).toBeLessThan(MAX_GET_URL);
    expect(r.dropped).toEqual(['a.example', 'b.example', 'id5-sync.com']);
    expect(r.eids.map((e) => e.source)).toEqual(['criteo.com', 'pubcid.org']);
    expect(decodeBase64Json(new URL(r.url).searchParams.get('eids')!).value).toEqual(r.eids);
  });

  test('leaves nothing out when everything fits, and fills the budget as far as it can', () => {
    expect(fitEids([eid('criteo.com', 10)], 1000)).toMatchObject({ dropped: [] });
    for (let n = 6000; n < 8000; n += 97) {
      const r = buildRequest('std', {}, ctx([eid('criteo.com', n)]));
      expect(r.url.length).toBeLessThan(MAX_GET_URL);
      if (r.dropped.length)
        expect(buildRequest('std', {}, ctx([])).url.length + 6 + Math.ceil(((n + 37) * 4) / 3)).toBeGreaterThanOrEqual(
          MAX_GET_URL,
        );
    }
  });

  test('holds the 8,000-character limit to the character: every eid size around the boundary', () => {
    const base = buildRequest('std', {}, ctx([])).url.length;
    let longest = 0;
    // One character at a time across the sizes whose URL lands around 8,000 (a coarser step can miss an off-by-a-few
    // budget).
    for (let n = 5900; n < 6100; n++) {
      const r = buildRequest('std', {}, ctx([eid('criteo.com', n)]));
      expect(r.url.length).toBeLessThan(MAX_GET_URL);
      // The URL the eid would make: `&eids=` and unpadded Base64 (ceil(4 bytes / 3) characters) of the JSON array.
      const full = base + 6 + Math.ceil((JSON.stringify([eid('criteo.com', n)]).length * 4) / 3);
      if (r.dropped.length) expect(full).toBeGreaterThanOrEqual(MAX_GET_URL);
      else {
        expect(r.url.length).toBe(full);
        longest = Math.max(longest, r.url.length);
      }
    }
    // The loop really reached the boundary (unpadded Base64 lengths skip 4k + 1, so 7,999 itself may not occur).
    expect(longest).toBeGreaterThanOrEqual(MAX_GET_URL - 2);
  });

  test('drops every eid when even one does not fit, but the call still goes', () => {
    const r = buildRequest('std', {}, ctx([eid('criteo.com', 9000)]));
    expect(r.eids).toEqual([]);
    expect(new URL(r.url).searchParams.has('eids')).toBe(false);
    expect(r.dropped).toEqual(['criteo.com']);
  });
});

describe('targetString', () => {
  test('turns an object into k=v;k=v with arrays as comma lists and skips nested objects', () => {
    expect(targetString({ a: 1, b: ['x', 'y'], c: null, d: { no: 1 }, e: true })).toBe('a=1;b=x,y;e=true');
    expect(targetString('k=v')).toBe('k=v');
    expect(targetString(42)).toBeUndefined();
  });
});
