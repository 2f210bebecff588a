// @vitest-environment happy-dom
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { defineModule } from '../../../src/tag/modules/_module.js';
import { registrableDomain, stampProvenance } from '../../../src/tag/modules/_provenance.js';
import { idLinkingMm } from '../../../src/tag/modules/idLinking.js';
import type { Eid } from '../../../src/core/index.js';
import { callOnce, fakeHost, operatorEnables, resetPage, storageSnapshot } from './_host.js';

/**
 * A document on `hostname` whose cookie jar behaves like a browser's: a cookie for a domain on the public
 * suffix list, or not a parent of the host, is refused; `max-age=0` removes it.
 */
function fakeDocument(hostname: string, publicSuffixes: string[]) {
  const jar = new Map<string, string>();
  const writes: string[] = [];
  const doc = {
    location: { hostname },
    get cookie() {
      return [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    },
    set cookie(text: string) {
      writes.push(text);
      const [pair, ...attrs] = text.split(';');
      const [name, value] = pair.split('=');
      const domain = attrs.find((a) => a.startsWith('domain='))?.slice(7);
      if (domain && (publicSuffixes.includes(domain) || !(hostname === domain || hostname.endsWith('.' + domain))))
        return;
      if (attrs.includes('max-age=0')) jar.delete(name);
      else jar.set(name, value);
    },
  };
  return { doc: doc as unknown as Document, jar, writes };
}

describe('registrableDomain', () => {
  test.each([
    ['news.example.co.uk', 'example.co.uk'],
    ['a.b.example.com', 'example.com'],
    ['www.example.com', 'example.com'],
    ['example.com', 'example.com'],
    ['localhost', 'localhost'],
    ['127.0.0.1', '127.0.0.1'],
  ])('of %s is %s, and the probe cookie is gone afterwards', (host, expected) => {
    const { doc, jar } = fakeDocument(host, ['com', 'uk', 'co.uk']);
    expect(registrableDomain(doc)).toBe(expected);
    expect(jar.size).toBe(0);
  });
});

describe('module eid provenance', () => {
  const eid = (extra: Partial<Eid> = {}): Eid => ({ source: 'example.org', uids: [{ id: 'x' }], ...extra });

  test("stamps the inserter and the module's mm, keeping whatever the provider already set, never changing its input", () => {
    const given = [eid(), eid({ inserter: 'provider.example', mm: 2 })];
    const copy = structuredClone(given);
    expect(
      stampProvenance(
        given,
        () => 'pub.example',
        () => 3,
      ),
    ).toEqual([eid({ inserter: 'pub.example', mm: 3 }), eid({ inserter: 'provider.example', mm: 2 })]);
    expect(stampProvenance(given, () => 'pub.example')).toEqual([
      eid({ inserter: 'pub.example' }),
      eid({ inserter: 'provider.example', mm: 2 }),
    ]);
    expect(given).toEqual(copy);
  });

  test('identifier linking: linkType 2 is authenticated (3), 1 inferred (5), anything else leaves mm unset', () => {
    const withLink = (linkType?: number) => ({
      source: 'id5-sync.com',
      uids: [{ id: 'i', ext: linkType === undefined ? undefined : { linkType } }],
    });
    expect([2, 1, 0, undefined].map((l) => idLinkingMm(withLink(l)))).toEqual([3, 5, undefined, undefined]);
  });

  describe('through a running module', () => {
    beforeEach(() => {
      resetPage();
      operatorEnables('probe');
    });
    afterEach(() => resetPage());
    const probe = (mm?: false | (() => number)) =>
      defineModule({
        name: 'probe',
        gvl: 131,
        start: () => ({ eids: () => [eid()] }),
        ...(mm === undefined ? {} : { mm }),
      });

    test('setup({ inserter }) names the inserter instead of the page domain', async () => {
      expect(
        (
          await callOnce(
            probe(() => 4),
            fakeHost({ inserter: 'publisher.example' }),
          )
        ).eids,
      ).toEqual([eid({ inserter: 'publisher.example', mm: 4 })]);
    });

    test('mm: false (the Prebid bridge) passes eids on exactly as given, and leaves no cookie behind', async () => {
      expect((await callOnce(probe(false), fakeHost({}))).eids).toEqual([eid()]);
      expect((await callOnce(probe(), fakeHost({}))).eids).toEqual([eid({ inserter: 'localhost' })]);
      expect(storageSnapshot().cookie).toBe('');
    });
  });
});
