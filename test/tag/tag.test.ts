import { describe, expect, test } from 'vitest';
import { installTag, networkIdFromSrc } from '../../src/tag/tag.js';
import type { TagExtension } from '../../src/tag/extension.js';
import { decodeBase64Json, type Eid } from '../../src/core/index.js';
import { eidsParam, fakeWindow, flush, loadedTag, SAMPLE } from './helpers.js';

describe('command queue on load', () => {
  test('runs the queued commands in a task of their own, not in the task that evaluated the script', async () => {
    const { win } = fakeWindow();
    const order: string[] = [];
    win.sas.cmd.push(() => order.push('setup'));
    installTag(win, undefined);
    // Any number of promise callbacks (the rest of the script's task) runs no command: the page's setup and first
    // call are not added to the task that evaluated the tag.
    for (let i = 0; i < 50; i++) await Promise.resolve();
    expect(order).toEqual([]);
    await flush();
    expect(order).toEqual(['setup']);
  });

  test('runs commands queued before load in order, after the script body, then runs pushes at once', async () => {
    const { win } = fakeWindow();
    const order: string[] = [];
    win.sas.cmd.push(
      () => order.push('a'),
      () => order.push('b'),
    );
    const sas = installTag(win, undefined)!;
    // Queued commands wait for the end of the script, so add-ons concatenated after the core register first.
    expect(order).toEqual([]);
    await flush();
    expect(order).toEqual(['a', 'b']);
    const count = sas.cmd.push(() => order.push('c'));
    expect(order).toEqual(['a', 'b', 'c']);
    expect(count).toBe(3);
  });

  test('a throwing or rejecting command does not stop the next one and is reported in debug', async () => {
    const { win, warnings } = fakeWindow({ search: '?sas_debug=1' });
    const ran: string[] = [];
    win.sas.cmd.push(
      () => {
        throw new Error('boom');
      },
      async () => {
        throw new Error('async boom');
      },
      'not a function',
      () => ran.push('next'),
    );
    installTag(win, undefined);
    await flush();
    expect(ran).toEqual(['next']);
    expect(warnings().join('\n')).toMatch(/command failed: .*boom/);
    expect(warnings().join('\n')).toMatch(/not a function/);
  });

  test('is silent without debug mode and prefixes every line with [sas] with it', async () => {
    const quiet = fakeWindow();
    quiet.win.sas.cmd.push(() => {
      throw new Error('x');
    });
    installTag(quiet.win, undefined);
    await flush();
    expect(quiet.lines).toEqual([]);

    const loud = await loadedTag();
    loud.sas.setEids([{ source: '', uids: [] }]);
    expect(loud.lines.length).toBeGreaterThan(0);
    expect(loud.lines.every((l) => l.text.startsWith('[sas]'))).toBe(true);
  });

  test('a second copy of the tag changes nothing', async () => {
    const { win, sas } = await loadedTag();
    sas.setEids(SAMPLE);
    const setEids = sas.setEids;
    const again = installTag(win, 'https://cdn.example/tag/999/sas.js');
    expect(again).toBe(sas);
    expect(sas.setEids).toBe(setEids);
    expect(sas.getEids()).toHaveLength(3);
  });

  test('replaces a window.sas that is not an object instead of failing', () => {
    const { win } = fakeWindow();
    (win as { sas: unknown }).sas = 42;
    const sas = installTag(win, undefined);
    expect(typeof sas?.call).toBe('function');
  });
});

