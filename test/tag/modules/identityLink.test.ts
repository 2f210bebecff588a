// @vitest-environment happy-dom
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { defineModule } from '../../../src/tag/modules/_module.js';
import {
  decodeEnvelope,
  ENVELOPE_KEY,
  HASH_KEY,
  identityLinkModule,
  readSettings,
  startIdentityLink,
} from '../../../src/tag/modules/identityLink.js';
import { loadItem } from '../../../src/tag/modules/_storage.js';
import { sha256HexSync } from '../../../src/tag/modules/_sha256.js';
import { callOnce, fakeHost, gdprState, operatorEnables, resetPage, storageSnapshot } from './_host.js';

const w = window as any;
const EMAIL = 'Jane.Doe+news@Gmail.com';
const HASH = sha256HexSync('janedoe@gmail.com');
// Every run is stopped after its test: a live MutationObserver from one test must not see the next test's DOM.
const runs: { stop?(): void }[] = [];
const make = () =>
  defineModule({
    ...identityLinkModule,
    start: (ctx) => {
      const r = startIdentityLink(ctx);
      if (r) runs.push(r);
      return r;
    },
  });
// Its ids come from an email the user gave: authenticated (mm 3); the page (localhost in happy-dom) inserted them.
const PROVENANCE = { inserter: 'localhost', mm: 3 };
const tick = (ms = 10) => new Promise((r) => setTimeout(r, ms));
const envelopeCookie = (env: string) => btoa(JSON.stringify({ timestamp: Date.now(), version: 1, envelope: env }));
let ext: ReturnType<typeof make>;

beforeEach(() => {
  resetPage();
  history.replaceState(null, '', '/page');
  operatorEnables('identityLink');
  ext = make();
});
afterEach(() => {
  runs.splice(0).forEach((r) => r.stop?.());
  resetPage();
});

const setupWith = (settings: Record<string, unknown>, consent = undefined as any) =>
  fakeHost({ modules: { identityLink: settings } }, consent === undefined ? { ready: true } : consent);

describe('identityLink settings', () => {
  test('placementId is mandatory: without it the module stays off and says why', async () => {
    const host = setupWith({});
    expect(await callOnce(ext, host)).toEqual({});
    expect(host.logs.join('\n')).toContain('placementId (number) is mandatory');
    expect(readSettings({ placementId: '12' })).toContain('placementId');
  });

  test('defaults: scrapeAndUrl, localStorage, the email URL parameter, text and email inputs', () => {
    expect(readSettings({ placementId: 7 })).toEqual({
      placementId: 7,
      cssSelectors: ['input[type=text]', 'input[type=email]'],
      detectionType: 'scrapeAndUrl',
      storageType: 'localStorage',
      urlParameter: 'email',
    });
  });

  test.each([
    [{ detectionType: 'dom' }, 'detectionType'],
    [{ storageType: 'indexedDB' }, 'storageType'],
    [{ urlParameter: '' }, 'urlParameter'],
    [{ cssSelectors: [] }, 'cssSelectors'],
    [{ cssSelectors: ['input[[['] }, 'cssSelectors'],
    [{ cssSelectors: 'input' }, 'cssSelectors'],
    [{ cssSelectors: [''] }, 'cssSelectors'],
  ])('refuses %j', (bad, why) => {
    expect(readSettings({ placementId: 1, ...bad })).toContain(why);
  });
});

