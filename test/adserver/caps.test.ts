// The receiving side's caps (docs/ad-server.md "Caps"): every string and ext that is forwarded has a cap in every
// entry point, atype and mm are OpenRTB integers, the issues of one call are capped, and reading a hostile request
// stays linear in its size.
import { describe, expect, test } from 'vitest';
import { validateEids } from '../../src/core/index.js';
import type { Eid } from '../../src/core/index.js';
import {
  DEFAULT_LIMITS,
  bidRequestsJson,
  buildBidRequest,
  expandEnvelopes,
  logProviders,
  parseAdCall,
  parseAdCallRequest,
  readCookie,
} from '../../src/adserver/index.js';
import type { AdCall } from '../../src/adserver/index.js';
import { b64url } from './fixtures.js';

const ORIGIN = 'https://ads.example';
const post = (path: string, body: unknown) =>
  new Request(ORIGIN + path, { method: 'POST', body: JSON.stringify(body) });
const { maxIdLength, maxExtLength, maxExtDepth, maxIssues } = DEFAULT_LIMITS;

/** Nested `{ a: { a: … } }`, `levels` objects deep. */
const nested = (levels: number): Record<string, unknown> => (levels <= 1 ? { a: 1 } : { a: nested(levels - 1) });

/** Eids with one field over each cap, beside a clean uid that must survive. */
function hostileEids(long: number): unknown[] {
  return [
    {
      source: 'inserter.example',
      uids: [{ id: 'a' }],
      inserter: 'i'.repeat(long),
      matcher: 'm'.repeat(maxIdLength + 1),
      mm: 1e21,
    },
    {
      source: 'atype.example',
      uids: [
        { id: 'b', atype: 1e308 },
        { id: 'c', atype: 2 ** 31 },
        { id: 'ok', atype: 571187 },
      ],
    },
    {
      source: 'ext.example',
      uids: [
        { id: 'd', ext: { blob: 'x'.repeat(maxExtLength) } },
        { id: 'e', ext: nested(maxExtDepth + 1) },
        { id: 'f' },
      ],
    },
    { source: 'eidext.example', uids: [{ id: 'g' }], ext: { blob: 'x'.repeat(maxExtLength) } },
  ];
}

/** What survives: the same eids with every over-cap field (and uid) gone. */
const survivors: Eid[] = [
  { source: 'inserter.example', uids: [{ id: 'a' }] },
  { source: 'atype.example', uids: [{ id: 'b' }, { id: 'c' }, { id: 'ok', atype: 571187 }] },
  { source: 'ext.example', uids: [{ id: 'f' }] },
  { source: 'eidext.example', uids: [{ id: 'g' }] },
];

// The eids parameter and a Base64 `eids` field have their own cap (16 KB): those carry strings just over
// maxIdLength, under a raised parameter cap; the JSON bodies carry a 200,000-character inserter.
const wide = { limits: { maxEidsParamLength: 65_536 } };
const parsePost = (path: string, body: unknown, options = {}) => parseAdCallRequest(post(path, body), options);
const imp = [{ id: '1' }];
const entryPoints: [string, (eids: unknown[]) => Promise<AdCall> | AdCall, string][] = [
  ['GET eids parameter', (eids) => parseAdCall({ url: `${ORIGIN}/ac?nwid=1&eids=${b64url(eids)}` }, wide), 'eids'],
  ['POST body', (eids) => parsePost('/genericpost', { networkId: 1, eids }), 'eids'],
  ['POST Base64 eids', (eids) => parsePost('/genericpost', { networkId: 1, eids: b64url(eids) }, wide), 'eids'],
  ['OpenRTB 2.6 body', (eids) => parsePost('/call', { id: 'r', imp, user: { eids } }), 'user.eids'],
  ['OpenRTB 2.5 body', (eids) => parsePost('/call', { id: 'r', imp, user: { ext: { eids } } }), 'user.ext.eids'],
  ['Prebid adapter body', (eids) => parsePost('/prebid/v1', { networkId: 1, units: [{ formatId: 3 }], eids }), 'eids'],
];

