/**
 * A bit reader over Base64url text, the packing of TC strings and GPP strings (6 bits a character, most
 * significant first). Reads straight from the character codes: no intermediate '0'/'1' string, so a read costs
 * the bits it reads and nothing else.
 */

const VALUES = new Int8Array(128).fill(-1);
for (let i = 0; i < 64; i++) VALUES['ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'.charCodeAt(i)] = i;

/** Thrown when a read goes past the last bit; the readers turn it into a problem naming the field. */
export class OutOfBits extends Error {}

/** Reads the bits of one Base64url segment in order; `null` from {@link bitReader} when a character is not Base64url. */
export interface BitReader {
  /** Bits not read yet. */
  readonly left: number;
  /** The next `n` bits (n <= 48) as an unsigned integer. */
  int(n: number): number;
  /** The next bit. */
  bit(): boolean;
  /** Skips `n` bits. */
  skip(n: number): void;
}

/** A reader over `text`, or null when `text` holds a character outside the Base64url alphabet. */
export function bitReader(text: string): BitReader | null {
  const values = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const v = c < 128 ? VALUES[c] : -1;
    if (v < 0) return null;
    values[i] = v;
  }
  const total = text.length * 6;
  let pos = 0;
  const bit = () => {
    if (pos >= total) throw new OutOfBits();
    const v = (values[(pos / 6) | 0] >> (5 - (pos % 6))) & 1;
    pos++;
    return v;
  };
  return {
    get left() {
      return total - pos;
    },
    int(n) {
      if (pos + n > total) throw new OutOfBits();
      let v = 0;
      for (let i = 0; i < n; i++) v = v * 2 + bit();
      return v;
    },
    bit: () => bit() === 1,
    skip(n) {
      if (pos + n > total) throw new OutOfBits();
      pos += n;
    },
  };
}
