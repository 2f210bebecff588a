/**
 * Telling a plain object (what JSON or an object literal makes) from arrays, class instances and null. Pure: no DOM, no
 * `node:*`.
 */

/** True for an object literal (or a null-prototype object): not an array, a class instance or null. */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  const proto =
    v !== null && typeof v === 'object' && !Array.isArray(v) ? (Object.getPrototypeOf(v) as unknown) : undefined;
  return proto === Object.prototype || proto === null;
}
