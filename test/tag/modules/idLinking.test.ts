// @vitest-environment happy-dom
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { defineModule } from '../../../src/tag/modules/_module.js';
import { CACHE_KEY, idLinkingModule, parseResponse, toEid } from '../../../src/tag/modules/idLinking.js';
import { callOnce, fakeHost, gdprState, operatorEnables, resetPage, storageSnapshot } from './_host.js';

// A local stand-in for the provider endpoint that records every request (no global fetch patching).
let server: Server;
let base = '';
const requests: { url: string; body: any }[] = [];
let answer: (n: number) => { status: number; body: unknown } = () => ({ status: 500, body: {} });

beforeAll(async () => {
  server = createServer((req, res) => {
    let data = '';
    req.on('data', (c) => (data += c));
    req.on('end', () => {
      res.setHeader('Access-Control-Allow-Origin', req.headers.origin || '*');
      res.setHeader('Access-Control-Allow-Credentials', 'true');
      if (req.method === 'OPTIONS') return res.end();
      requests.push({ url: req.url!, body: data ? JSON.parse(data) : undefined });
      const { status, body } = answer(requests.length);
      res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/g/v2`;
});
afterAll(() => server.close());

const ok = (id = 'ID5*abc', extra: Record<string, unknown> = {}) => ({
  status: 200,
  body: { universal_uid: id, signature: 'sig-1', ext: { linkType: 2, abTestingControlGroup: false }, ...extra },
});
const make = () => defineModule(idLinkingModule);
const hostWith = (settings: Record<string, unknown>, consent: any = { ready: true }) =>
  fakeHost({ modules: { idLinking: { url: base, ...settings } } }, consent);
const tick = (ms = 30) => new Promise((r) => setTimeout(r, ms));

beforeEach(() => {
  resetPage();
  requests.length = 0;
  answer = () => ok();
  operatorEnables('idLinking');
});
afterEach(() => resetPage());

describe('idLinking', () => {
  test('the request leaves in a task of its own, after the task that asked for the id', async () => {
    // A spy that passes every call on: how many requests were started, and when.
    const real = globalThis.fetch;
    let started = 0;
    globalThis.fetch = (...a: Parameters<typeof fetch>) => {
      started++;
      return real(...a);
    };
    try {
      const ext = make();
      ext.setup!(hostWith({}));
      await tick(0);
      const out = ext.beforeCall!({ type: 'std' }) as Promise<{ eids?: unknown[] }>;
      // Every promise callback of this task runs, and still no request: it waits for the next task.
      for (let i = 0; i < 100; i++) await Promise.resolve();
      expect(started).toBe(0);
      expect((await out).eids).toHaveLength(1);
      expect(started).toBe(1);
    } finally {
      globalThis.fetch = real;
    }
  });

  test('requests the id as partner 102 and emits an id5-sync.com eid with linkType and abTestingControlGroup', async () => {
    const out = await callOnce(make(), hostWith({}));
    // linkType 2 (linked through a deterministic signal) is an authenticated match; the page inserted it.
    expect(out.eids).toEqual([
      {
        source: 'id5-sync.com',
        uids: [{ id: 'ID5*abc', atype: 1, ext: { linkType: 2, abTestingControlGroup: false } }],
        inserter: 'localhost',
        mm: 3,
      },
    ]);
    expect(requests).toHaveLength(1);
    expect(requests[0].url).toBe('/g/v2/102.json');
    expect(requests[0].body).toMatchObject({ partner: 102, gdpr: 0 });
    expect(requests[0].body.pd).toBeUndefined();
  });

  test('the partner number cannot be changed', async () => {
    const host = hostWith({ partner: 999 });
    await callOnce(make(), host);
    expect(requests[0].body.partner).toBe(102);
    expect(host.logs.join('\n')).toContain('partner is always 102');
  });

  test('sends pd and the consent signals', async () => {
    const consent = { ...gdprState([1, 2], [45, 131]), usPrivacy: '1YNN', gppString: 'DBABMA~CQ', gppSid: [2] };
    await callOnce(make(), hostWith({ pd: 'MT1hYmM=' }, consent));
    expect(requests[0].body).toMatchObject({
      pd: 'MT1hYmM=',
      gdpr: 1,
      gdpr_consent: consent.tcString,
      us_privacy: '1YNN',
      gpp_string: 'DBABMA~CQ',
      gpp_sid: '2',
    });
  });

  test('sends the page origin and path but never its query string', async () => {
    history.replaceState(null, '', '/article?email=jane%40example.com');
    await callOnce(make(), hostWith({}));
    expect(JSON.stringify(requests[0].body)).not.toContain('jane');
    expect(requests[0].body.u).toMatch(/\/article$/);
  });

  test('sends the page origin alone when its path holds an email, in any encoding', async () => {
    history.replaceState(null, '', '/u/Jane.Doe%2540Example.com/profile');
    await callOnce(make(), hostWith({}));
    expect(requests[0].body.u).toBe(location.origin + '/');
  });

  test('a pd holding a raw email, as it is or in its Base64, keeps the module off', async () => {
    for (const pd of ['1=jane.doe%40example.com', btoa('1=jane.doe@example.com&5=u1')]) {
      const host = hostWith({ pd });
      expect(await callOnce(make(), host)).toEqual({});
      expect(host.logs.join('\n')).toContain('pd holds a raw email');
    }
    expect(requests).toHaveLength(0);
  });

  test('a pd that is not a string keeps the module off', async () => {
    const host = hostWith({ pd: 42 });
    expect(await callOnce(make(), host)).toEqual({});
    expect(requests).toHaveLength(0);
  });

  test('caches the id in localStorage with an expiry and does not ask again while it is fresh', async () => {
    const ext = make();
    await callOnce(ext, hostWith({ expiryDays: 10 }));
    const raw = JSON.parse(localStorage.getItem(CACHE_KEY)!);
    expect(raw.e).toBeGreaterThan(Date.now() + 9.9 * 864e5);
    expect(raw.e).toBeLessThan(Date.now() + 10.1 * 864e5);
    expect(JSON.parse(raw.v)).toMatchObject({ id: 'ID5*abc', sig: 'sig-1' });
    const again = await make().beforeCall!({ type: 'std' }); // not set up: off
    expect(again).toEqual({});
    const second = make();
    expect((await callOnce(second, hostWith({}))).eids?.[0].uids[0].id).toBe('ID5*abc');
    expect(requests).toHaveLength(1);
  });

  test('a due refresh sends the cached id at once and refreshes it in the background, with the signature', async () => {
    await callOnce(make(), hostWith({}));
    const raw = JSON.parse(localStorage.getItem(CACHE_KEY)!);
    const cached = JSON.parse(raw.v);
    cached.refreshAt = Date.now() - 1;
    localStorage.setItem(CACHE_KEY, JSON.stringify({ ...raw, v: JSON.stringify(cached) }));
    answer = () => ok('ID5*new');
    const ext = make();
    expect((await callOnce(ext, hostWith({}))).eids?.[0].uids[0].id).toBe('ID5*abc');
    await tick();
    expect(requests).toHaveLength(2);
    expect(requests[1].body.s).toBe('sig-1');
    expect((await ext.beforeCall!({ type: 'std' }))?.eids?.[0].uids[0].id).toBe('ID5*new');
  });

  test("the server's cache_control sets when to refresh; refreshInSeconds is the default otherwise", async () => {
    answer = () => ok('ID5*abc', { cache_control: { max_age_sec: 60 } });
    await callOnce(make(), hostWith({ refreshInSeconds: 99999 }));
    const cached = JSON.parse(JSON.parse(localStorage.getItem(CACHE_KEY)!).v);
    expect(cached.refreshAt - Date.now()).toBeLessThanOrEqual(60_000);
    resetPage();
    operatorEnables('idLinking');
    answer = () => ok();
    await callOnce(make(), hostWith({ refreshInSeconds: 10 }));
    expect(JSON.parse(JSON.parse(localStorage.getItem(CACHE_KEY)!).v).refreshAt - Date.now()).toBeLessThanOrEqual(
      10_000,
    );
  });

  test('a changed pd fetches a new id instead of sending the cached one', async () => {
    await callOnce(make(), hostWith({ pd: 'a' }));
    answer = () => ok('ID5*other');
    expect((await callOnce(make(), hostWith({ pd: 'b' }))).eids?.[0].uids[0].id).toBe('ID5*other');
    expect(requests).toHaveLength(2);
  });

  test('an expired cache entry is not sent', async () => {
    localStorage.setItem(
      CACHE_KEY,
      JSON.stringify({
        v: JSON.stringify({ id: 'ID5*old', pd: '', gdpr: '', refreshAt: Date.now() + 1e6 }),
        e: Date.now() - 1,
      }),
    );
    answer = () => ({ status: 500, body: {} });
    expect((await callOnce(make(), hostWith({}))).eids).toEqual([]);
  });

  test('a failing endpoint gives no eid, no error, and is not asked again on the next call', async () => {
    answer = () => ({ status: 503, body: {} });
    const ext = make();
    const host = hostWith({});
    expect((await callOnce(ext, host)).eids).toEqual([]);
    expect(await ext.beforeCall!({ type: 'std' })).toEqual({ eids: [] });
    expect(requests).toHaveLength(1);
    expect(host.logs.join('\n')).toContain('request failed');
  });

  test('where GDPR applies without ID5 consent: no request, nothing stored', async () => {
    expect(await callOnce(make(), hostWith({}, gdprState([1, 2], [45])))).toEqual({});
    expect(requests).toHaveLength(0);
    expect(storageSnapshot().local).toEqual({});
  });

  test('consent withdrawn while the request is out: the answer is neither stored nor sent', async () => {
    const ext = make();
    const host = hostWith({}, gdprState([1, 2], [45, 131]));
    ext.setup!(host);
    await tick(0);
    const pending = ext.beforeCall!({ type: 'std' });
    // The user withdraws ID5's consent before the provider answers.
    host.state = gdprState([1, 2], [45]);
    expect((await pending)?.eids ?? []).toEqual([]);
    await tick();
    expect(requests).toHaveLength(1);
    expect(storageSnapshot().local).toEqual({});
  });

  test('consent withdrawn after an id was cached: the cached id is deleted, not only left unsent', async () => {
    const ext = make();
    const host = hostWith({}, gdprState([1, 2], [45, 131]));
    expect((await callOnce(ext, host)).eids).toHaveLength(1);
    expect(localStorage.getItem(CACHE_KEY)).not.toBeNull();
    host.state = gdprState([1, 2], [45]);
    expect(await ext.beforeCall!({ type: 'std' })).toEqual({});
    expect(localStorage.getItem(CACHE_KEY)).toBeNull();
  });

  test('an opt-out of sale: no request, no id', async () => {
    expect(
      await callOnce(make(), hostWith({}, { ready: true, usPrivacy: '1YYN', usDenial: 'gpp usnat SaleOptOut=1' })),
    ).toEqual({});
    expect(requests).toHaveLength(0);
  });

  test('parses the control group from ab_testing when ext does not carry it', () => {
    expect(parseResponse({ universal_uid: 'x', ext: { linkType: 1 }, ab_testing: { result: 'control' } })?.ext).toEqual(
      { linkType: 1, abTestingControlGroup: true },
    );
    expect(parseResponse({ universal_uid: '0' })).toBeUndefined();
    expect(parseResponse(null)).toBeUndefined();
    expect(toEid({ id: 'x' })).toEqual({ source: 'id5-sync.com', uids: [{ id: 'x', atype: 1 }] });
  });
});