describe('identityLink detection', () => {
  test('hashes a normalised email from the URL parameter and emits a hemsha256 eid', async () => {
    history.replaceState(null, '', '/page?email=' + encodeURIComponent(EMAIL));
    const out = await callOnce(ext, setupWith({ placementId: 1 }));
    expect(out.eids).toEqual([{ source: 'hemsha256', uids: [{ id: HASH, atype: 3 }], ...PROVENANCE }]);
  });

  test('reads a custom urlParameter', async () => {
    history.replaceState(null, '', '/page?em=' + encodeURIComponent(EMAIL) + '&email=other@example.com');
    const out = await callOnce(ext, setupWith({ placementId: 1, urlParameter: 'em' }));
    expect(out.eids?.[0].uids[0].id).toBe(HASH);
  });

  test('scrapes matching inputs that are on the page at start', async () => {
    document.body.innerHTML = `<input type="email" value="${EMAIL}">`;
    const out = await callOnce(ext, setupWith({ placementId: 1, detectionType: 'scrape' }));
    expect(out.eids?.[0].uids[0].id).toBe(HASH);
  });

  test('detectionType url ignores inputs; scrape ignores the URL', async () => {
    document.body.innerHTML = `<input type="email" value="${EMAIL}">`;
    expect((await callOnce(ext, setupWith({ placementId: 1, detectionType: 'url' }))).eids).toEqual([]);
    resetPage();
    operatorEnables('identityLink');
    history.replaceState(null, '', '/page?email=' + encodeURIComponent(EMAIL));
    expect((await callOnce(make(), setupWith({ placementId: 1, detectionType: 'scrape' }))).eids).toEqual([]);
  });

  test('finds an email typed into an input added after load (change event)', async () => {
    const host = setupWith({ placementId: 1 });
    expect((await callOnce(ext, host)).eids).toEqual([]);
    const form = document.createElement('form');
    form.innerHTML = '<input type="text" name="login">';
    document.body.append(form);
    const input = form.querySelector('input')!;
    input.value = EMAIL;
    input.dispatchEvent(new Event('change', { bubbles: true }));
    await tick();
    expect((await ext.beforeCall!({ type: 'std' }))?.eids?.[0].uids[0].id).toBe(HASH);
  });

  test('finds a pre-filled input added after load (MutationObserver)', async () => {
    const host = setupWith({ placementId: 1 });
    await callOnce(ext, host);
    document.body.insertAdjacentHTML('beforeend', `<div><input type="email" value="${EMAIL}"></div>`);
    await tick(20);
    expect((await ext.beforeCall!({ type: 'std' }))?.eids?.[0].uids[0].id).toBe(HASH);
  });

  test('only inputs matching cssSelectors count', async () => {
    document.body.innerHTML = `<input type="email" value="${EMAIL}"><input class="login" value="other@example.com">`;
    const out = await callOnce(ext, setupWith({ placementId: 1, cssSelectors: ['input.login'] }));
    expect(out.eids?.[0].uids[0].id).toBe(sha256HexSync('other@example.com'));
  });

  test('text that is not an email is ignored', async () => {
    document.body.innerHTML = '<input type="text" value="hello world"><input type="email" value="nobody@">';
    expect((await callOnce(ext, setupWith({ placementId: 1 }))).eids).toEqual([]);
  });
});

describe('identityLink storage', () => {
  test('keeps the hash, never the email, in localStorage with an expiry', async () => {
    history.replaceState(null, '', '/page?email=' + encodeURIComponent(EMAIL));
    await callOnce(ext, setupWith({ placementId: 1 }));
    expect(loadItem('localStorage', HASH_KEY)).toBe(HASH);
    const all = JSON.stringify(storageSnapshot()).toLowerCase();
    expect(all).not.toContain('jane');
    expect(JSON.parse(localStorage.getItem(HASH_KEY)!).e).toBeGreaterThan(Date.now() + 29 * 864e5);
  });

  test('storageType cookie keeps it in a cookie instead', async () => {
    history.replaceState(null, '', '/page?email=' + encodeURIComponent(EMAIL));
    await callOnce(ext, setupWith({ placementId: 1, storageType: 'cookie' }));
    expect(loadItem('cookie', HASH_KEY)).toBe(HASH);
    expect(localStorage.length).toBe(0);
    expect(document.cookie.toLowerCase()).not.toContain('jane');
  });

  test('a stored hash is sent on later pages without an email', async () => {
    localStorage.setItem(HASH_KEY, JSON.stringify({ v: HASH, e: Date.now() + 60_000 }));
    expect((await callOnce(ext, setupWith({ placementId: 1 }))).eids?.[0].uids[0].id).toBe(HASH);
  });

  test('an expired hash is not sent', async () => {
    localStorage.setItem(HASH_KEY, JSON.stringify({ v: HASH, e: Date.now() - 1 }));
    expect((await callOnce(ext, setupWith({ placementId: 1 }))).eids).toEqual([]);
    expect(localStorage.getItem(HASH_KEY)).toBeNull();
  });

  test('where GDPR applies without LiveRamp consent: no scraping, no storage read or write, no eid', async () => {
    history.replaceState(null, '', '/page?email=' + encodeURIComponent(EMAIL));
    document.body.innerHTML = `<input type="email" value="${EMAIL}">`;
    document.cookie = `${ENVELOPE_KEY}=${envelopeCookie('ENV')};path=/`;
    const before = storageSnapshot();
    const out = await callOnce(ext, setupWith({ placementId: 1 }, gdprState([1, 2], [45])));
    expect(out).toEqual({});
    expect(storageSnapshot()).toEqual(before);
  });

  test('consent withdrawn between two ad calls: an email typed after that is neither stored nor sent', async () => {
    const host = setupWith({ placementId: 1 }, gdprState([1, 2], [45, 97]));
    expect((await callOnce(ext, host)).eids).toEqual([]);
    // The user withdraws LiveRamp's consent in the CMP; no ad call has run since.
    host.state = gdprState([1, 2], [45]);
    document.body.insertAdjacentHTML('beforeend', '<input type="email" id="late">');
    const input = document.getElementById('late') as HTMLInputElement;
    input.value = EMAIL;
    input.dispatchEvent(new Event('change', { bubbles: true }));
    await tick(20);
    expect(localStorage.getItem(HASH_KEY)).toBeNull();
    expect(document.cookie).not.toContain(HASH_KEY);
    expect(await ext.beforeCall!({ type: 'std' })).toEqual({});
  });

  test('consent withdrawn after a hash was stored: the stored hash is deleted when the module stops', async () => {
    history.replaceState(null, '', '/page?email=' + encodeURIComponent(EMAIL));
    const host = setupWith({ placementId: 1 }, gdprState([1, 2], [45, 97]));
    expect((await callOnce(ext, host)).eids?.[0].uids[0].id).toBe(HASH);
    expect(localStorage.getItem(HASH_KEY)).not.toBeNull();
    host.state = gdprState([1, 2], [45]);
    expect(await ext.beforeCall!({ type: 'std' })).toEqual({});
    expect(localStorage.getItem(HASH_KEY)).toBeNull();
  });

  test('with purpose 1 and LiveRamp consent it runs', async () => {
    history.replaceState(null, '', '/page?email=' + encodeURIComponent(EMAIL));
    const out = await callOnce(ext, setupWith({ placementId: 1 }, gdprState([1, 2], [45, 97])));
    expect(out.eids?.[0].uids[0].id).toBe(HASH);
  });
});

