// Network ids that V8 files in one bucket of a Map keyed by them: V8 hashes a small integer (a Smi) with a fixed
// function and no seed (ComputeUnseededHash), the same in every process, so such ids are found offline. A Map of
// up to 2^bits entries has at most 2^(bits-1) buckets, chosen by the hash's low bits: ids whose hashes end in
// `bits` zero bits share one bucket at every size up to that, and each lookup walks them all.

/** V8's hash of a Smi key (src/utils/utils.h, ComputeUnseededHash): Thomas Wang's 32-bit integer hash. */
export function smiHash(key) {
  let h = key >>> 0;
  h = (~h + (h << 15)) >>> 0;
  h = (h ^ (h >>> 12)) >>> 0;
  h = (h + (h << 2)) >>> 0;
  h = (h ^ (h >>> 4)) >>> 0;
  h = Math.imul(h, 2057) >>> 0;
  h = (h ^ (h >>> 16)) >>> 0;
  return h & 0x3fffffff;
}

/** The first `n` network ids (1 to 2^31 - 1) whose hashes end in `bits` zero bits (20,000 of 15 bits: ~2 s). */
export function collidingIds(n, bits = 15) {
  const mask = 2 ** bits - 1;
  const out = [];
  for (let id = 1; out.length < n && id <= 0x7fffffff; id++) if ((smiHash(id) & mask) === 0) out.push(id);
  return out;
}
