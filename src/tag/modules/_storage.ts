/**
 * First-party storage with expiry for provider modules: localStorage or a cookie, holding `{"v": value, "e":
 * expiresAtMs}`. Callers gate every read and write on consent (consent-rules.ts `mayRunModule`); nothing here checks
 * it (deleting needs no consent: forgetKeys). Every access is guarded: storage that is disabled, full or blocked
 * reads as empty and drops writes. An entry longer than {@link MAX_STORED} reads as empty: a page's 3 MB value
 * is never decoded, nor sent.
 */

/** Longest cookie or localStorage value a module reads, in characters (docs/tag.md#what-modules-read-and-refuse). */
export const MAX_STORED = 16_384;

/** Where a module keeps its own entries. */
export type StorageType = 'localStorage' | 'cookie';

/** Reads a cookie by name (decoded), or undefined. */
export function readCookie(name: string): string | undefined {
  try {
    for (const part of document.cookie.split(';')) {
      const i = part.indexOf('=');
      if (i > 0 && part.slice(0, i).trim() === name)
        return part.length > MAX_STORED ? undefined : decodeURIComponent(part.slice(i + 1).trim());
    }
  } catch {
    /* cookies blocked */
  }
  return undefined;
}

/** Reads a localStorage entry, or undefined. */
export function readLocal(name: string): string | undefined {
  try {
    const value = localStorage.getItem(name);
    return value !== null && value.length <= MAX_STORED ? value : undefined;
  } catch {
    return undefined;
  }
}

function writeCookie(name: string, value: string, expires: number): void {
  const secure = location.protocol === 'https:' ? ';Secure' : '';
  document.cookie = `${name}=${encodeURIComponent(value)};expires=${new Date(expires).toUTCString()};path=/;SameSite=Lax${secure}`;
}

/** Stores `value` under `key` until `ttlMs` from `now`. */
export function saveItem(type: StorageType, key: string, value: string, ttlMs: number, now = Date.now()): void {
  const e = now + ttlMs;
  const text = JSON.stringify({ v: value, e });
  try {
    if (type === 'cookie') writeCookie(key, text, e);
    else localStorage.setItem(key, text);
  } catch {
    /* storage full or blocked: the id just is not kept */
  }
}

/** Removes `key`. */
export function removeItem(type: StorageType, key: string): void {
  try {
    if (type === 'cookie') writeCookie(key, '', 0);
    else localStorage.removeItem(key);
  } catch {
    /* nothing to do */
  }
}

/**
 * Deletes a module's own keys (core/module-keys.ts) wherever it may have kept them: the localStorage entry and the
 * cookie of each name.
 */
export function forgetKeys(keys: readonly string[]): void {
  for (const key of keys) {
    removeItem('localStorage', key);
    // Only a cookie that is there: deleting one is a cookie write too, which a consent audit of the page would see.
    if (readCookie(key) !== undefined) removeItem('cookie', key);
  }
}

/** A module definition's `keys` and `forget` for the keys it stores: `{ ...storing([HASH_KEY]) }`. */
export const storing = (keys: readonly string[]) => ({ keys, forget: () => forgetKeys(keys) });

/** The value stored under `key`, or undefined when absent, unreadable or expired (an expired entry is removed). */
export function loadItem(type: StorageType, key: string, now = Date.now()): string | undefined {
  const raw = type === 'cookie' ? readCookie(key) : readLocal(key);
  if (!raw) return undefined;
  try {
    const { v, e } = JSON.parse(raw) as { v?: unknown; e?: unknown };
    if (typeof v === 'string' && typeof e === 'number' && e > now) return v;
  } catch {
    /* not ours or corrupt: treat as expired */
  }
  removeItem(type, key);
  return undefined;
}
