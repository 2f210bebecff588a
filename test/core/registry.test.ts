import { describe, expect, test } from 'vitest';
import {
  PROVIDERS,
  UNKNOWN_PROVIDER,
  isKnownSource,
  providerForSource,
  providerById,
  providerIdForSource,
} from '../../src/core/index.js';

describe('provider registry', () => {
  test('has 45 named providers with unique ids 1..45 and unique sources', () => {
    expect(PROVIDERS).toHaveLength(45);
    expect(new Set(PROVIDERS.map((p) => p.id))).toEqual(new Set(Array.from({ length: 45 }, (_, i) => i + 1)));
    expect(new Set(PROVIDERS.map((p) => p.source)).size).toBe(45);
  });

  test("no alias is another provider's source or another provider's alias", () => {
    const all = PROVIDERS.flatMap((p) => [p.source, ...p.aliases]);
    expect(new Set(all).size).toBe(all.length);
  });

  test('fixes Unknown = 0, hemsha256 = 42 and ip = 43, the three sources that are not domains', () => {
    expect(UNKNOWN_PROVIDER).toMatchObject({ id: 0, name: 'Unknown' });
    expect(providerForSource('hemsha256').id).toBe(42);
    expect(providerForSource('ip').id).toBe(43);
    expect(providerById(42).source).toBe('hemsha256');
  });

  test('resolves both Unified ID 2.0 sources and is case-insensitive', () => {
    expect(providerForSource('uidapi.com').name).toMatch(/Unified ID 2\.0/);
    expect(providerForSource('EUID.eu').id).toBe(providerForSource('euid.eu').id);
    expect(providerForSource('euid.eu').id).not.toBe(providerForSource('uidapi.com').id);
    expect(providerForSource('LiveRamp.COM').source).toBe('liveramp.com');
  });

  test('maps anything unregistered, or not a string, to Unknown', () => {
    expect(providerForSource('example.org')).toBe(UNKNOWN_PROVIDER);
    expect(providerForSource(undefined)).toBe(UNKNOWN_PROVIDER);
    expect(providerForSource(42)).toBe(UNKNOWN_PROVIDER);
    expect(providerById(99)).toBe(UNKNOWN_PROVIDER);
  });
});

describe('sources as Prebid.js sends them', () => {
  test("Opera's id module sends t.adx.opera.com: Opera Ads ID", () => {
    expect(providerForSource('t.adx.opera.com')).toMatchObject({ id: 44, name: 'Opera Ads ID' });
    expect(providerForSource('operaads.com').id).toBe(44);
  });

  test('Hadron is sent as audigent.com: Audigent Hadron ID, under the id audigent.com always had', () => {
    expect(providerForSource('audigent.com')).toMatchObject({ id: 22, name: 'Audigent Hadron ID' });
  });

  test("PubMatic's id module sends esp.pubmatic.com: PubMatic", () => {
    expect(providerForSource('esp.pubmatic.com')).toMatchObject({ id: 23, name: 'PubMatic' });
  });

  test('Merkle sends one source per SSP, <ssp>.merkleinc.com: every subdomain is Merkle ID, other domains are not', () => {
    for (const s of ['merkleinc.com', 'ssp1.merkleinc.com', 'SSP2.MerkleInc.com', 'a.b.merkleinc.com']) {
      expect(providerIdForSource(s), s).toBe(12);
      expect(isKnownSource(s), s).toBe(true);
    }
    for (const s of ['xmerkleinc.com', '.merkleinc.com.evil.example', 'merkleinc.com.example', 'ssp1.merkleinc.co']) {
      expect(providerIdForSource(s), s).toBe(0);
      expect(isKnownSource(s), s).toBe(false);
    }
    expect(providerById(12).aliases).toEqual(['*.merkleinc.com']);
  });

  test('every alias resolves to its provider, in any case, and counts as known', () => {
    for (const p of PROVIDERS) {
      for (const a of p.aliases.filter((x) => !x.startsWith('*.'))) {
        expect(providerForSource(` ${a.toUpperCase()} `), a).toBe(p);
        expect(isKnownSource(a), a).toBe(true);
      }
    }
  });

  test('a hostile, very long source is looked up in linear time', () => {
    const long = `${'a.'.repeat(500_000)}x`;
    const start = performance.now();
    expect(providerIdForSource(long)).toBe(0);
    expect(isKnownSource(`${long}.merkleinc.com`)).toBe(true);
    // Quadratic matching of 1 MB would take minutes; linear takes a few milliseconds.
    expect(performance.now() - start).toBeLessThan(1000);
  });
});

describe('providerIdForSource', () => {
  test('agrees with providerForSource for every provider and for unknown sources', () => {
    for (const p of PROVIDERS) {
      expect(providerIdForSource(p.source.toUpperCase())).toBe(p.id);
      expect(providerById(p.id)).toBe(p);
    }
    expect(providerIdForSource('nope.example')).toBe(0);
    expect(providerIdForSource(null)).toBe(0);
  });
});
