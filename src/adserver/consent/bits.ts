/**
 * A bit reader over Base64url text, the packing of TC strings and GPP strings (6 bits a character, most
 * significant first). Reads straight from the character codes: no intermediate '0'/'1' string, so a read costs
 * the bits it reads and nothing else.
 */

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const VALUES = new Int8Array(128).fill(-1);
for (let i = 0; i < 64; i++) VALUES[ALPHABET.charCodeAt(i)] = i;

/** Thrown when a read goes past the last bit; the readers turn it into a problem naming the field. */
export class OutOfBits extends Error {}

/** Reads the bits of one Base64url segment in order (made by {@link bitReader}). */
export class BitReader {
  private pos = 0;
  /** `bits`: one bit per byte. */
  constructor(private readonly bits: Uint8Array) {}

  /** Bits not read yet. */
  get left(): number {
    return this.bits.length - this.pos;
  }

  /** The next `n` bits (n <= 48) as an unsigned integer. */
  int(n: number): number {
    if (this.pos + n > this.bits.length) throw new OutOfBits();
    let v = 0;
    for (let i = 0; i < n; i++) v = v * 2 + this.bits[this.pos++];
    return v;
  }

  /** The next bit. */
  bit(): boolean {
    if (this.pos >= this.bits.length) throw new OutOfBits();
    return this.bits[this.pos++] === 1;
  }

  /** Skips `n` bits. */
  skip(n: number): void {
    if (this.pos + n > this.bits.length) throw new OutOfBits();
    this.pos += n;
  }

  /** Calls `run(from, to)` for each run of 1 bits among the next `n` bits, numbered from 1; skips them. */
  runs(n: number, run: (from: number, to: number) => void): void {
    if (this.pos + n > this.bits.length) throw new OutOfBits();
    const { bits } = this;
    const start = this.pos;
    let from = 0;
    for (let i = 0; i < n; i++) {
      if (bits[start + i] === 1) {
        if (!from) from = i + 1;
      } else if (from) {
        run(from, i);
        from = 0;
      }
    }
    if (from) run(from, n);
    this.pos += n;
  }
}

/** A reader over `text`, or null when `text` holds a character outside the Base64url alphabet. */
export function bitReader(text: string): BitReader | null {
  // One pass to single bits (6 a character, 48 KB for the longest string read): every read is then an array lookup.
  const bits = new Uint8Array(text.length * 6);
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const v = c < 128 ? VALUES[c] : -1;
    if (v < 0) return null;
    for (let j = 0; j < 6; j++) bits[i * 6 + j] = (v >> (5 - j)) & 1;
  }
  return new BitReader(bits);
}