describe('every forwarded string and ext has a cap, in every entry point', () => {
  test.each(entryPoints)('%s: each over-cap field is dropped and named', async (name, send, at) => {
    const long = /GET|Base64/.test(name) ? maxIdLength + 1 : 200_000;
    const call = await send(hostileEids(long));
    expect(call.eids).toEqual(survivors);
    const issues = call.issues.map((i) => `${i.path}: ${i.message}`);
    expect(issues).toEqual([
      `${at}[0].inserter: inserter is longer than ${maxIdLength} characters; inserter dropped`,
      `${at}[0].matcher: matcher is longer than ${maxIdLength} characters; matcher dropped`,
      `${at}[0].mm: mm 1e+21 is above OpenRTB's 32-bit integers; mm dropped`,
      `${at}[1].uids[0].atype: atype 1e+308 is outside OpenRTB's 32-bit integers; atype dropped, uid kept`,
      `${at}[1].uids[1].atype: atype 2147483648 is outside OpenRTB's 32-bit integers; atype dropped, uid kept`,
      `${at}[2].uids[0].ext: ext is longer than ${maxExtLength} characters of JSON`,
      `${at}[2].uids[1].ext: ext is nested deeper than ${maxExtDepth} levels`,
      `${at}[3].ext: ext is longer than ${maxExtLength} characters of JSON; ext dropped`,
    ]);
    const [json] = bidRequestsJson([buildBidRequest(call, { id: 'dsp' })]);
    expect(json).not.toMatch(/e\+|iii|mmm|xxx/);
    expect(json.length).toBeLessThan(2_000);
  });

  test('an ext exactly at the caps is kept, on the no-copy path and through core alike', async () => {
    const blob = 'x'.repeat(maxExtLength - '{"blob":""}'.length);
    const eids = [
      {
        source: 'a.example',
        uids: [
          { id: 'a', ext: { blob } },
          { id: 'b', ext: nested(maxExtDepth) },
        ],
      },
    ];
    for (const body of [{ eids }, { eids: [...eids, { source: 'b.example', uids: [] }] }]) {
      const call = await parseAdCallRequest(post('/genericpost', body));
      expect(call.eids).toEqual(eids);
    }
  });

  test('eids a decryptor returns are held to the same caps before they are forwarded', async () => {
    const decryptor = { source: 'liveramp.com', decrypt: () => ({ value: hostileEids(200_000) as Eid[], issues: [] }) };
    const { value, issues } = await expandEnvelopes([{ source: 'liveramp.com', uids: [{ id: 'env' }] }], decryptor);
    expect(value).toEqual(survivors);
    expect(issues.map((i) => i.path)).toContain('eids[0].uids[0].eids[0].inserter');
    expect(issues).toHaveLength(8);
  });

  test('atype and mm within OpenRTB integers are kept as sent, the unusual ones with a note', () => {
    const uids = [
      { id: 'a', atype: 2 ** 31 - 1 },
      { id: 'b', atype: -(2 ** 31) },
      { id: 'c', atype: 4 },
    ];
    const eids = [{ source: 'a.example', mm: 2 ** 31 - 1, uids }];
    const call = parseAdCall({ url: `${ORIGIN}/ac?eids=${b64url(eids)}` });
    expect(call.eids).toEqual(eids);
    expect(call.issues.map((i) => i.message)).toEqual([
      'atype -2147483648 is not 1, 2, 3 or >= 500 (AdCOM); kept as sent',
      'atype 4 is not 1, 2, 3 or >= 500 (AdCOM); kept as sent',
    ]);
  });
});