describe('setEids and getEids', () => {
  test('keeps valid eids and unusual atypes as sent, drops invalid ones one by one with a warning naming the problem', async () => {
    const { sas, warnings } = await loadedTag();
    sas.setEids([
      ...SAMPLE,
      { source: 'criteo.com', uids: [{ id: 'ok' }, { id: 'device', atype: 4 }, { id: 'odd', atype: 1.5 }] },
      { source: '', uids: [{ id: 'x' }] },
      { source: 'pubcid.org', uids: [] },
      { source: 'yahoo.com', uids: [{ id: 'y', ext: 'nope' }] },
    ]);
    expect(sas.getEids().map((e) => e.source)).toEqual(['id5-sync.com', 'liveramp.com', 'example.org', 'criteo.com']);
    expect(sas.getEids()[3].uids).toEqual([{ id: 'ok' }, { id: 'device', atype: 4 }, { id: 'odd' }]);
    const w = warnings().join('\n');
    expect(w).toMatch(/eids\[3\]\.uids\[2\]\.atype: atype must be an integer/);
    expect(w).toMatch(/eids\[4\]\.source: source must be a non-empty string/);
    expect(w).toMatch(/eids\[5\]\.uids: uids must be a non-empty array/);
    expect(w).toMatch(/eids\[6\]\.uids\[0\]\.ext: ext must be a plain JSON object/);
  });

  test('merges same-source eids case-insensitively and dedupes uid ids', async () => {
    const { sas } = await loadedTag();
    sas.setEids([
      { source: 'ID5-sync.com', uids: [{ id: 'a' }] },
      { source: 'id5-sync.com', uids: [{ id: 'a' }, { id: 'b' }] },
    ]);
    expect(sas.getEids()).toEqual([{ source: 'ID5-sync.com', uids: [{ id: 'a' }, { id: 'b' }] }]);
  });

  test('accepts the Base64 of the JSON array: standard or URL-safe, padded or not', async () => {
    const { sas } = await loadedTag();
    const json = JSON.stringify([{ source: 'euid.eu', uids: [{ id: 'ü?>~~~', atype: 3 }] }]);
    const std = Buffer.from(json).toString('base64');
    const forms = [
      std,
      std.replace(/=+$/, ''),
      Buffer.from(json).toString('base64url'),
      Buffer.from(json).toString('base64url') + '==',
    ];
    expect(new Set(forms).size).toBeGreaterThan(2);
    for (const form of forms) {
      sas.setEids(null);
      sas.setEids(form);
      expect(sas.getEids()).toEqual(JSON.parse(json));
    }
  });

  test('invalid Base64 sets no eids and says why', async () => {
    const { sas, warnings } = await loadedTag();
    sas.setEids(SAMPLE);
    sas.setEids('%%% not base64 %%%');
    expect(sas.getEids()).toEqual([]);
    expect(warnings().join('\n')).toMatch(/not valid Base64/);
  });

  test('a later setEids replaces the earlier one, and null clears', async () => {
    const { sas } = await loadedTag();
    sas.setEids(SAMPLE);
    sas.setEids([{ source: 'criteo.com', uids: [{ id: 'c' }] }]);
    expect(sas.getEids().map((e) => e.source)).toEqual(['criteo.com']);
    sas.setEids(null);
    expect(sas.getEids()).toEqual([]);
  });

  test('getEids returns a copy the page cannot use to change what is sent', async () => {
    const { sas } = await loadedTag();
    sas.setEids(SAMPLE);
    sas.getEids()[0].uids[0].id = 'tampered';
    expect(sas.getEids()[0].uids[0].id).toBe('ID5*abc');
  });

  test('malformed input never throws: null, numbers, cyclic objects, throwing getters, 10,000 eids', async () => {
    const { sas } = await loadedTag();
    const cyclic: Record<string, unknown> = { source: 'criteo.com' };
    cyclic.uids = [{ id: 'c', ext: cyclic }];
    const trap = {
      get source(): string {
        throw new Error('getter');
      },
    };
    const many = Array.from({ length: 10_000 }, (_, i) => ({ source: `s${i}.example`, uids: [{ id: String(i) }] }));
    const hostile = new Proxy([], {
      get() {
        throw new Error('proxy');
      },
    });
    for (const input of [
      null,
      undefined,
      0,
      42,
      NaN,
      true,
      {},
      'x',
      [null, 1, 'a'],
      [cyclic],
      [trap, SAMPLE[0]],
      many,
      hostile,
    ]) {
      expect(() => sas.setEids(input)).not.toThrow();
    }
    sas.setEids([trap, cyclic, SAMPLE[0]]);
    expect(sas.getEids().map((e) => e.source)).toEqual(['id5-sync.com']);
    sas.setEids(many);
    expect(sas.getEids()).toHaveLength(1000);
    expect(() => sas.setup(null as never)).not.toThrow();
    expect(() => sas.setup(trap as never)).not.toThrow();
    await expect(sas.call(null as never, null as never)).resolves.toMatchObject({ ok: false });
    await expect(sas.call(Symbol('x') as never)).resolves.toMatchObject({ ok: false });
  });
});

