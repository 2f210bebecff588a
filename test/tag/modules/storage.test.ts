// @vitest-environment happy-dom
import { beforeEach, describe, expect, test } from 'vitest';
import { loadItem, readCookie, readLocal, removeItem, saveItem } from '../../../src/tag/modules/_storage.js';
import { resetPage } from './_host.js';

beforeEach(() => resetPage());

describe.each(['localStorage', 'cookie'] as const)('storage with expiry in %s', (type) => {
  test('returns a value until it expires, then removes it', () => {
    const now = Date.now();
    saveItem(type, 'k', 'v1', 1000, now);
    expect(loadItem(type, 'k', now + 999)).toBe('v1');
    expect(loadItem(type, 'k', now + 1000)).toBeUndefined();
    expect(type === 'cookie' ? readCookie('k') : readLocal('k')).toBeUndefined();
  });

  test('a corrupt or foreign entry reads as absent', () => {
    if (type === 'cookie') document.cookie = 'k=garbage;path=/';
    else localStorage.setItem('k', '{"v":1}');
    expect(loadItem(type, 'k')).toBeUndefined();
  });

  test('remove deletes the entry', () => {
    saveItem(type, 'k', 'v', 60_000);
    removeItem(type, 'k');
    expect(loadItem(type, 'k')).toBeUndefined();
  });

  test('keeps values with characters that need encoding', () => {
    saveItem(type, 'k', 'a;b=c d', 60_000);
    expect(loadItem(type, 'k')).toBe('a;b=c d');
  });
});

test('the cookie carries an expiry date, so the browser drops it too', () => {
  const writes: string[] = [];
  const desc = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(document), 'cookie')!;
  Object.defineProperty(document, 'cookie', {
    configurable: true,
    get: () => desc.get!.call(document),
    set: (v) => {
      writes.push(v);
      desc.set!.call(document, v);
    },
  });
  try {
    saveItem('cookie', 'k', 'v', 86_400_000, Date.UTC(2030, 0, 1));
    expect(writes[0]).toMatch(/expires=\w+, 02 Jan 2030 00:00:00 GMT/);
    expect(writes[0]).toContain('path=/');
  } finally {
    delete (document as any).cookie;
  }
});

test('blocked storage never throws', () => {
  const desc = Object.getOwnPropertyDescriptor(window, 'localStorage')!;
  Object.defineProperty(window, 'localStorage', {
    configurable: true,
    get: () => {
      throw new Error('SecurityError');
    },
  });
  try {
    expect(() => saveItem('localStorage', 'k', 'v', 1000)).not.toThrow();
    expect(loadItem('localStorage', 'k')).toBeUndefined();
  } finally {
    Object.defineProperty(window, 'localStorage', desc);
  }
});
