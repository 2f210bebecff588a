/**
 * The service's own user id, kept in a cookie named `pid`: minted on a first visit,
 * read back by {@link parseAdCall}.
 * See docs/wire-format.md#user-ids-uid-and-pid.
 */
import { randomUUID } from 'node:crypto';

/** A new random `pid` (a UUID v4). */
export function newPid(): string {
  return randomUUID();
}

/** Options of {@link pidSetCookie}. */
export interface PidCookieOptions {
  /** Lifetime in days. Default 395 (13 months, the usual ceiling for ad cookies). */
  maxAgeDays?: number;
  /** Cookie domain; default host-only. */
  domain?: string;
  /**
   * `SameSite`: `'None'` (the default, with `Secure`) lets third-party ad calls carry it; use `'Lax'` for a
   * same-site setup served over plain http, where a `Secure` cookie would not be stored.
   */
  sameSite?: 'None' | 'Lax' | 'Strict';
}

/**
 * The `Set-Cookie` header value that stores `pid`.
 * @example res.setHeader('set-cookie', pidSetCookie(newPid()))
 */
export function pidSetCookie(pid: string, options: PidCookieOptions = {}): string {
  const sameSite = options.sameSite ?? 'None';
  const parts = [
    `pid=${pid}`,
    `Max-Age=${Math.round((options.maxAgeDays ?? 395) * 86_400)}`,
    'Path=/',
    'HttpOnly',
    `SameSite=${sameSite}`,
  ];
  if (options.domain) parts.push(`Domain=${options.domain}`);
  if (sameSite === 'None') parts.push('Secure');
  return parts.join('; ');
}