describe('sas.call', () => {
  test('std and video send GET /ac with the documented parameters and eids that decode to getEids()', async () => {
    const { sas, sent } = await loadedTag();
    sas.setup({ uid: 'publisher-user-7' });
    sas.setEids(SAMPLE);
    for (const type of ['std', 'video'] as const) {
      const r = await sas.call(type, { siteId: 11, pageId: '22', formatId: 33, target: 'a=1;b=2' });
      expect(r).toMatchObject({ ok: true, status: 200, response: 'ok' });
    }
    expect(sent).toHaveLength(2);
    for (const req of sent) {
      const url = new URL(req.url);
      expect(req.method).toBe('GET');
      expect(req.credentials).toBe('include');
      expect(url.origin + url.pathname).toBe('https://ads.example/ac');
      const q = Object.fromEntries(url.searchParams);
      expect(q).toMatchObject({
        nwid: '1234',
        siteid: '11',
        pgid: '22',
        fmtid: '33',
        tgt: 'a=1;b=2',
        uid: 'publisher-user-7',
      });
      expect(Number(q.tmstp)).toBeGreaterThan(1.6e12);
      expect(q.eids).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(eidsParam(req.url)).toEqual(sas.getEids());
    }
  });

  test('generic and onecall POST a JSON body carrying the same eids array', async () => {
    const { sas, sent } = await loadedTag();
    sas.setEids(SAMPLE);
    await sas.call('generic', { siteId: 1, pageId: 2, formatId: 3, target: { sport: 'ski', tags: ['a', 'b'] } });
    await sas.call('onecall', {
      siteId: 1,
      pageId: 2,
      formats: [{ id: 3, tagId: 'top' }, { id: '4' }, { tagId: 'no-id' } as never],
    });
    const [generic, onecall] = sent.map((r) => ({ ...r, json: JSON.parse(r.body!) }));
    expect(generic.url).toBe('https://ads.example/genericpost');
    expect(generic.method).toBe('POST');
    expect(generic.json).toMatchObject({
      networkId: 1234,
      siteId: 1,
      pageId: 2,
      formatId: 3,
      target: 'sport=ski;tags=a,b',
    });
    expect(typeof generic.json.timestamp).toBe('number');
    expect(onecall.url).toBe('https://ads.example/call');
    expect(onecall.json.formats).toEqual([{ id: 3, tagId: 'top' }, { id: 4 }]);
    for (const r of [generic, onecall]) expect(r.json.eids).toEqual(sas.getEids());
  });

  test('with no eids the parameter and the field are absent, not empty', async () => {
    const { sas, sent } = await loadedTag();
    await sas.call('std', { siteId: 1, pageId: 2, formatId: 3 });
    await sas.call('generic', { siteId: 1, pageId: 2, formatId: 3 });
    expect(new URL(sent[0].url).searchParams.has('eids')).toBe(false);
    expect('eids' in JSON.parse(sent[1].body!)).toBe(false);
    expect('uid' in JSON.parse(sent[1].body!)).toBe(false);
  });

  test('resolves, never rejects, when the call cannot go or fails', async () => {
    const noSetup = fakeWindow();
    const sas = installTag(noSetup.win, undefined)!;
    await expect(sas.call('std', {})).resolves.toMatchObject({
      ok: false,
      status: 0,
      error: expect.stringMatching(/domain/),
    });

    const down = await loadedTag({ fetchImpl: () => Promise.reject(new TypeError('Failed to fetch')) });
    await expect(down.sas.call('std', {})).resolves.toMatchObject({ ok: false, status: 0, error: 'Failed to fetch' });

    const err = await loadedTag({ fetchImpl: async () => new Response('no', { status: 500 }) });
    await expect(err.sas.call('generic', {})).resolves.toMatchObject({ ok: false, status: 500 });

    const bad = await loadedTag();
    await expect(bad.sas.call('banner' as never, {})).resolves.toMatchObject({
      ok: false,
      error: 'unknown call type: banner',
    });
  });

  test('takes the network id from the script path, and setup networkid over it', async () => {
    expect(networkIdFromSrc('https://cdn.example/tag/1234/sas.js')).toBe(1234);
    expect(networkIdFromSrc('//cdn.example/tag/77/sas.debug.js?v=2')).toBe(77);
    expect(networkIdFromSrc('https://cdn.example/sas.js')).toBeUndefined();
    const { sas, sent } = await loadedTag({ src: 'https://cdn.example/tag/555/sas.js' });
    await sas.call('std', {});
    sas.setup({ networkid: 999 });
    await sas.call('std', {});
    expect(sent.map((r) => new URL(r.url).searchParams.get('nwid'))).toEqual(['555', '999']);
  });

  test('refuses a domain that is not an http(s) URL', async () => {
    const { sas, warnings } = await loadedTag();
    sas.setup({ domain: 'javascript:alert(1)' });
    await expect(sas.call('std', {})).resolves.toMatchObject({ ok: false });
    expect(warnings().join('\n')).toMatch(/domain must be an http\(s\) URL/);
  });
});

