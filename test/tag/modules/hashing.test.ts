import { describe, expect, test } from 'vitest';
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { sha256Hex, sha256HexSync } from '../../../src/tag/modules/_sha256.js';
import { normaliseEmail } from '../../../src/core/pii.js';

// FIPS 180-4 / NIST example vectors.
const VECTORS: [string, string][] = [
  ['', 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'],
  ['abc', 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'],
  [
    'abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq',
    '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1',
  ],
  ['a'.repeat(1_000_000), 'cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0'],
];

describe('SHA-256', () => {
  test.each(VECTORS.map(([m, h]) => [m.length, m, h]))(
    'the pure-JS fallback matches the known vector for a %i-character message',
    (_n, m, h) => {
      expect(sha256HexSync(m)).toBe(h);
    },
  );

  test.each(VECTORS.slice(0, 3))('crypto.subtle gives the same known vector for %j', async (m, h) => {
    expect(globalThis.crypto?.subtle).toBeDefined();
    expect(await sha256Hex(m)).toBe(h);
  });

  test('the known hash of a normalised email', async () => {
    expect(await sha256Hex('test@example.com')).toBe(
      '973dfe463ec85785f5f95af5ba3906eedb2d931c24e69824a89ea65dba4e813b',
    );
  });

  test('the fallback agrees with Node for any UTF-8 text, across block boundaries', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme', maxLength: 300 }),
        (s) => sha256HexSync(s) === createHash('sha256').update(s, 'utf8').digest('hex'),
      ),
      { numRuns: 300 },
    );
  });

  test('falls back to pure JS where crypto.subtle is absent (plain-http pages)', async () => {
    const desc = Object.getOwnPropertyDescriptor(globalThis, 'crypto')!;
    Object.defineProperty(globalThis, 'crypto', { value: {}, configurable: true });
    try {
      expect(await sha256Hex('abc')).toBe(VECTORS[1][1]);
    } finally {
      Object.defineProperty(globalThis, 'crypto', desc);
    }
  });
});

describe('email normalisation', () => {
  test.each([
    ['  Jane.Doe@Example.COM ', 'jane.doe@example.com'],
    ['jane.doe+news@example.com', 'jane.doe+news@example.com'],
    ['J.A.N.E+promo@Gmail.com', 'jane@gmail.com'],
    ['john.doe+x+y@googlemail.com', 'johndoe@googlemail.com'],
    ['first.last@sub.example.co.uk', 'first.last@sub.example.co.uk'],
  ])('normalises %j to %j', (raw, want) => {
    expect(normaliseEmail(raw)).toBe(want);
  });

  test.each([
    '',
    'not an email',
    'a@b',
    'a b@example.com',
    '@example.com',
    'jane@',
    'jane@example.c',
    '+x@gmail.com',
    42,
    null,
    undefined,
    'x'.repeat(250) + '@example.com',
  ])('refuses %j', (raw) => {
    expect(normaliseEmail(raw)).toBeUndefined();
  });
});