describe('identityLink envelope', () => {
  test('decodes the provider entry: Base64 of JSON with an envelope', () => {
    expect(decodeEnvelope(envelopeCookie('AjfowMv4ZHZQJFM8TpiUnYEyA81Vdgg'))).toBe('AjfowMv4ZHZQJFM8TpiUnYEyA81Vdgg');
    expect(decodeEnvelope('not base64 !')).toBeUndefined();
    expect(decodeEnvelope(btoa('{"version":1}'))).toBeUndefined();
    expect(decodeEnvelope(undefined)).toBeUndefined();
  });

  test('emits the _lr_env cookie envelope as a liveramp.com eid', async () => {
    document.cookie = `${ENVELOPE_KEY}=${envelopeCookie('ENV-COOKIE')};path=/`;
    const out = await callOnce(ext, setupWith({ placementId: 1 }));
    expect(out.eids).toEqual([{ source: 'liveramp.com', uids: [{ id: 'ENV-COOKIE', atype: 3 }], ...PROVENANCE }]);
  });

  test('falls back to the _lr_env localStorage entry', async () => {
    localStorage.setItem(ENVELOPE_KEY, envelopeCookie('ENV-LOCAL'));
    const out = await callOnce(ext, setupWith({ placementId: 1 }));
    expect(out.eids?.[0]).toEqual({ source: 'liveramp.com', uids: [{ id: 'ENV-LOCAL', atype: 3 }], ...PROVENANCE });
  });

  test("prefers the provider script's retrieveEnvelope API", async () => {
    localStorage.setItem(ENVELOPE_KEY, envelopeCookie('ENV-LOCAL'));
    w.ats = {
      retrieveEnvelope: (cb: (s: string) => void) => setTimeout(() => cb(JSON.stringify({ envelope: 'ENV-ATS' })), 5),
    };
    history.replaceState(null, '', '/page?email=' + encodeURIComponent(EMAIL));
    const out = await callOnce(ext, setupWith({ placementId: 1 }));
    expect(out.eids).toEqual([
      { source: 'hemsha256', uids: [{ id: HASH, atype: 3 }], ...PROVENANCE },
      { source: 'liveramp.com', uids: [{ id: 'ENV-ATS', atype: 3 }], ...PROVENANCE },
    ]);
  });

  test('a script API that throws falls back to storage', async () => {
    localStorage.setItem(ENVELOPE_KEY, envelopeCookie('ENV-LOCAL'));
    w.ats = {
      retrieveEnvelope: () => {
        throw new Error('ats broke');
      },
    };
    expect((await callOnce(ext, setupWith({ placementId: 1 }))).eids?.[0].uids[0].id).toBe('ENV-LOCAL');
  });
});
