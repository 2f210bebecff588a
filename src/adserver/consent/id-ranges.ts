/**
 * Sets of vendor ids kept as sorted, disjoint [from, to] pairs: a TC string's range entry to vendor 10,000 costs
 * two numbers, not 10,000 set entries, and a lookup is a binary search.
 */

/** Vendor ids as sorted, disjoint, non-adjacent pairs `[from0, to0, from1, to1, …]`. */
export type IdRanges = Uint16Array;

/** The empty set. */
export const NO_IDS: IdRanges = new Uint16Array(0);

/** Whether `id` is in `set`. */
export function hasId(set: IdRanges, id: number): boolean {
  let lo = 0;
  let hi = (set.length >> 1) - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (id < set[2 * mid]) hi = mid - 1;
    else if (id > set[2 * mid + 1]) lo = mid + 1;
    else return true;
  }
  return false;
}

/**
 * The union of `[from, to]` entries given flat (`[from0, to0, …]`, ids below 65,536, from <= to), in any order and
 * overlapping or not. O(k log k) for k entries, whatever the widths.
 */
export function mergeRanges(flat: readonly number[]): IdRanges {
  const k = flat.length >> 1;
  if (k === 0) return NO_IDS;
  // One number per entry sorts numerically by from, then to, in a typed array.
  const keys = new Float64Array(k);
  for (let i = 0; i < k; i++) keys[i] = flat[2 * i] * 65_536 + flat[2 * i + 1];
  keys.sort();
  const out: number[] = [];
  for (let i = 0; i < k; i++) {
    const from = Math.floor(keys[i] / 65_536);
    const to = keys[i] % 65_536;
    const n = out.length;
    if (n && from <= out[n - 1] + 1) out[n - 1] = Math.max(out[n - 1], to);
    else out.push(from, to);
  }
  return Uint16Array.from(out);
}
