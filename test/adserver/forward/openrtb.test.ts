import { describe, expect, test } from 'vitest';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { buildBidRequest, createForwardingPolicy, eidsForPartner, parseAdCall } from '../../../src/adserver/index.js';
import type { AdCall } from '../../../src/adserver/index.js';
import { EUID, HEM, ID5, RAMP, UID2, UNKNOWN, b64url } from '../fixtures.js';
import { typecheckFile } from '../../support/typecheck.js';

/**
 * Type-checks JSON values as object literals against the published iab-openrtb types, in a virtual file next to
 * this one (so `iab-openrtb` resolves from node_modules). Object literals get excess-property checks at every
 * depth, so this checks what buildBidRequest really returns at run time, not only its declared type.
 * Returns the compiler's diagnostics.
 */
function checkLiterals(values: { type: 'BidRequest26' | 'BidRequest25' | 'Eids'; value: unknown }[]): string[] {
  const file = fileURLToPath(new URL('./openrtb.runtime.virtual.ts', import.meta.url));
  const source = [
    "import type { BidRequest as BidRequest26Spec, EID, UID, User } from 'iab-openrtb/v26';",
    "import type { BidRequest as BidRequest25 } from 'iab-openrtb/v25';",
    // The same widening as openrtb.typecheck.ts: AdCOM allows vendor atype and mm values >= 500.
    "type Eid = Omit<EID, 'uids' | 'mm'> & { uids: Array<Omit<UID, 'atype'> & { atype?: number }>; mm?: number };",
    'type Eids = Eid[];',
    "type BidRequest26 = Omit<BidRequest26Spec, 'user'> & { user?: Omit<User, 'eids'> & { eids?: Eids } };",
    ...values.map((v, i) => `export const v${i}: ${v.type} = ${JSON.stringify(v.value)};`),
  ].join('\n');
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    types: [],
    skipLibCheck: true,
  };
  const host = ts.createCompilerHost(options);
  const { getSourceFile, fileExists, readFile } = host;
  host.fileExists = (f) => f === file || fileExists(f);
  host.readFile = (f) => (f === file ? source : readFile(f));
  host.getSourceFile = (f, lang, ...rest) =>
    f === file ? ts.createSourceFile(f, source, lang) : getSourceFile(f, lang, ...rest);
  const program = ts.createProgram([file], options, host);
  return ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
}

const received = [ID5, UNKNOWN, UID2, HEM, EUID];
function sampleCall(): AdCall {
  const q = new URLSearchParams({
    nwid: '1234',
    siteid: '56',
    pgid: 'home',
    fmtid: '78',
    tgt: 'sport',
    uid: 'publisher-secret-user',
    gdpr: '1',
    gdpr_consent: 'CPtcf',
    us_privacy: '1YNN',
    gpp: 'DBABMA~x',
    gpp_sid: '2',
    eids: b64url(received),
  });
  return parseAdCall(
    {
      url: `https://ads.example/ac?${q}`,
      headers: { cookie: 'pid=pid-1', 'user-agent': 'UA/1', referer: 'https://news.example/article' },
    },
    { ip: '198.51.100.7' },
  );
}