/** An ext of `keys` properties whose reads are counted, as a framework's parsed body could hold. */
function countedExt(keys: number, nest = false): { ext: Record<string, unknown>; reads: () => number } {
  let reads = 0;
  const ext: Record<string, unknown> = {};
  for (let i = 0; i < keys; i++) {
    Object.defineProperty(ext, `k${i}`, {
      enumerable: true,
      get: () => {
        reads++;
        return nest ? { v: 'x'.repeat(10) } : 'x'.repeat(10);
      },
    });
  }
  return { ext, reads: () => reads };
}

describe('an ext far over its cap is read only until the cap is passed, and measured once', () => {
  test.each([
    ['flat', false],
    ['nested', true],
  ])('a %s ext of 20,000 keys is read a few hundred times, not whole several times over', (_name, nest) => {
    for (const where of ['eid', 'uid'] as const) {
      const { ext, reads } = countedExt(20_000, nest);
      const eid =
        where === 'eid'
          ? { source: 'a.example', uids: [{ id: 'x' }], ext }
          : {
              source: 'a.example',
              uids: [{ id: 'x', ext }, { id: 'y' }],
            };
      const call = parseAdCall({ url: '/genericpost', method: 'POST', body: { eids: [eid] } });
      expect(call.issues.map((i) => i.message)).toEqual([
        where === 'eid'
          ? `ext is longer than ${maxExtLength} characters of JSON; ext dropped`
          : `ext is longer than ${maxExtLength} characters of JSON`,
      ]);
      // Each key read adds at least 10 characters: the walk stops within maxExtLength / 10 reads.
      expect(reads(), where).toBeLessThanOrEqual(maxExtLength / 10 + 1);
    }
  });

  test('video parameters far over maxTextLength are read only until the cap is passed; too deep, not relayed', () => {
    const { ext: video, reads } = countedExt(20_000);
    const units = [
      { formatId: 1, video },
      { formatId: 2, video: nested(maxExtDepth + 1) },
    ];
    const call = parseAdCall({ url: '/prebid/v1', method: 'POST', body: { networkId: 1, units } });
    expect(call.formats).toEqual([{ id: 1 }, { id: 2 }]);
    expect(call.issues.map((i) => i.path)).toEqual(['units[0].video', 'units[1].video']);
    expect(reads()).toBeLessThanOrEqual(DEFAULT_LIMITS.maxTextLength / 10 + 1);
  });

  test('an ext whose escapes make it longer than its characters is measured exactly, as JSON or as given', () => {
    const quotes = '"'.repeat(2_100); // 2,100 characters, 4,200 of JSON
    const toJSON = () => ({ blob: quotes });
    for (const ext of [{ blob: quotes }, { toJSON }]) {
      const { value, issues } = validateEids([{ source: 'a.example', uids: [{ id: 'x' }], ext }], DEFAULT_LIMITS);
      expect(value).toEqual([{ source: 'a.example', uids: [{ id: 'x' }] }]);
      expect(issues.map((i) => i.message)).toEqual([
        `ext is longer than ${maxExtLength} characters of JSON; ext dropped`,
      ]);
    }
    const fits = { toJSON: () => ({ blob: '"'.repeat(2_000) }) };
    const kept = validateEids([{ source: 'a.example', uids: [{ id: 'x' }], ext: fits }], DEFAULT_LIMITS).value;
    expect(kept[0].ext).toEqual({ blob: '"'.repeat(2_000) });
  });

  test('the no-copy path measures it once and the validation reuses that measure', () => {
    const { ext, reads } = countedExt(20_000);
    const { value, issues } = validateEids([{ source: 'a.example', uids: [{ id: 'x' }], ext }], DEFAULT_LIMITS, {
      reuse: true,
    });
    expect(value).toEqual([{ source: 'a.example', uids: [{ id: 'x' }] }]);
    expect(issues).toHaveLength(1);
    expect(reads()).toBeLessThanOrEqual(maxExtLength / 10 + 1);
  });

  test('an ext nested to the depth cap and far over the length cap is dropped, its siblings kept', async () => {
    const wide = Array.from({ length: 9_000 }, (_, i) => ({ [`k${i}`]: 'v'.repeat(10) }));
    const ext = { a: { b: wide } };
    const body = {
      eids: [
        { source: 'a.example', uids: [{ id: 'x' }], ext },
        { source: 'b.example', uids: [{ id: 'y' }] },
      ],
    };
    expect(JSON.stringify(body).length).toBeLessThan(DEFAULT_LIMITS.maxBodyBytes);
    const call = await parsePost('/genericpost', body);
    expect(call.eids).toEqual([
      { source: 'a.example', uids: [{ id: 'x' }] },
      { source: 'b.example', uids: [{ id: 'y' }] },
    ]);
  });
});

