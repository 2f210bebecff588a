import { describe, expect, test } from 'vitest';
import { PROVIDERS, UNKNOWN_PROVIDER, providerForSource, providerById, providerIdForSource } from '../../src/core/index.js';

describe('provider registry', () => {
  test('has 45 named providers with unique ids 1..45 and unique sources', () => {
    expect(PROVIDERS).toHaveLength(45);
    expect(new Set(PROVIDERS.map((p) => p.id))).toEqual(new Set(Array.from({ length: 45 }, (_, i) => i + 1)));
    expect(new Set(PROVIDERS.map((p) => p.source)).size).toBe(45);
  });

  test('fixes Unknown = 0, hemsha256 = 42 and ip = 43 as the spec says', () => {
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