describe('the Referer of an ad call', () => {
  test.each([
    ['https://news.example/welcome?email=jane.doe%40example.com', 'in a query parameter'],
    ['https://news.example/u/Jane.Doe@Example.COM/profile', 'in the path'],
    ['https://news.example/p#jane.doe%2540example.com', 'encoded twice, in the fragment'],
  ])('is the page origin alone when the page URL holds an email: %s (%s)', async (href) => {
    const { sas, sent } = await loadedTag({ href });
    for (const type of ['std', 'generic'] as const) await sas.call(type, {});
    expect(sent.map((r) => r.referrerPolicy)).toEqual(['origin', 'origin']);
  });

  test("follows the page's own referrer policy when the page URL holds no email", async () => {
    const { sas, sent } = await loadedTag({ href: 'https://news.example/sport/@team?q=a%20b#top' });
    await sas.call('std', {});
    expect(sent[0].referrerPolicy).toBe('');
  });
});

describe('raw personal data on an ad call', () => {
  test('an eid whose id holds an email is dropped with a warning; the other eids still go', async () => {
    const { sas, sent, warnings } = await loadedTag();
    sas.setEids([
      { source: 'liveramp.com', uids: [{ id: 'Jane.Doe@Example.com', atype: 3 }] },
      { source: 'criteo.com', uids: [{ id: 'jane.doe%40example.com' }, { id: 'c-1' }] },
    ]);
    await sas.call('std', {});
    const eids = decodeBase64Json(new URL(sent[0].url).searchParams.get('eids')!).value as Eid[];
    expect(eids).toEqual([{ source: 'criteo.com', uids: [{ id: 'c-1' }] }]);
    expect(sent[0].url).not.toMatch(/example\.com/i);
    expect(warnings().join('\n')).toMatch(/eids\[0\]\.uids\[0\]\.id: .*email/);
  });

  test.each(['std', 'generic'] as const)(
    'a uid or a target holding an email is left out of a %s call',
    async (type) => {
      const { sas, sent } = await loadedTag();
      sas.setup({ uid: 'jane.doe@example.com' });
      await sas.call(type, { siteId: 1, target: { email: 'jane.doe%40example.com' } });
      const text = sent[0].url + (sent[0].body ?? '');
      expect(text).not.toMatch(/example(\.|%2E)com/i);
      expect(text).toMatch(/siteid=1|"siteId":1/);
    },
  );
});