describe('the uid cap holds for the eid forwarded, after same-source eids are merged', () => {
  const { maxUids } = DEFAULT_LIMITS;
  /** `n` eids of one source, each within the uid cap, every uid id distinct. */
  const sameSource = (n: number) =>
    Array.from({ length: n }, (_, e) => ({
      source: 'id5-sync.com',
      uids: Array.from({ length: maxUids }, (_, u) => ({ id: `${e}-${u}` })),
    }));

  test.each(entryPoints)(
    '%s: one eid of at most maxUids uids, and an issue naming the merge',
    async (_name, send, at) => {
      const call = await send(sameSource(6));
      expect(call.eids).toHaveLength(1);
      expect(call.eids[0].uids).toHaveLength(maxUids);
      expect(call.eids[0].uids.map((u) => u.id)).toEqual(sameSource(1)[0].uids.map((u) => u.id));
      expect(call.issues).toEqual([
        {
          path: `${at}[0].uids`,
          message: `more than ${maxUids} uids once merged with the other eids of source "id5-sync.com": ${5 * maxUids} dropped`,
        },
      ]);
      const [json] = bidRequestsJson([buildBidRequest(call, { id: 'dsp' })]);
      expect(JSON.parse(json).user.eids[0].uids).toHaveLength(maxUids);
    },
  );

  test('the eids several envelopes open are held to the cap once merged too', async () => {
    const decryptor = {
      source: 'liveramp.com',
      decrypt: (id: string) => ({
        value: [{ source: 'uidapi.com', uids: Array.from({ length: maxUids }, (_, u) => ({ id: `${id}-${u}` })) }],
        issues: [],
      }),
    };
    const envelopes = [{ source: 'liveramp.com', uids: ['e1', 'e2', 'e3', 'e4'].map((id) => ({ id })) }];
    const { value, issues } = await expandEnvelopes(envelopes, decryptor);
    expect(value).toHaveLength(1);
    expect(value[0].uids).toHaveLength(maxUids);
    expect(issues).toEqual([
      {
        path: 'envelopes',
        message: `more than ${maxUids} uids of source "uidapi.com" once merged: ${3 * maxUids} dropped`,
      },
    ]);
  });
});

test('banner sizes and video integers over 32 bits are not relayed: no bid request carries 1e+21', async () => {
  const video = { mimes: ['video/mp4'], w: 1e21, h: 360, minduration: 2 ** 31, maxduration: 30, protocols: [2, 1e21] };
  Object.assign(video, { playerSize: [[1e21, 1]] });
  const imps = [
    { id: '1', banner: { format: [{ w: 1e21, h: 250 }] }, video },
    { id: '2', banner: { w: 300, h: 250 } },
  ];
  const call = await parseAdCallRequest(post('/call', { id: 'r', imp: imps, user: {} }));
  expect(call.formats[0].sizes).toBeUndefined();
  expect(call.issues.map((i) => i.path)).toEqual(['imp[0].banner.format']);
  for (const version of ['2.6', '2.5'] as const) {
    const request = buildBidRequest(call, { id: 'dsp', openrtb: version });
    expect(request.imp[0].video).toEqual({ mimes: ['video/mp4'], h: 360, maxduration: 30 });
    expect(request.imp[1].banner).toEqual({ format: [{ w: 300, h: 250 }] });
    expect(bidRequestsJson([request])[0]).not.toContain('e+');
  }
});

