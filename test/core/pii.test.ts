import { describe, expect, test } from 'vitest';
import { findEmail, hasEmail, looksPersonal, normaliseEmail, scrubUrl, unescapeAll } from '../../src/core/index.js';

describe('hasEmail', () => {
  test.each([
    ['jane.doe@example.com', 'as it is'],
    ['JANE.DOE@EXAMPLE.COM', 'upper case'],
    ['jane.doe%40example.com', 'percent-encoded'],
    ['jane.doe%2540example.com', 'encoded twice'],
    ['%6A%61%6E%65%40%65%78%61%6D%70%6C%65%2E%63%6F%6D', 'every character escaped'],
    ['%6a%61%6e%65%40%65%78%61%6d%70%6c%65%2e%63%6f%6d', 'escapes in lower case'],
    ['jane%25%34%30example.com', 'its escape escaped character by character'],
    ['jane%u0040example.com', 'a %u escape'],
    ['name=Jane+Doe+jane.doe+news@example.co.uk;', 'inside other text'],
  ])('finds %j (%s)', (text) => {
    expect(hasEmail(text)).toBe(true);
  });

  test.each([
    ['https://news.example/sport/2024/10/match', 'a plain page URL'],
    ['/@handle', 'a handle with no domain'],
    ['user@localhost', 'a host with no dot'],
    ['100%', 'a lone percent'],
    ['%E0%A4%A', 'a broken escape'],
    ['ID5*6Jq2X+abc/def==', 'a Base64 id'],
    ['973dfe463ec85785f5f95af5ba3906eedb2d931c24e69824a89ea65dba4e813b', 'a SHA-256 hash'],
  ])('finds none in %j (%s)', (text) => {
    expect(hasEmail(text)).toBe(false);
  });

  test('never throws on broken escapes, where decodeURIComponent does', () => {
    expect(() => decodeURIComponent('%E0%A4%A')).toThrow();
    expect(unescapeAll('%E0%A4%A%')).toBe('\u00e0\u00a4%A%');
  });
});

describe('scrubUrl', () => {
  test.each([
    [
      'https://news.example/welcome?email=jane.doe%40example.com&utm_source=mail',
      'https://news.example/welcome?email=&utm_source=mail',
    ],
    ['https://news.example/u/Jane.Doe@Example.COM/profile', 'https://news.example/u//profile'],
    ['https://news.example/p#contact=jane%2540example.com', 'https://news.example/p#contact='],
    ['https://news.example/p?next=%2Fu%3Fe%3Djane%40example.com&x=1', 'https://news.example/p?next=&x=1'],
    ['https://news.example/p?e=jane%252525252540example.com', 'https://news.example/p?e='],
    ['https://news.example/a;jsessionid=1;mail=jane@example.com', 'https://news.example/a;jsessionid=1;mail='],
  ])('%s → %s', (url, clean) => {
    expect(scrubUrl(url)).toBe(clean);
  });

  test('leaves a URL without an email exactly as it is', () => {
    const url = 'https://news.example/sport/@team?q=a%20b&tag=%E2%9C%93#top';
    expect(scrubUrl(url)).toBe(url);
  });

  test('puts what replace returns in place of each piece that holds an email', () => {
    expect(scrubUrl('https://x.example/a?m=jane@example.com&n=bob%40example.org', (p) => `<${p.length}>`)).toBe(
      'https://x.example/a?m=<16>&n=<17>',
    );
  });
});

describe('findEmail', () => {
  test('cuts the first email out of its surroundings, decoded', () => {
    expect(findEmail('next=%2Fu%2FJane.Doe%2540Example.com%2Fedit')).toBe('Jane.Doe@Example.com');
    expect(findEmail('to:jane+news@mail.example.co.uk.')).toBe('jane+news@mail.example.co.uk');
    expect(findEmail('no email here')).toBeUndefined();
  });
});

describe('looksPersonal', () => {
  test('an email anywhere, or a whole international phone number', () => {
    expect(looksPersonal('{"envelope":"jane@example.com"}')).toBe(true);
    expect(looksPersonal('+33 6 12 34 56 78')).toBe(true);
    expect(looksPersonal('+1 (415) 555-2671')).toBe(true);
  });

  test('never an id, a token or a hash', () => {
    for (const id of [
      'ID5*6Jq2X2WNyC8vbB8w-kKzOAoEh_ByVcqvhd0VOK6pLpfJhDtcxkqUDVjCFg1sB1Pm',
      'AjfowMv4ZHZQJFM8TpiUnYEyA81Vdgg',
      'CRITEO-demo-bidid',
      '1234567890123',
      '+1',
      'UID2-demo-advertising-token',
    ])
      expect(looksPersonal(id), id).toBe(false);
  });
});

describe('normaliseEmail', () => {
  test('is the one the tag and the ad server share', () => {
    expect(normaliseEmail(' John.Doe+news@GoogleMail.com ')).toBe('johndoe@googlemail.com');
    expect(normaliseEmail('Jane.Doe@Example.com')).toBe('jane.doe@example.com');
    expect(normaliseEmail('not an email')).toBeUndefined();
  });
});
