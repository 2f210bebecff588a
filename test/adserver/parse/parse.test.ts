import { describe, expect, test } from 'vitest';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { decodeBase64Json, decodeBase64Text, validateEids } from '../../../src/core/index.js';
import type { IncomingMessage } from 'node:http';
import {
  DEFAULT_LIMITS,
  parseAdCall,
  parseAdCallRequest,
  parseIncomingMessage,
  readCookie,
} from '../../../src/adserver/index.js';
import type { AdCall } from '../../../src/adserver/index.js';
import { EUID, ID5, UID2, UNKNOWN, b64, b64url, getCall } from '../fixtures.js';

const paths = (call: AdCall) => call.issues.map((i) => i.path);

describe('raw personal data in a call', () => {
  test('a uid, a target or an eid id holding an email is dropped with an issue naming it; the rest is read', () => {
    const eids = b64url([{ source: 'criteo.com', uids: [{ id: 'j@x.com' }, { id: 'c1' }] }]);
    const get = parseAdCall({ url: `/ac?nwid=1&uid=jane%40example.com&tgt=mail%3Djane%2540example.com&eids=${eids}` });
    expect(get).toMatchObject({ networkId: 1, eids: [{ source: 'criteo.com', uids: [{ id: 'c1' }] }] });
    expect(get.uid).toBeUndefined();
    expect(get.target).toBeUndefined();
    expect(get.issues.map((i) => i.path)).toEqual(expect.arrayContaining(['uid', 'tgt', 'eids[0].uids[0].id']));
    const post = parseAdCall({
      url: '/genericpost',
      method: 'POST',
      body: JSON.stringify({ networkId: 1, uid: 'Jane.Doe@Example.com', target: 'a=1' }),
    });
    expect(post).toMatchObject({ networkId: 1, target: 'a=1' });
    expect(post.uid).toBeUndefined();
    expect(post.issues).toContainEqual({ path: 'uid', message: expect.stringMatching(/email address/) as string });
  });
});

describe('GET /ac', () => {
  test('reads network, site, page, format, target, timestamp, uid, pid and eids', () => {
    const call = getCall(
      {
        nwid: 1234,
        siteid: 56,
        pgid: 'home',
        fmtid: 78,
        tgt: 'a=1;b=2',
        tmstp: 1700000000000,
        uid: 'pub-user-1',
        eids: b64url([ID5, UID2]),
      },
      'other=1; pid=3f2a9c; x=y',
    );
    expect(call).toEqual({
      endpoint: 'ac',
      networkId: 1234,
      siteId: 56,
      pageId: 'home',
      formats: [{ id: 78 }],
      target: 'a=1;b=2',
      timestamp: 1700000000000,
      uid: 'pub-user-1',
      pid: '3f2a9c',
      eids: [ID5, UID2],
      consent: {},
      issues: [],
    });
  });

  test.each([
    ['standard padded', b64],
    ['standard unpadded', (v: unknown) => b64(v).replace(/=+$/, '')],
    ['URL-safe padded', (v: unknown) => b64url(v) + '='.repeat((4 - (b64url(v).length % 4)) % 4)],
    ['URL-safe unpadded', b64url],
  ])('decodes %s Base64', (_name, encode) => {
    // '???' and '>>>' put '/' and '+' (or '_' and '-') into the Base64 text.
    const eids = [{ source: 'example.org', uids: [{ id: '???>>>~~~' }] }, ID5];
    const q = new URLSearchParams({ nwid: '1', eids: encode(eids) });
    expect(parseAdCall({ url: `/ac?${q}` }).eids).toEqual(eids);
  });

  test('restores a standard Base64 "+" that arrived unencoded as a space', () => {
    const eids = [{ source: 'example.org', uids: [{ id: '>>>>' }] }];
    const text = b64(eids);
    expect(text).toContain('+');
    const call = parseAdCall({ url: `/ac?nwid=1&eids=${text}` }); // not percent-encoded: '+' decodes to ' '
    expect(call.eids).toEqual(eids);
    expect(call.issues).toEqual([]);
  });

  test('accepts a URL object and a bare path with query', () => {
    const url = new URL(`https://ads.example/ac?nwid=9&eids=${b64url([ID5])}`);
    expect(parseAdCall({ url }).networkId).toBe(9);
    expect(parseAdCall({ url: `/ac?nwid=9&eids=${b64url([ID5])}` }).eids).toEqual([ID5]);
  });

  test('reads the consent signals', () => {
    const call = getCall({
      nwid: 1,
      gdpr: 1,
      gdpr_consent: 'CPXxRfAPXxRfAAfKABENB-CgAAAAAAAAAAYgAAAAAAAA',
      gpp: 'DBABMA~CPXxRfA',
      gpp_sid: '2,6',
      us_privacy: '1YNN',
    });
    expect(call.consent).toEqual({
      gdpr: 1,
      gdprConsent: 'CPXxRfAPXxRfAAfKABENB-CgAAAAAAAAAAYgAAAAAAAA',
      gpp: 'DBABMA~CPXxRfA',
      gppSid: [2, 6],
      usPrivacy: '1YNN',
    });
  });

  test('records headers useful to bid requests and the IP only when given', () => {
    const call = parseAdCall(
      {
        url: '/ac?nwid=1',
        headers: { 'user-agent': 'Mozilla/5.0', referer: 'https://news.example/a', 'x-forwarded-for': '1.2.3.4' },
      },
      { ip: '198.51.100.1' },
    );
    expect(call).toMatchObject({ userAgent: 'Mozilla/5.0', referer: 'https://news.example/a', ip: '198.51.100.1' });
    expect(parseAdCall({ url: '/ac?nwid=1', headers: { 'x-forwarded-for': '1.2.3.4' } }).ip).toBeUndefined();
  });

  test('leaves out an absent eids parameter without an issue', () => {
    const call = getCall({ nwid: 1, siteid: 2 });
    expect(call.eids).toEqual([]);
    expect(call.issues).toEqual([]);
  });
});

