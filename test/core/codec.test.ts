import { describe, expect, test } from 'vitest';
import fc from 'fast-check';
import {
  decodeBase64Json,
  decodeBase64Loose,
  decodeBase64Text,
  encodeBase64Url,
  encodeEids,
} from '../../src/core/index.js';

describe('Base64 codec', () => {
  test('encodes eids as URL-safe Base64 without padding of the UTF-8 JSON', () => {
    const eids = [{ source: 'euid.eu', uids: [{ id: 'é~?>ÿ', atype: 3 }] }];
    const text = encodeEids(eids);
    expect(text).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(text).toBe(Buffer.from(JSON.stringify(eids), 'utf8').toString('base64url'));
  });

  test('decodeBase64Loose, the tag decode, reads standard and URL-safe Base64, padded or not, and throws on the rest', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), (s) => {
        const standard = Buffer.from(s, 'utf8').toString('base64');
        expect(decodeBase64Loose(standard)).toBe(s);
        expect(decodeBase64Loose(encodeBase64Url(s))).toBe(s);
      }),
    );
    expect(() => decodeBase64Loose('%%%')).toThrow();
    expect(() => decodeBase64Loose(Buffer.from([0xff, 0xfe, 0x80]).toString('base64'))).toThrow();
  });

  test('round-trips any string, including astral characters', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), (s) => {
        expect(decodeBase64Text(encodeBase64Url(s))).toBe(s);
      }),
    );
  });

  test('decodes standard and URL-safe Base64, padded or not', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        const buf = Buffer.from(JSON.stringify(v), 'utf8');
        for (const form of [
          buf.toString('base64'),
          buf.toString('base64').replace(/=+$/, ''),
          buf.toString('base64url'),
          ` ${buf.toString('base64url')}\n`,
        ]) {
          expect(decodeBase64Json(form)).toEqual({ value: JSON.parse(JSON.stringify(v)), issues: [] });
        }
      }),
    );
  });

  test('reports invalid Base64, invalid UTF-8 and invalid JSON as issues instead of throwing', () => {
    expect(decodeBase64Json('%%%').issues).toEqual([{ path: 'eids', message: 'not valid Base64' }]);
    expect(decodeBase64Json('').issues).toHaveLength(1);
    expect(decodeBase64Json('abcde').issues[0].message).toBe('not valid Base64');
    expect(decodeBase64Json(Buffer.from([0xff, 0xfe, 0x80]).toString('base64')).issues[0].message).toBe(
      'not valid Base64',
    );
    expect(decodeBase64Json(Buffer.from('{not json').toString('base64')).issues[0].message).toMatch(
      /not hold valid JSON/,
    );
    expect(decodeBase64Json(42 as never).issues).toHaveLength(1);
  });
});
