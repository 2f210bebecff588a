/**
 * SHA-256 as lowercase hex. Uses `crypto.subtle` where the page has it; it exists only in secure contexts
 * (https and localhost: https://developer.mozilla.org/docs/Web/API/SubtleCrypto), so plain-http pages get the
 * small pure-JS implementation below (FIPS 180-4). Both are checked against the same known vectors.
 */

const K: number[] = [];
const H0: number[] = [];
// The round constants and initial hash are the fractional parts of the cube / square roots of the first primes.
for (let n = 2, found = 0; found < 64; n++) {
  let prime = true;
  for (let d = 2; d * d <= n; d++) if (n % d === 0) prime = false;
  if (!prime) continue;
  if (found < 8) H0.push((Math.pow(n, 1 / 2) * 2 ** 32) | 0);
  K.push((Math.pow(n, 1 / 3) * 2 ** 32) | 0);
  found++;
}

const hex = (words: ArrayLike<number>) => Array.from(words, (w) => (w >>> 0).toString(16).padStart(8, '0')).join('');

/** Pure-JS SHA-256 of the UTF-8 bytes of `text`, as hex. */
export function sha256HexSync(text: string): string {
  const bytes = new TextEncoder().encode(text);
  const bitLen = bytes.length * 8;
  const len = (((bytes.length + 8) >> 6) + 1) << 6;
  const m = new Uint8Array(len);
  m.set(bytes);
  m[bytes.length] = 0x80;
  const view = new DataView(m.buffer);
  view.setUint32(len - 8, Math.floor(bitLen / 2 ** 32));
  view.setUint32(len - 4, bitLen >>> 0);
  const h = H0.slice();
  const w = new Array<number>(64);
  for (let off = 0; off < len; off += 64) {
    for (let i = 0; i < 64; i++) {
      if (i < 16) w[i] = view.getUint32(off + i * 4);
      else {
        const a = w[i - 15],
          b = w[i - 2];
        const s0 = ((a >>> 7) | (a << 25)) ^ ((a >>> 18) | (a << 14)) ^ (a >>> 3);
        const s1 = ((b >>> 17) | (b << 15)) ^ ((b >>> 19) | (b << 13)) ^ (b >>> 10);
        w[i] = (w[i - 16] + s0 + w[i - 7] + s1) | 0;
      }
    }
    let [a, b, c, d, e, f, g, hh] = h;
    for (let i = 0; i < 64; i++) {
      const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
      const t1 = (hh + S1 + ((e & f) ^ (~e & g)) + K[i] + w[i]) | 0;
      const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
      const t2 = (S0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
      hh = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) | 0;
    }
    const next = [a, b, c, d, e, f, g, hh];
    for (let i = 0; i < 8; i++) h[i] = (h[i] + next[i]) | 0;
  }
  return hex(h);
}

/** SHA-256 of `text` as hex: `crypto.subtle` when available, else the pure-JS fallback. */
export async function sha256Hex(text: string): Promise<string> {
  const subtle = globalThis.crypto?.subtle;
  if (subtle) {
    try {
      const digest = await subtle.digest('SHA-256', new TextEncoder().encode(text));
      const v = new DataView(digest);
      return hex(Array.from({ length: 8 }, (_, i) => v.getUint32(i * 4)));
    } catch {
      /* fall through to the pure-JS implementation */
    }
  }
  return sha256HexSync(text);
}