describe('POST /genericpost and /call', () => {
  const generic = {
    networkId: 1234,
    siteId: 56,
    pageId: 789,
    formatId: 12,
    target: 'k=v',
    timestamp: 1700000000000,
    uid: 'u-1',
    eids: [ID5, UNKNOWN],
  };

  test('reads a generic POST body given as text', () => {
    const call = parseAdCall({ url: 'https://ads.example/genericpost', method: 'POST', body: JSON.stringify(generic) });
    expect(call).toMatchObject({
      endpoint: 'genericpost',
      networkId: 1234,
      siteId: 56,
      pageId: '789',
      formats: [{ id: 12 }],
      target: 'k=v',
      uid: 'u-1',
      eids: [ID5, UNKNOWN],
      issues: [],
    });
  });

  test('reads a one-call body with several formats and tag ids', () => {
    const body = {
      networkId: 1234,
      siteId: 56,
      pageId: 'p',
      formats: [{ id: 1, tagId: 'top' }, { id: 2 }],
      eids: [UID2, EUID],
    };
    const call = parseAdCall({ url: '/call', method: 'POST', body: new TextEncoder().encode(JSON.stringify(body)) });
    expect(call).toMatchObject({
      endpoint: 'call',
      formats: [{ id: 1, tagId: 'top' }, { id: 2 }],
      eids: [UID2, EUID],
      issues: [],
    });
  });

  test('reads a body a framework already parsed', () => {
    expect(parseAdCall({ url: '/genericpost', method: 'POST', body: generic }).eids).toEqual([ID5, UNKNOWN]);
  });

  test('decodes an eids field sent as a Base64 string', () => {
    expect(parseAdCall({ url: '/call', method: 'POST', body: { networkId: 1, eids: b64([ID5]) } }).eids).toEqual([ID5]);
  });

  test('reads a WHATWG Request, GET and POST', async () => {
    const post = new Request('https://ads.example/genericpost', {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: 'pid=p-1' },
      body: JSON.stringify(generic),
    });
    expect(await parseAdCallRequest(post)).toMatchObject({
      endpoint: 'genericpost',
      pid: 'p-1',
      eids: [ID5, UNKNOWN],
      issues: [],
    });
    const get = new Request(`https://ads.example/ac?nwid=5&eids=${b64url([UID2])}`, { headers: { cookie: 'pid=p-2' } });
    expect(await parseAdCallRequest(get)).toMatchObject({ endpoint: 'ac', networkId: 5, pid: 'p-2', eids: [UID2] });
  });

  test('a request object that throws when read gives a rejected promise, never a synchronous throw', async () => {
    const broken = new Proxy(
      {},
      {
        get: () => {
          throw new Error('unreadable');
        },
      },
    );
    let incoming: Promise<unknown> | undefined;
    let request: Promise<unknown> | undefined;
    expect(() => (incoming = parseIncomingMessage(broken as IncomingMessage))).not.toThrow();
    expect(() => (request = parseAdCallRequest(broken as Request))).not.toThrow();
    await expect(incoming).rejects.toThrow('unreadable');
    await expect(request).rejects.toThrow('unreadable');
  });

  test('reads every request-target form node:http passes on, never throwing: origin-form, absolute-form, dot segments, broken hosts', async () => {
    const q = `?nwid=5&eids=${b64url([UID2])}`;
    const cases: [string, string][] = [
      [`/ac${q}`, 'ac'],
      [`http://ads.example/ac${q}`, 'ac'],
      [`http://[bad/ac${q}`, 'ac'],
      [`http://ads.example:99999/ac${q}`, 'ac'],
      [`/x/../ac${q}`, 'ac'],
      [`/ac/.${q}`, 'ac'],
      [`/x/%2e%2e/ac${q}`, 'ac'],
      [`//ads.example/ac${q}`, 'ac'],
      [`//[x/ac${q}`, 'unknown'],
      ['*', 'unknown'],
    ];
    for (const [url, endpoint] of cases) {
      const req = { url, method: 'GET', headers: { host: 'ads.example' }, socket: {} } as unknown as IncomingMessage;
      const call = await parseIncomingMessage(req);
      expect([url, call.endpoint]).toEqual([url, endpoint]);
      if (endpoint === 'ac') expect(call).toMatchObject({ networkId: 5, eids: [UID2], issues: [] });
      else expect(call.issues.length).toBeGreaterThan(0);
    }
  });

  test("never touches a GET request's body (on Node, @hono/node-server builds a whole Request when it is read)", async () => {
    const get = new Request(`https://ads.example/ac?nwid=5&eids=${b64url([UID2])}`);
    Object.defineProperty(get, 'body', { get: () => expect.unreachable('body read for a GET') });
    expect(await parseAdCallRequest(get)).toMatchObject({ endpoint: 'ac', networkId: 5, eids: [UID2], issues: [] });
  });

  test('reads a Node IncomingMessage from a real http server, GET and POST', async () => {
    const seen: AdCall[] = [];
    const server = createServer(async (req, res) => {
      seen.push(await parseIncomingMessage(req, { ip: req.socket.remoteAddress }));
      res.end('ok');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      await fetch(`${base}/ac?nwid=7&eids=${b64url([ID5])}`, { headers: { cookie: 'pid=abc' } });
      await fetch(`${base}/call`, {
        method: 'POST',
        body: JSON.stringify({ networkId: 7, formats: [{ id: 3 }], eids: [EUID] }),
      });
    } finally {
      server.close();
    }
    expect(seen[0]).toMatchObject({ endpoint: 'ac', networkId: 7, pid: 'abc', eids: [ID5], ip: '127.0.0.1' });
    expect(seen[1]).toMatchObject({ endpoint: 'call', networkId: 7, formats: [{ id: 3 }], eids: [EUID], issues: [] });
  });
});