describe('extensions', () => {
  const moduleEids = (eids: unknown, extra: object = {}): TagExtension => ({
    name: 'mod',
    beforeCall: () => ({ eids, ...extra }) as never,
  });

  test('page eids win over module eids by source; getEids shows the merge the next call sends', async () => {
    const { sas, sent } = await loadedTag({
      extensions: [
        moduleEids([
          { source: 'id5-sync.com', uids: [{ id: 'from-module' }] },
          { source: 'criteo.com', uids: [{ id: 'crit' }] },
        ]),
      ],
    });
    sas.setEids([SAMPLE[0]]);
    await sas.call('std', {});
    expect(eidsParam(sent[0].url)).toEqual([SAMPLE[0], { source: 'criteo.com', uids: [{ id: 'crit' }] }]);
    expect(sas.getEids()).toEqual(eidsParam(sent[0].url));
  });

  test('params go on the query and in the body; blockEids leaves every eid out', async () => {
    const ext: TagExtension = {
      name: 'consent',
      beforeCall: () => ({ params: { gdpr: '1', gdpr_consent: 'CP x' }, blockEids: true }),
    };
    const { sas, sent } = await loadedTag({ extensions: [ext] });
    sas.setEids(SAMPLE);
    await sas.call('video', {});
    await sas.call('generic', {});
    const q = new URL(sent[0].url).searchParams;
    expect(q.get('gdpr')).toBe('1');
    expect(q.get('gdpr_consent')).toBe('CP x');
    expect(q.has('eids')).toBe(false);
    expect(JSON.parse(sent[1].body!)).toMatchObject({ gdpr: '1', gdpr_consent: 'CP x' });
    expect('eids' in JSON.parse(sent[1].body!)).toBe(false);
    expect(sas.getEids()).toEqual([]);
  });

  test('host.withhold leaves its sources out of every call and of getEids, whoever set them; array params go only into POST bodies', async () => {
    let host: { withhold?: string[] } = {};
    const ext: TagExtension = {
      name: 'holdout',
      setup: (h) => void (host = h),
      beforeCall: ({ type }) => ({
        params: { xp: type === 'std' || type === 'video' ? 'b64' : [{ id: 'a' }], bad: { nested: 1 } as never },
      }),
    };
    const { sas, sent } = await loadedTag({
      extensions: [ext, moduleEids([{ source: 'criteo.com', uids: [{ id: 'c' }] }])],
    });
    sas.setEids([{ ...SAMPLE[0], source: 'ID5-Sync.com' }, SAMPLE[1]]);
    host.withhold = ['id5-sync.com', 'criteo.com'];
    await sas.call('std', {});
    await sas.call('onecall', {});
    expect(eidsParam(sent[0].url)).toEqual([SAMPLE[1]]);
    expect(new URL(sent[0].url).searchParams.get('xp')).toBe('b64');
    const body = JSON.parse(sent[1].body!) as Record<string, unknown>;
    expect(body.eids).toEqual([SAMPLE[1]]);
    expect(body.xp).toEqual([{ id: 'a' }]);
    expect(body).not.toHaveProperty('bad');
    expect(sas.getEids()).toEqual([SAMPLE[1]]);
    host.withhold = [];
    expect(sas.getEids().map((e) => e.source)).toEqual(['ID5-Sync.com', 'liveramp.com', 'criteo.com']);
  });

  test('sync extensions add no delay: fetch is called in the same tick', async () => {
    const { sas, sent } = await loadedTag({ extensions: [moduleEids([])] });
    void sas.call('std', {});
    expect(sent).toHaveLength(1);
  });

  test('a call carries the eids, uid and network of the moment it was made, whatever the page does before it leaves', async () => {
    // An extension that answers asynchronously, as the built-in consent reader always does: the request leaves after
    // the page's synchronous code, which here logs one user out and another in.
    const later: TagExtension = { name: 'consent', beforeCall: () => Promise.resolve({}) };
    const { sas, sent } = await loadedTag({ extensions: [later] });
    sas.setup({ uid: 'user-a' });
    sas.setEids([SAMPLE[0]]);
    const first = sas.call('std', { siteId: 1 });
    const second = sas.call('generic', { siteId: 1 });
    sas.setEids(null);
    sas.setup({ uid: 'user-b', networkid: 99, domain: 'https://other.example' });
    const third = sas.call('std', { siteId: 1 });
    expect(sent).toHaveLength(0);
    const [a, b, c] = await Promise.all([first, second, third]);
    const q = new URL(sent[0].url).searchParams;
    expect([q.get('uid'), q.get('nwid'), new URL(sent[0].url).host]).toEqual(['user-a', '1234', 'ads.example']);
    expect(eidsParam(sent[0].url)).toEqual([SAMPLE[0]]);
    expect(a.eids).toEqual([SAMPLE[0]]);
    expect(JSON.parse(sent[1].body!)).toMatchObject({ uid: 'user-a', networkId: 1234, eids: [SAMPLE[0]] });
    expect(b.eids).toEqual([SAMPLE[0]]);
    const q3 = new URL(sent[2].url).searchParams;
    expect([q3.get('uid'), q3.get('nwid'), q3.has('eids'), new URL(sent[2].url).host]).toEqual([
      'user-b',
      '99',
      false,
      'other.example',
    ]);
    expect(c.eids).toEqual([]);
  });

  test('waits for async extensions together at most eidsTimeout ms, then sends without the late ones', async () => {
    const slow: TagExtension = { name: 'slow', beforeCall: () => new Promise(() => {}) };
    const quick: TagExtension = {
      name: 'quick',
      beforeCall: () =>
        new Promise((r) => setTimeout(() => r({ eids: [{ source: 'criteo.com', uids: [{ id: 'q' }] }] }), 5)),
    };
    const { sas, sent, warnings } = await loadedTag({ extensions: [slow, quick] });
    sas.setup({ eidsTimeout: 60 });
    const t0 = Date.now();
    const r = await sas.call('std', {});
    const waited = Date.now() - t0;
    expect(waited).toBeGreaterThanOrEqual(55);
    expect(waited).toBeLessThan(1000);
    expect(r.eids).toEqual([{ source: 'criteo.com', uids: [{ id: 'q' }] }]);
    expect(sent).toHaveLength(1);
    expect(warnings().join('\n')).toMatch(/no answer in 60 ms from.*slow/);
  });

  test('caps eidsTimeout at 3,000 ms: no page setting holds an ad call longer', async () => {
    const never: TagExtension = { name: 'never', beforeCall: () => new Promise(() => {}) };
    const { sas, sent, warnings } = await loadedTag({ extensions: [never] });
    sas.setup({ eidsTimeout: 60_000 });
    const t0 = Date.now();
    await sas.call('std', {});
    const waited = Date.now() - t0;
    expect(waited).toBeGreaterThanOrEqual(2_950);
    expect(waited).toBeLessThan(4_500);
    expect(sent).toHaveLength(1);
    expect(warnings().join('\n')).toMatch(/no answer in 3000 ms from.*never/);
  });

  test('an extension that throws, rejects or returns garbage does not stop the call', async () => {
    const exts: TagExtension[] = [
      {
        name: 'throws',
        beforeCall: () => {
          throw new Error('x');
        },
      },
      { name: 'rejects', beforeCall: () => Promise.reject(new Error('y')) },
      moduleEids('garbage'),
      { name: 'params', beforeCall: () => ({ params: { a: { nested: 1 } as never, b: 2 as never } }) },
    ];
    const { sas, sent } = await loadedTag({ extensions: exts });
    sas.setEids([SAMPLE[1]]);
    const r = await sas.call('std', {});
    expect(r.ok).toBe(true);
    expect(eidsParam(sent[0].url)).toEqual([SAMPLE[1]]);
    expect(new URL(sent[0].url).searchParams.get('b')).toBe('2');
    expect(new URL(sent[0].url).searchParams.has('a')).toBe(false);
  });

  test('registers add-ons from window.__sasx before and after load, runs setup once, ignores duplicates', async () => {
    const { win } = fakeWindow();
    const setups: string[] = [];
    const addOn = (name: string) => (register: (e: TagExtension) => void) =>
      register({ name, setup: (host) => setups.push(`${name}:${host.networkId()}`) });
    (win as { __sasx?: unknown[] }).__sasx = [addOn('early')];
    const sas = installTag(win, 'https://cdn.example/tag/42/sas.js')!;
    const sasx = (win as { __sasx: unknown[] }).__sasx;
    sasx.push(addOn('late'));
    sas.setup({ domain: 'https://ads.example' });
    sas.setup({ uid: 'again' });
    sasx.push(addOn('after-setup'), addOn('late'));
    expect(setups).toEqual(['early:42', 'late:42', 'after-setup:42']);
  });

  test('a queued call sees add-ons concatenated after the core', async () => {
    const { win, sent } = fakeWindow();
    win.sas.cmd.push(() => {
      win.sas.setup!({ domain: 'https://ads.example' });
      void win.sas.call!('std', {});
    });
    installTag(win, undefined);
    // What an add-on script appended to the same file does right after the core's IIFE.
    (win as { __sasx: unknown[] }).__sasx.push((register: (e: TagExtension) => void) =>
      register({ name: 'm', beforeCall: () => ({ eids: [{ source: 'criteo.com', uids: [{ id: 'c' }] }] }) }),
    );
    await flush();
    expect(eidsParam(sent[0].url)).toEqual([{ source: 'criteo.com', uids: [{ id: 'c' }] }]);
  });
});