describe('the issues of one call are capped', () => {
  // 64 eids of 16 bad uids each: 1,024 issues before the cap.
  const badUids = () => Array.from({ length: 16 }, () => ({ id: 7 }));
  const eids = Array.from({ length: 64 }, (_, i) => ({ source: `s${i}.example`, uids: badUids() }));
  const body = { networkId: 1, eids };
  const found = 64 * 16 + 64; // one per uid, one per eid left without a uid

  test('a call lists maxIssues issues, counts the rest in issuesOmitted, and says so in a last issue', () => {
    const call = parseAdCall({ url: '/genericpost', body: JSON.stringify(body) });
    expect(call.networkId).toBe(1);
    expect(call.issues).toHaveLength(maxIssues + 1);
    expect(call.issuesOmitted).toBe(found - maxIssues);
    const message = `${found - maxIssues} more issues not listed (maxIssues ${maxIssues})`;
    expect(call.issues.at(-1)).toEqual({ path: 'issues', message });
    // The provider log counts every issue found, listed or not.
    expect(logProviders(call, () => {}).issues).toBe(found);
  });

  test('maxIssues is one of the limits a caller can set, and a clean call has no issuesOmitted key', () => {
    const call = parseAdCall({ url: '/genericpost', body: JSON.stringify(body) }, { limits: { maxIssues: 2 } });
    expect(call.issues.map((i) => i.path)).toEqual(['eids[0].uids[0].id', 'eids[0].uids[1].id', 'issues']);
    expect(call.issuesOmitted).toBe(found - 2);
    expect('issuesOmitted' in parseAdCall({ url: '/ac?nwid=1' })).toBe(false);
    // A limit passed as undefined keeps its default (a spread config must not turn every cap off).
    const spread = parseAdCall(
      { url: '/genericpost', body: JSON.stringify(body) },
      {
        limits: { maxIssues: undefined },
      },
    );
    expect(spread.issues).toHaveLength(maxIssues + 1);
  });

  test('a 900 KB URL of broken percent-escapes is one issue per parameter, read in linear time', () => {
    for (const query of ['gpp=%zz&'.repeat(112_500), '%zz=1&'.repeat(150_000), '%E0%41=1&'.repeat(100_000)]) {
      const started = performance.now();
      const call = parseAdCall({ url: `/ac?${query}nwid=1` });
      // Before, each broken escape threw inside decodeURIComponent: 1.8 s and 112,500 issues for the first query.
      expect(performance.now() - started).toBeLessThan(1_000);
      expect(call.networkId).toBe(1);
      expect(call.issues.length).toBeLessThanOrEqual(1);
    }
  });

  test('the first occurrence of a parameter wins, a malformed one too; an escaped key names its parameter', () => {
    const issues = [{ path: 'nwid', message: 'malformed percent-encoding; ignored' }];
    expect(parseAdCall({ url: '/ac?nwid=%zz&nwid=5' })).toMatchObject({ issues });
    expect(parseAdCall({ url: '/ac?nwid=%zz&nwid=5' }).networkId).toBeUndefined();
    expect(parseAdCall({ url: '/ac?n%77id=5&%6E%77%69%64=7&%zz=1&%FF=2' })).toMatchObject({ networkId: 5, issues: [] });
  });
});

describe('reading a hostile request stays linear in its size', () => {
  // Each 800 KB: a reader that searches for `=` again from every separator needs seconds (quadratic).
  test('a query of 400,000 parameters without `=` is read in well under a second', () => {
    const started = performance.now();
    expect(parseAdCall({ url: '/ac?' + 'a&'.repeat(400_000) + 'nwid=1' }).networkId).toBe(1);
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  test('a Cookie header of 400,000 empty cookies is read in well under a second', () => {
    const started = performance.now();
    expect(readCookie(';'.repeat(400_000) + 'pid=x', 'pid')).toBe('x');
    expect(performance.now() - started).toBeLessThan(1_000);
  });
});