test('uses req.body when a body parser (express.json style) already read the stream', async () => {
  let seen: AdCall | undefined;
  const server = createServer(async (req, res) => {
    // What express.json() does: read the stream, then hang the parsed object on req.body.
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    (req as typeof req & { body: unknown }).body = JSON.parse(Buffer.concat(chunks).toString());
    seen = await parseIncomingMessage(req);
    res.end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/genericpost`, {
      method: 'POST',
      body: JSON.stringify({ networkId: 3, eids: [UID2] }),
    });
  } finally {
    server.close();
  }
  expect(seen).toMatchObject({ endpoint: 'genericpost', networkId: 3, eids: [UID2], issues: [] });
});

describe('malformed input never fails the call', () => {
  test('broken Base64 drops the eids and keeps the rest of the call', () => {
    const call = getCall({ nwid: 1234, siteid: 1, uid: 'u', eids: '%%%not*base64%%%' });
    expect(call).toMatchObject({ networkId: 1234, siteId: 1, uid: 'u', eids: [] });
    expect(call.issues).toEqual([{ path: 'eids', message: 'not valid Base64; all eids dropped' }]);
  });

  test('Base64 of something that is not JSON drops the eids with an issue', () => {
    const call = getCall({ nwid: 1, eids: Buffer.from('{not json').toString('base64url') });
    expect(call.eids).toEqual([]);
    expect(call.issues[0].message).toMatch(/not hold valid JSON/);
  });

  test('JSON that is not an array drops the eids with an issue', () => {
    const call = getCall({ nwid: 1, eids: b64url({ source: 'id5-sync.com' }) });
    expect(call.eids).toEqual([]);
    expect(call.issues).toEqual([{ path: 'eids', message: 'eids must be an array' }]);
  });

  test('wrong shapes drop only the bad eids and uids, each with its own issue', () => {
    const eids = [
      ID5,
      'a string',
      { uids: [{ id: 'x' }] },
      { source: 'criteo.com', uids: [] },
      { source: 'pubcid.org', uids: [{ id: 42 }, { id: 'ok' }] },
      { source: 'adserver.org', uids: [{ id: 'y', atype: 4 }] },
      { source: 'yahoo.com', uids: [{ id: 'z', ext: 'nope' }] },
      UID2,
    ];
    const call = getCall({ nwid: 1, eids: b64url(eids) });
    expect(call.eids).toEqual([
      ID5,
      { source: 'pubcid.org', uids: [{ id: 'ok' }] },
      { source: 'adserver.org', uids: [{ id: 'y', atype: 4 }] },
      UID2,
    ]);
    expect(paths(call)).toEqual([
      'eids[1]',
      'eids[2].source',
      'eids[3].uids',
      'eids[4].uids[0].id',
      'eids[5].uids[0].atype',
      'eids[6].uids[0].ext',
      'eids[6]',
    ]);
  });

  test('an unusual atype (a provider documents 4 and 5 for device ids) keeps the uid, as sent, with an issue', () => {
    const device = {
      source: 'device.example',
      uids: [
        { id: 'idfa-1', atype: 4 },
        { id: 'gaid-1', atype: 5 },
      ],
    };
    for (const call of [
      getCall({ nwid: 1, eids: b64url([ID5, device]) }),
      parseAdCall({ url: '/call', body: JSON.stringify({ networkId: 1, eids: [ID5, device] }) }),
    ]) {
      expect(call.eids).toEqual([ID5, device]);
      expect(call.issues).toEqual([
        { path: 'eids[1].uids[0].atype', message: 'atype 4 is not 1, 2, 3 or >= 500 (AdCOM); kept as sent' },
        { path: 'eids[1].uids[1].atype', message: 'atype 5 is not 1, 2, 3 or >= 500 (AdCOM); kept as sent' },
      ]);
    }
  });

  test('keeps inserter, matcher, mm and ext exactly, and same-source eids of different inserters apart', () => {
    const pub = {
      source: 'uidapi.com',
      uids: [{ id: 'u1', atype: 3 }],
      inserter: 'pub.example',
      matcher: 'uidapi.com',
      mm: 3,
      ext: { rtiPartner: 'UID2' },
    };
    const ssp = { source: 'uidapi.com', uids: [{ id: 'u2', atype: 3 }], inserter: 'ssp.example', mm: 2 };
    for (const call of [
      getCall({ nwid: 1, eids: b64url([pub, ssp]) }),
      parseAdCall({ url: '/genericpost', body: { networkId: 1, eids: [pub, ssp] } }),
    ]) {
      expect(call.issues).toEqual([]);
      expect(call.eids).toEqual([pub, ssp]);
    }
  });

  test('an eids parameter over the cap is ignored without being decoded', () => {
    const call = getCall({ nwid: 1, eids: 'A'.repeat(DEFAULT_LIMITS.maxEidsParamLength + 4) });
    expect(call.eids).toEqual([]);
    expect(call.issues).toEqual([
      {
        path: 'eids',
        message: `parameter longer than ${DEFAULT_LIMITS.maxEidsParamLength} characters; all eids dropped`,
      },
    ]);
  });

  test('keeps the first maxEids eids, maxUids uids and drops ids over maxIdLength', () => {
    const many = Array.from({ length: 5 }, (_, i) => ({ source: `s${i}.example`, uids: [{ id: `${i}` }] }));
    const call = parseAdCall({ url: '/call', body: { networkId: 1, eids: many } }, { limits: { maxEids: 3 } });
    expect(call.eids.map((e) => e.source)).toEqual(['s0.example', 's1.example', 's2.example']);
    expect(call.issues).toEqual([{ path: 'eids', message: 'more than 3 eids: 2 dropped' }]);

    const uids = Array.from({ length: DEFAULT_LIMITS.maxUids + 2 }, (_, i) => ({ id: `u${i}` }));
    const long = { source: 'criteo.com', uids: [{ id: 'x'.repeat(DEFAULT_LIMITS.maxIdLength + 1) }, { id: 'short' }] };
    const call2 = parseAdCall({ url: '/call', body: { networkId: 1, eids: [{ source: 'pubcid.org', uids }, long] } });
    expect(call2.eids[0].uids).toHaveLength(DEFAULT_LIMITS.maxUids);
    expect(call2.eids[1].uids).toEqual([{ id: 'short' }]);
    expect(call2.issues.map((i) => i.message)).toEqual([
      `more than ${DEFAULT_LIMITS.maxUids} uids: 2 dropped`,
      `id is longer than ${DEFAULT_LIMITS.maxIdLength} characters`,
    ]);
  });

  test('a body that is not JSON, or not an object, is ignored with an issue', () => {
    expect(parseAdCall({ url: '/genericpost', method: 'POST', body: '{"networkId": 1,' }).issues).toEqual([
      { path: 'body', message: 'not valid JSON; body ignored' },
    ]);
    expect(parseAdCall({ url: '/genericpost', method: 'POST', body: '[1,2]' }).issues).toEqual([
      { path: 'body', message: 'must be a JSON object; body ignored' },
    ]);
    expect(parseAdCall({ url: '/genericpost', method: 'POST', body: '' }).issues).toEqual([
      { path: 'body', message: 'POST ad call with an empty body' },
    ]);
    expect(parseAdCall({ url: '/genericpost', method: 'POST' }).issues).toEqual([
      { path: 'body', message: 'POST ad call without a body' },
    ]);
  });

  test('an eids field that is not an array or string drops only the eids', () => {
    const call = parseAdCall({ url: '/genericpost', body: { networkId: 4, eids: { source: 'x' } } });
    expect(call).toMatchObject({ networkId: 4, eids: [] });
    expect(call.issues).toEqual([{ path: 'eids', message: 'eids must be an array' }]);
  });

  test('a body over maxBodyBytes is not parsed, as text, as a Request with Content-Length, and streamed', async () => {
    const big = JSON.stringify({ networkId: 1, eids: [ID5], pad: 'x'.repeat(2000) });
    const limits = { maxBodyBytes: 1000 };
    const expected = { path: 'body', message: 'larger than 1000 bytes; body ignored' };
    expect(parseAdCall({ url: '/genericpost', method: 'POST', body: big }, { limits }).issues).toEqual([expected]);

    const withLength = new Request('https://a.example/genericpost', {
      method: 'POST',
      body: big,
      headers: { cookie: 'pid=keep' },
    });
    const r1 = await parseAdCallRequest(withLength, { limits });
    expect(r1).toMatchObject({ endpoint: 'genericpost', pid: 'keep', eids: [], issues: [expected] });

    const encoder = new TextEncoder();
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        for (let i = 0; i < 10; i++) c.enqueue(encoder.encode(big.slice(i * 300, (i + 1) * 300)));
        c.close();
      },
    });
    const streamed = new Request('https://a.example/call', {
      method: 'POST',
      body: stream,
      duplex: 'half',
    } as RequestInit);
    expect((await parseAdCallRequest(streamed, { limits })).issues).toEqual([expected]);
  });

  test('an oversized body to a Node server is drained so the server still answers', async () => {
    const server = createServer(async (req, res) => {
      const call = await parseIncomingMessage(req, { limits: { maxBodyBytes: 100 } });
      res.end(JSON.stringify(call.issues));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/call`, {
        method: 'POST',
        body: 'x'.repeat(50_000),
      });
      expect(await res.json()).toEqual([{ path: 'body', message: 'larger than 100 bytes; body ignored' }]);
    } finally {
      server.close();
    }
  });

  test('invalid ids, a pid cookie with forbidden characters and an overlong uid are dropped with issues', () => {
    const call = getCall(
      {
        nwid: 'abc',
        siteid: '-3',
        fmtid: '1.5',
        uid: 'u'.repeat(DEFAULT_LIMITS.maxUserIdLength + 1),
        eids: b64url([ID5]),
      },
      'pid="a b"',
    );
    expect(call).toMatchObject({ endpoint: 'ac', eids: [ID5], formats: [] });
    expect(call.networkId).toBeUndefined();
    expect(call.uid).toBeUndefined();
    expect(call.pid).toBeUndefined();
    expect(paths(call)).toEqual(['nwid', 'siteid', 'fmtid', 'uid', 'cookie.pid']);
  });

  test('an ext nested deeper than JSON.stringify can write back is dropped with an issue, so the call stays serializable', () => {
    const deep = (n: number) => '{"a":'.repeat(n) + '1' + '}'.repeat(n);
    const body = `{"networkId":1,"eids":[{"source":"id5-sync.com","uids":[{"id":"x","ext":${deep(40_000)}},{"id":"y","ext":${deep(3)}}]}]}`;
    expect(Buffer.byteLength(body)).toBeLessThan(DEFAULT_LIMITS.maxBodyBytes);
    const call = parseAdCall({ url: '/genericpost', method: 'POST', body });
    expect(() => JSON.stringify(call)).not.toThrow();
    expect(call.eids).toEqual([{ source: 'id5-sync.com', uids: [{ id: 'y', ext: JSON.parse(deep(3)) }] }]);
    expect(call.issues).toContainEqual({ path: 'eids[0].uids[0].ext', message: 'ext is nested deeper than 16 levels' });
  });

  test('a body whose getters throw yields issues, not an exception', () => {
    const body = {
      networkId: 3,
      get eids(): unknown {
        throw new Error('boom');
      },
    };
    const call = parseAdCall({ url: '/genericpost', method: 'POST', body });
    expect(call.networkId).toBe(3);
    expect(call.issues).toContainEqual({ path: 'eids', message: 'could not be read' });
  });

  test('bad formats in a one-call body are dropped one by one', () => {
    const call = parseAdCall({
      url: '/call',
      body: { networkId: 1, formats: [{ id: 1 }, 'x', { id: 'two' }, { tagId: 't' }, { id: 4, tagId: 't4' }] },
    });
    expect(call.formats).toEqual([{ id: 1 }, { id: 4, tagId: 't4' }]);
    expect(paths(call)).toEqual(['formats[1]', 'formats[2].id', 'formats[3].id']);
  });

  test('a path that is no ad-call endpoint is still parsed, with an issue', () => {
    const call = parseAdCall({ url: `/elsewhere?nwid=1&eids=${b64url([ID5])}` });
    expect(call).toMatchObject({ endpoint: 'unknown', networkId: 1, eids: [ID5] });
    expect(call.issues[0].path).toBe('url');
  });

  test('never throws, whatever the eids parameter and body hold', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), fc.anything(), (param, body) => {
        const q = new URLSearchParams({ nwid: '1', eids: param });
        const get = parseAdCall({ url: `/ac?${q}` });
        const post = parseAdCall({ url: '/genericpost', method: 'POST', body: body as Record<string, unknown> });
        const postText = parseAdCall({ url: '/call', method: 'POST', body: JSON.stringify({ eids: body }) ?? 'null' });
        for (const c of [get, post, postText]) expect(Array.isArray(c.eids) && Array.isArray(c.issues)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});

