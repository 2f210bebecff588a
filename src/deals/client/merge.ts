/**
 * Deals as plain data, with no request: merging a patch into a deal, the write fields of a deal as read, and
 * the JSON equality that tells a patch that changes nothing.
 */
import { isPlainObject } from '../../core/plain.js';
import { DEAL_WRITE_FIELDS } from '../rules/index.js';

/**
 * Merges a patch into a deal: `undefined` leaves a field alone, `null` clears it, arrays replace, and nested
 * objects (`apiCompliance`, `hyperLocalTargeting`, …) merge field by field.
 */
export function mergeDeal<T extends Record<string, unknown>>(base: T, patch: Record<string, unknown>): T {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined) continue;
    // Own properties only, defined rather than assigned: a `__proto__` key in a patch (JSON.parse makes those)
    // must become a plain field that validation then refuses, never a prototype change.
    const current = Object.hasOwn(out, key) ? out[key] : undefined;
    const next = isPlainObject(value) && isPlainObject(current) ? mergeDeal(current, value) : value;
    Object.defineProperty(out, key, { value: next, enumerable: true, writable: true, configurable: true });
  }
  return out as T;
}

/** The write fields of a deal as read (the read shape minus its read-only fields). */
export function writableFields(deal: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of DEAL_WRITE_FIELDS) if (deal[field] !== undefined) out[field] = deal[field];
  return out;
}

/** Deep equality of JSON values; a field set to `undefined` counts as absent. */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((v, i) => sameJson(v, b[i]));
  }
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    const ra = a as Record<string, unknown>;
    const rb = b as Record<string, unknown>;
    const ka = Object.keys(ra).filter((k) => ra[k] !== undefined);
    const kb = Object.keys(rb).filter((k) => rb[k] !== undefined);
    return ka.length === kb.length && ka.every((k) => sameJson(ra[k], rb[k]));
  }
  return false;
}