describe('debug output', () => {
  test('logs the page eids it keeps (provider names and ids only in the debug build, to keep the core small)', async () => {
    const { sas, lines } = await loadedTag();
    sas.setEids(SAMPLE);
    const line = lines.find((l) => l.text.startsWith('[sas] page eids'))!.text;
    expect(line).toContain('"source":"id5-sync.com"');
    expect(line).toContain('"source":"example.org"');
  });

  test('an oversize GET leaves out unknown sources first, then the largest, and says which', async () => {
    const { sas, sent, warnings } = await loadedTag();
    const big = (source: string, n: number) => ({ source, uids: [{ id: 'x'.repeat(n) }] });
    sas.setEids([
      big('criteo.com', 3000),
      big('unknown.example', 1000),
      big('id5-sync.com', 3500),
      big('pubcid.org', 500),
    ]);
    await sas.call('std', {});
    const url = sent[0].url;
    expect(url.length).toBeLessThan(8000);
    expect((eidsParam(url) as { source: string }[]).map((e) => e.source)).toEqual(['criteo.com', 'pubcid.org']);
    expect(warnings().join('\n')).toMatch(/left out eids of.*unknown\.example.*id5-sync\.com.*8000/);
    expect(decodeBase64Json(new URL(url).searchParams.get('eids')!).issues).toEqual([]);
  });
});