describe("core's decodeBase64Json on Node (through Buffer)", () => {
  // The tag's route: atob through decodeBase64Text, then JSON.parse, with decodeBase64Json's issues.
  const portable = (text: string) => {
    const json = decodeBase64Text(text);
    if (json === undefined) return { value: undefined, issues: [{ path: 'eids', message: 'not valid Base64' }] };
    try {
      return { value: JSON.parse(json) as unknown, issues: [] };
    } catch {
      return { value: undefined, issues: [{ path: 'eids', message: 'Base64 does not hold valid JSON' }] };
    }
  };

  test('accepts and refuses exactly what the portable atob route does, with the same value and issues', () => {
    const b64text = fc.oneof(
      fc.json().map((j) => Buffer.from(j).toString('base64')),
      fc.json().map((j) => Buffer.from(j).toString('base64url')),
      fc.uint8Array({ maxLength: 40 }).map((b) => Buffer.from(b).toString('base64')),
      fc.stringMatching(/^[A-Za-z0-9+/_=\- .!]{0,24}$/),
      fc.string({ maxLength: 24 }),
    );
    const mutated = fc
      .tuple(b64text, fc.nat(), fc.constantFrom('', '=', '==', '===', ' ', '*', '-', '+', 'é'))
      .map(([t, at, ins]) => t.slice(0, at % (t.length + 1)) + ins + t.slice(at % (t.length + 1)));
    fc.assert(
      fc.property(fc.oneof(b64text, mutated), (text) => {
        expect(decodeBase64Json(text)).toEqual(portable(text));
      }),
      { numRuns: 2000 },
    );
    for (const text of [
      b64url([{ source: 'é€😀.example', uids: [{ id: 'ü' }] }]),
      Buffer.from([0xc3, 0x28]).toString('base64'),
    ]) {
      expect(decodeBase64Json(text)).toEqual(portable(text));
    }
  });
});

