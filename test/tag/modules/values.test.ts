// @vitest-environment happy-dom
// What modules read from the page (cookies, storage, globals, envelopes) is capped and refused when it looks like raw
// personal data; one bad value never costs the call the module's other ids.
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { defineModule } from '../../../src/tag/modules/_module.js';
import { identityLinkModule } from '../../../src/tag/modules/identityLink.js';
import { idLinkingModule } from '../../../src/tag/modules/idLinking.js';
import { criteoModule } from '../../../src/tag/modules/criteo.js';
import { uid2Module } from '../../../src/tag/modules/uid2.js';
import { prebidModule } from '../../../src/tag/modules/prebid.js';
import { MAX_STORED, readCookie, readLocal, saveItem } from '../../../src/tag/modules/_storage.js';
import { installTag } from '../../../src/tag/tag.js';
import { builtinExtensions } from '../../../src/tag/builtins.js';
import { callOnce, fakeHost, operatorEnables, resetPage } from './_host.js';
import { fakeWindow, flush } from '../helpers.js';

const w = window as any;
const HASH = 'b'.repeat(64);
const envelope = (env: string) => btoa(JSON.stringify({ timestamp: 1, version: 1, envelope: env }));
const sources = (out: { eids?: { source: string }[] }) => (out.eids ?? []).map((e) => e.source).sort();

beforeEach(() => {
  resetPage();
  operatorEnables('identityLink', 'idLinking', 'criteo', 'uid2', 'prebid');
});
afterEach(() => resetPage());

const identityLink = () =>
  callOnce(defineModule(identityLinkModule), fakeHost({ modules: { identityLink: { placementId: 1 } } }));

describe('identity envelopes', () => {
  test('an envelope holding a raw email is refused; the email hash still goes', async () => {
    saveItem('localStorage', '_sas_hem', HASH, 864e5);
    localStorage.setItem('_lr_env', envelope('jane.doe@example.com'));
    const out = await identityLink();
    expect(out.eids).toEqual([{ source: 'hemsha256', uids: [{ id: HASH, atype: 3 }], inserter: 'localhost', mm: 3 }]);
  });

  test('a 3 MB envelope is never decoded nor sent, and the ad call stays small with its other fields', async () => {
    saveItem('localStorage', '_sas_hem', HASH, 864e5);
    localStorage.setItem('_lr_env', envelope('E'.repeat(3_000_000)));
    expect(sources(await identityLink())).toEqual(['hemsha256']);

    // Through the tag: the POST body of the call keeps its network id, consent and the hash.
    const fake = fakeWindow();
    const sas = installTag(fake.win, 'https://cdn.example/tag/1234/sas.js', [
      ...builtinExtensions,
      defineModule(identityLinkModule),
    ])!;
    await flush();
    sas.setup({ domain: 'https://ads.example', modules: { identityLink: { placementId: 1 } } });
    await sas.call('generic', {});
    const body = JSON.parse(fake.sent[0].body!) as { networkId: number; eids: { source: string }[] };
    expect(fake.sent[0].body!.length).toBeLessThan(2_000);
    expect(body.networkId).toBe(1234);
    expect(body.eids.map((e) => e.source)).toEqual(['hemsha256']);
  });

  test('an envelope of 2,049 characters is refused, one of 2,048 goes', async () => {
    localStorage.setItem('_lr_env', envelope('E'.repeat(2_049)));
    expect(sources(await identityLink())).toEqual([]);
    localStorage.setItem('_lr_env', envelope('E'.repeat(2_048)));
    expect(sources(await identityLink())).toEqual(['liveramp.com']);
  });

  test("the provider script's envelope is checked the same way", async () => {
    w.ats = { retrieveEnvelope: (cb: (v: string) => void) => cb(JSON.stringify({ envelope: 'jane%40example.com' })) };
    saveItem('localStorage', '_sas_hem', HASH, 864e5);
    expect(sources(await identityLink())).toEqual(['hemsha256']);
  });

  test('a stored hash that is not a SHA-256 digest (a raw email, anything) is not sent', async () => {
    saveItem('localStorage', '_sas_hem', 'jane.doe@example.com', 864e5);
    expect(sources(await identityLink())).toEqual([]);
    saveItem('localStorage', '_sas_hem', 'not-a-hash', 864e5);
    expect(sources(await identityLink())).toEqual([]);
  });
});

describe('ids read from cookies, storage and globals', () => {
  test('storage entries over the cap read as empty', () => {
    localStorage.setItem('big', 'x'.repeat(MAX_STORED + 1));
    localStorage.setItem('ok', 'x'.repeat(MAX_STORED));
    document.cookie = `cbig=${'y'.repeat(MAX_STORED)};path=/`;
    expect(readLocal('big')).toBeUndefined();
    expect(readLocal('ok')).toHaveLength(MAX_STORED);
    expect(readCookie('cbig')).toBeUndefined();
  });

  test('an ad-side id that is a raw email is refused', async () => {
    w.criteo_pubtag = {};
    document.cookie = 'cto_bidid=jane.doe%40example.com;path=/';
    expect(await callOnce(defineModule(criteoModule), fakeHost())).toEqual({ eids: [] });
  });

  test('a unified id token that is a phone number is refused, the European one still goes', async () => {
    w.__uid2 = { getAdvertisingToken: () => '+33 6 12 34 56 78' };
    w.__euid = { getAdvertisingToken: () => 'EUIDTOKEN' };
    expect(sources(await callOnce(defineModule(uid2Module), fakeHost()))).toEqual(['euid.eu']);
  });

  test("Prebid's eids: a uid holding an email is refused, its other uids and the other eids go, Prebid's own objects untouched", async () => {
    const eids = [
      {
        source: 'pubcid.org',
        uids: [
          { id: 'jane.doe@example.com', atype: 1 },
          { id: 'PUBCID', atype: 1 },
        ],
      },
      { source: 'example-idp.com', uids: [{ id: 'X'.repeat(5_000), atype: 1 }] },
      { source: 'id5-sync.com', uids: [{ id: 'ID5*abc', atype: 1 }] },
    ];
    const before = JSON.stringify(eids);
    w.pbjs = { getUserIdsAsEids: () => eids };
    const host = fakeHost();
    const out = await callOnce(defineModule(prebidModule), host);
    expect(out.eids).toEqual([
      { source: 'pubcid.org', uids: [{ id: 'PUBCID', atype: 1 }] },
      { source: 'id5-sync.com', uids: [{ id: 'ID5*abc', atype: 1 }] },
    ]);
    expect(JSON.stringify(eids)).toBe(before);
    expect(host.logs.filter((l) => l.includes('id refused'))).toHaveLength(2);
  });

  test('a cached identifier-linking id holding a raw email is not sent', async () => {
    const cached = { id: 'jane@example.com', pd: '', gdpr: '', refreshAt: 9e15 };
    saveItem('localStorage', '_sas_idl', JSON.stringify(cached), 864e5);
    const out = await callOnce(defineModule(idLinkingModule), fakeHost({ modules: { idLinking: {} } }));
    expect(out.eids).toEqual([]);
  });
});