describe('OpenRTB forwarding', () => {
  test('a 2.6 request carries every received eid, known and unknown, unmodified, in user.eids', () => {
    const call = sampleCall();
    const req = buildBidRequest(call, { id: 'dsp-a' }, { id: 'req-1' });
    expect(req.user?.eids).toEqual(received);
    expect(JSON.stringify(req.user?.eids)).toBe(JSON.stringify(received));
    expect(req.user?.ext).toBeUndefined();
    expect(req).toMatchObject({
      id: 'req-1',
      imp: [{ id: '1', tagid: '78', secure: 1, ext: { formatId: 78 } }],
      site: {
        id: '56',
        page: 'https://news.example/article',
        domain: 'news.example',
        keywords: 'sport',
        publisher: { id: '1234' },
        ext: { pageId: 'home' },
      },
      device: { ua: 'UA/1', ip: '198.51.100.7' },
      user: { id: 'pid-1', consent: 'CPtcf' },
      regs: { gdpr: 1, us_privacy: '1YNN', gpp: 'DBABMA~x', gpp_sid: [2] },
    });
  });

  test('a partner flagged OpenRTB 2.5 gets the eids in user.ext.eids and the privacy signals in ext', () => {
    const req = buildBidRequest(sampleCall(), { id: 'legacy', openrtb: '2.5' });
    expect(req.user).toEqual({ id: 'pid-1', ext: { eids: received, consent: 'CPtcf' } });
    expect(req.regs).toEqual({ ext: { gdpr: 1, us_privacy: '1YNN', gpp: 'DBABMA~x', gpp_sid: [2] } });
    expect('eids' in (req.user ?? {})).toBe(false);
  });

  test('never passes the publisher uid on to partners', () => {
    const json = JSON.stringify(buildBidRequest(sampleCall(), { id: 'dsp' }));
    expect(json).not.toContain('publisher-secret-user');
  });

  test('a DMP receives only the eids of its one preferred provider, by id or by source', () => {
    const call = sampleCall();
    expect(buildBidRequest(call, { id: 'dmp', kind: 'dmp', preferredProvider: 4 }).user?.eids).toEqual([UID2]);
    expect(eidsForPartner(call.eids, { id: 'dmp', kind: 'dmp', preferredProvider: 'id5-sync.com' })).toEqual([ID5]);
    expect(
      buildBidRequest(call, { id: 'dmp', kind: 'dmp', preferredProvider: 'criteo.com' }).user?.eids,
    ).toBeUndefined();
  });

  test('a DMP without a registered preferred provider is a configuration error', () => {
    expect(() => eidsForPartner([ID5], { id: 'dmp', kind: 'dmp' })).toThrow(/preferredProvider/);
    expect(() => eidsForPartner([ID5], { id: 'dmp', kind: 'dmp', preferredProvider: 'example.org' })).toThrow(
      /preferredProvider/,
    );
  });

  test('extra eids (from envelope expansion) follow the received ones', () => {
    const extra = [{ ...RAMP, inserter: 'ads.example' }];
    const req = buildBidRequest(sampleCall(), { id: 'dsp' }, { extraEids: extra });
    expect(req.user?.eids).toEqual([...received, ...extra]);
  });

  test('one imp per one-call format, with the tag id', () => {
    const call = parseAdCall({ url: '/call', body: { networkId: 1, formats: [{ id: 1, tagId: 'top' }, { id: 2 }] } });
    expect(buildBidRequest(call, { id: 'dsp' }).imp).toEqual([
      { id: '1', tagid: 'top', ext: { formatId: 1 } },
      { id: '2', tagid: '2', ext: { formatId: 2 } },
    ]);
  });

  test('placement details reach each imp: banner sizes, video in the partner version, floor and gpid', () => {
    const call = parseAdCall({
      url: 'https://ads.example/prebid/v1',
      body: {
        networkId: 1,
        units: [
          {
            bidId: 'b1',
            adUnitCode: 'top',
            formatId: 3,
            gpid: '/1/top',
            banner: [
              [300, 250],
              [728, 90],
            ],
            floor: { value: 1.5, currency: 'USD' },
          },
          // `placement` is 2.5 only, `plcmt` and `podid` 2.6 only; `mimes` of the wrong kind and an unknown key are not
          // relayed.
          {
            bidId: 'b2',
            adUnitCode: 'player',
            formatId: 4,
            video: {
              context: 'instream',
              mimes: ['video/mp4'],
              protocols: [2, 3],
              playerSize: [[640, 480]],
              podid: 'p1',
              placement: 1,
              skip: 'yes',
              custom: 1,
            },
          },
        ],
      },
    });
    expect(call.issues).toEqual([]);
    const r26 = buildBidRequest(call, { id: 'dsp' });
    expect(r26.imp).toEqual([
      {
        id: '1',
        tagid: 'top',
        banner: {
          format: [
            { w: 300, h: 250 },
            { w: 728, h: 90 },
          ],
        },
        bidfloor: 1.5,
        bidfloorcur: 'USD',
        ext: { formatId: 3, gpid: '/1/top' },
      },
      {
        id: '2',
        tagid: 'player',
        video: { mimes: ['video/mp4'], protocols: [2, 3], podid: 'p1', w: 640, h: 480, plcmt: 1 },
        ext: { formatId: 4 },
      },
    ]);
    expect(buildBidRequest(call, { id: 'old', openrtb: '2.5' }).imp[1].video).toEqual({
      mimes: ['video/mp4'],
      protocols: [2, 3],
      placement: 1,
      w: 640,
      h: 480,
    });
    // A partner reading both versions gets only the fields both have.
    expect(buildBidRequest(call, { id: 'both', openrtb: 'both' }).imp[1].video).toEqual({
      mimes: ['video/mp4'],
      protocols: [2, 3],
      w: 640,
      h: 480,
    });
  });

  test('a floor without a currency: USD from an OpenRTB imp (its default), EUR from a Prebid unit (the adapter asks in EUR)', () => {
    const ortb = parseAdCall({ url: '/genericpost', body: { imp: [{ id: 'i', tagid: '9', bidfloor: 1.5 }] } });
    expect(buildBidRequest(ortb, { id: 'dsp' }).imp[0]).toMatchObject({ bidfloor: 1.5, bidfloorcur: 'USD' });
    const prebid = parseAdCall({
      url: '/prebid/v1',
      body: { networkId: 1, units: [{ bidId: 'b', formatId: 3, floor: { value: 2 } }] },
    });
    expect(buildBidRequest(prebid, { id: 'dsp' }).imp[0]).toMatchObject({ bidfloor: 2, bidfloorcur: 'EUR' });
  });

  test("an OpenRTB imp's own w / h win over playerSize, and its video fields pass through", () => {
    const call = parseAdCall({
      url: '/genericpost',
      body: {
        imp: [
          { id: 'i', tagid: '9', video: { mimes: ['video/mp4'], w: 320, h: 180, playerSize: [640, 480], plcmt: 2 } },
        ],
      },
    });
    expect(buildBidRequest(call, { id: 'dsp' }).imp[0].video).toEqual({
      mimes: ['video/mp4'],
      w: 320,
      h: 180,
      plcmt: 2,
    });
    // OpenRTB requires `mimes`: a video without it is not relayed (the imp still goes, with its tag id).
    const bare = parseAdCall({
      url: '/genericpost',
      body: { imp: [{ id: 'i', tagid: '9', video: { w: 320, h: 180 } }] },
    });
    expect(buildBidRequest(bare, { id: 'dsp' }).imp).toEqual([{ id: '1', tagid: '9', ext: { formatId: 9 } }]);
  });

  test('a call without eids, user ids or consent yields no user and no regs', () => {
    const req = buildBidRequest(parseAdCall({ url: '/ac?nwid=1&fmtid=2' }), { id: 'dsp' });
    expect(req.user).toBeUndefined();
    expect(req.regs).toBeUndefined();
  });

  test('the built requests type-check against the published iab-openrtb 2.6 and 2.5 types', () => {
    const file = fileURLToPath(new URL('./openrtb.typecheck.ts', import.meta.url));
    expect(typecheckFile(file)).toEqual([]);
  }, 60_000);

  test('the requests built at run time, as JSON, fit the published iab-openrtb 2.6 and 2.5 types key for key', () => {
    const call = sampleCall();
    const extraEids = [{ ...RAMP, inserter: 'ads.example' }];
    const r25 = buildBidRequest(call, { id: 'legacy', openrtb: '2.5' }, { extraEids, test: true });
    const policy = createForwardingPolicy({
      permissions: [{ source: 'id5-sync.com', partners: ['dsp'] }],
      consent: { enforce: false },
    });
    const both = buildBidRequest(call, { id: 'both', openrtb: 'both' }, { extraEids, policy });
    // Placement details of every kind, in each version.
    const video = {
      context: 'instream',
      mimes: ['video/mp4'],
      protocols: [2, 3],
      playerSize: [[640, 480]],
      podid: 'p1',
      placement: 1,
      skip: 1,
    };
    const placed = parseAdCall({
      url: '/prebid/v1',
      body: {
        networkId: 1,
        units: [
          { bidId: 'b1', formatId: 3, gpid: '/1/top', banner: [[300, 250]], floor: { value: 1.5, currency: 'USD' } },
          { bidId: 'b2', formatId: 4, video },
        ],
      },
    });
    const built = [
      { type: 'BidRequest26' as const, value: buildBidRequest(call, { id: 'other' }, { extraEids, policy }) },
      { type: 'BidRequest26' as const, value: both },
      { type: 'BidRequest25' as const, value: buildBidRequest(call, { id: 'legacy', openrtb: '2.5' }, { policy }) },
      { type: 'Eids' as const, value: both.user?.ext?.eids },
      { type: 'BidRequest26' as const, value: buildBidRequest(call, { id: 'dsp' }, { extraEids, test: true }) },
      { type: 'BidRequest26' as const, value: buildBidRequest(call, { id: 'dmp', kind: 'dmp', preferredProvider: 4 }) },
      {
        type: 'BidRequest26' as const,
        value: buildBidRequest(
          parseAdCall({ url: '/call', body: { networkId: 1, formats: [{ id: 1, tagId: 'top' }] } }),
          { id: 'dsp' },
        ),
      },
      { type: 'BidRequest25' as const, value: r25 },
      { type: 'BidRequest26' as const, value: buildBidRequest(placed, { id: 'dsp' }) },
      { type: 'BidRequest25' as const, value: buildBidRequest(placed, { id: 'legacy', openrtb: '2.5' }) },
      { type: 'BidRequest26' as const, value: buildBidRequest(placed, { id: 'both', openrtb: 'both' }) },
      { type: 'BidRequest25' as const, value: buildBidRequest(placed, { id: 'both', openrtb: 'both' }) },
      // 2.5 types user.ext as a free record: check the eids placed in it against the 2.6 EID type.
      { type: 'Eids' as const, value: r25.user?.ext?.eids },
    ];
    expect(built[0].value.user?.eids).toHaveLength(received.length); // id5 removed by the policy, the extra one added
    expect(both.user?.eids).toHaveLength(received.length);
    expect(checkLiterals(built)).toEqual([]);
    // Control: the check does see a key the published type lacks, nested or not, and a wrong placement.
    const bad = JSON.parse(JSON.stringify(built[4].value));
    bad.user.eids[0].uids[0].bogus = 1;
    bad.regs.ext = { gdpr: 1 };
    bad.imp[0].formatId = 2;
    expect(checkLiterals([{ type: 'BidRequest26', value: bad }]).join('\n')).toMatch(
      /bogus[\s\S]*formatId|formatId[\s\S]*bogus/,
    );
    expect(checkLiterals([{ type: 'BidRequest25', value: { id: '1', imp: [], user: { eids: [] } } }])).not.toEqual([]);
  }, 60_000);
});