describe("validateEids' reuse (the no-copy fast path)", () => {
  // Each field: usually absent or valid, sometimes one of the values core drops, trims or refuses.
  const field = (valid: unknown[], invalid: unknown[]) =>
    fc.oneof(
      { weight: 8, arbitrary: fc.constant<unknown>(undefined) },
      { weight: valid.length ? 8 : 0, arbitrary: fc.constantFrom<unknown>(...valid, undefined) },
      { weight: 1, arbitrary: fc.constantFrom<unknown>(...invalid) },
    );
  const uid = fc
    .record({
      id: fc.oneof(
        { weight: 12, arbitrary: fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g', 'A') },
        { weight: 1, arbitrary: fc.constantFrom('', 'x'.repeat(40), 7) },
      ),
      atype: field([1, 2, 3, 500, 571187], [4, 1.5, null, '1', 2 ** 31, 1e308, -(2 ** 31) - 1]),
      // Around the ext caps of `limits` below (40 characters of JSON, 3 levels): the bound, then core, decide.
      ext: field(
        [{}, { linkType: 2 }, { n: -0 }, { deep: { x: [1] } }, { s: 'x'.repeat(30) }],
        [null, [], 'x', { deep: { x: [[1]] } }, { s: 'x'.repeat(40) }, { n: 1e21 }],
      ),
      extra: field([], [true]),
    })
    .map((u) => Object.fromEntries(Object.entries(u).filter(([, v]) => v !== undefined)));
  const eid = fc
    .record({
      source: fc.oneof(
        {
          weight: 12,
          arbitrary: fc.constantFrom(
            'id5-sync.com',
            'uidapi.com',
            'euid.eu',
            'example.org',
            'criteo.com',
            'pubcid.org',
            'yahoo.com',
          ),
        },
        { weight: 1, arbitrary: fc.constantFrom('ID5-SYNC.com', ' uidapi.com', 'x.org ', '', 'x'.repeat(40)) },
      ),
      uids: fc.oneof(
        { weight: 12, arbitrary: fc.array(uid, { minLength: 1, maxLength: 3 }) },
        { weight: 1, arbitrary: fc.constant([]) },
        { weight: 1, arbitrary: fc.array(uid, { minLength: 4, maxLength: 4 }) },
      ),
      inserter: field(['ins.example'], ['', 5, 'i'.repeat(31)]),
      matcher: field(['m.example'], [null, 'm'.repeat(31)]),
      mm: field([0, 3, 5, 600, 2 ** 31 - 1], [-1, 1.5, 2 ** 31, 1e21]),
      ext: field([{ a: 1 }], [null, []]),
      other: field([], ['dropped by core']),
    })
    .map((e) => Object.fromEntries(Object.entries(e).filter(([, v]) => v !== undefined)));
  const limits = { ...DEFAULT_LIMITS, maxEids: 4, maxUids: 3, maxIdLength: 30, maxExtLength: 40, maxExtDepth: 3 };
  // JSON text is what the wire carries: compare what would be forwarded.
  const wire = (v: unknown) => JSON.parse(JSON.stringify(v));

  test('gives the same eids and issues as a copying validation, and keeps the input only when nothing changes', () => {
    let canonical = 0;
    fc.assert(
      // Mostly within maxEids (4), sometimes over it.
      fc.property(
        fc.oneof(
          { weight: 8, arbitrary: fc.array(eid, { maxLength: 3 }) },
          { weight: 1, arbitrary: fc.array(eid, { minLength: 5, maxLength: 5 }) },
        ),
        (eids) => {
          const text = JSON.stringify(eids);
          const fresh = JSON.parse(text);
          const reused = validateEids(fresh, limits, { reuse: true });
          const core = validateEids(JSON.parse(text), limits);
          expect(reused.issues).toEqual(core.issues);
          expect(wire(reused.value)).toEqual(wire(core.value));
          if (reused.value !== fresh) return;
          if (eids.length) canonical++;
          expect(core.issues).toEqual([]);
        },
      ),
      { numRuns: 3000 },
    );
    expect(canonical).toBeGreaterThan(100); // the fast path is really taken, on non-empty input
  });

  test('takes the fast path for a typical GET ad call, and the parse result is the same either way', () => {
    const eids = [ID5, UID2, EUID, UNKNOWN];
    const fresh = JSON.parse(JSON.stringify(eids));
    expect(validateEids(fresh, DEFAULT_LIMITS, { reuse: true }).value).toBe(fresh);
    // With some limits or none given, the others are the defaults, as without reuse.
    const again = JSON.parse(JSON.stringify(eids));
    expect(validateEids(again, {}, { reuse: true }).value).toBe(again);
    const over = validateEids(JSON.parse(JSON.stringify(eids)), { maxEids: 2 }, { reuse: true });
    expect(over).toEqual(validateEids(eids, { maxEids: 2 }));
    expect(over.value).toHaveLength(2);
    expect(getCall({ nwid: 1, eids: b64url(eids) }).eids).toEqual(validateEids(eids, DEFAULT_LIMITS).value);
  });

  test('reuse never throws: input that is not plain data is validated as without it', () => {
    const eid = {
      source: 'id5-sync.com',
      get uids(): unknown {
        throw new Error('boom');
      },
    };
    expect(() => validateEids([eid], DEFAULT_LIMITS, { reuse: true })).not.toThrow();
    expect(validateEids([eid], DEFAULT_LIMITS, { reuse: true })).toEqual(validateEids([eid], DEFAULT_LIMITS));
  });

  test('a body object the caller passed is copied, never kept by reference', () => {
    const body = { networkId: 1, eids: [structuredClone(ID5)] };
    const call = parseAdCall({ url: '/genericpost', method: 'POST', body });
    expect(call.eids).toEqual([ID5]);
    expect(call.eids[0]).not.toBe(body.eids[0]);
  });
});

describe('readCookie', () => {
  test('finds the named cookie among others and unquotes it', () => {
    expect(readCookie('a=1; pid="q1"; b=2', 'pid')).toBe('q1');
    expect(readCookie('xpid=1; pid=2', 'pid')).toBe('2');
    expect(readCookie('a=1', 'pid')).toBeUndefined();
  });
});
