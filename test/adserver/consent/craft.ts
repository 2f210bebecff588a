// Consent strings built bit by bit, the way an attacker would: valid framing around absurd values (vendor ranges
// to 65,535, thousands of entries, publisher restrictions over every id, GPP section-id ranges to 10^9). The IAB
// encoders refuse to write most of these, so the tests craft them here.

/** A bit string under construction; `base64url()` packs it as TC and GPP strings do (6 bits a character). */
export class Bits {
  private s = '';
  /** Appends `v` on `n` bits, most significant first. */
  int(v: number, n: number): this {
    this.s += v.toString(2).padStart(n, '0').slice(-n);
    return this;
  }
  /** Appends one bit. */
  bit(b: boolean | 0 | 1): this {
    this.s += b ? '1' : '0';
    return this;
  }
  /** Appends raw bits (`'0101'`). */
  raw(bits: string): this {
    this.s += bits;
    return this;
  }
  /** Appends `v >= 1` Fibonacci-coded (Zeckendorf bits from 1, 2, 3, 5, …, then a closing 1), as GPP does. */
  fib(v: number): this {
    const f = [1, 2];
    while (f[f.length - 1] + f[f.length - 2] <= v) f.push(f[f.length - 1] + f[f.length - 2]);
    const out: string[] = [];
    for (let i = f.length - 1; i >= 0; i--) {
      if (f[i] <= v) {
        out[i] = '1';
        v -= f[i];
      } else out[i] = '0';
    }
    this.s += out.join('').replace(/0+$/, '') + '1';
    return this;
  }
  /** The number of bits so far. */
  get length(): number {
    return this.s.length;
  }
  /** The bits packed 6 to a Base64url character, the last one padded with zeros. */
  base64url(): string {
    const dict = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const padded = this.s + '0'.repeat((6 - (this.s.length % 6)) % 6);
    let out = '';
    for (let i = 0; i < padded.length; i += 6) out += dict[parseInt(padded.slice(i, i + 6), 2)];
    return out;
  }
}

/** A vendor vector: range-encoded entries (`[id]` or `[from, to]`), or a bitfield of `maxId` bits. */
export type VendorVector =
  { maxId?: number; ranges: ([number] | [number, number])[]; numEntries?: number } | { bitfield: boolean[] };

/** One publisher restriction: purpose, type (0 not allowed, 1 consent only, 2 legitimate interest only), entries. */
export interface Restriction {
  purpose: number;
  type: number;
  ranges: ([number] | [number, number])[];
}

/** Appends a TCF vendor vector (max id on 16 bits, encoding bit, then the bitfield or the range entries). */
export function vendorVector(b: Bits, v: VendorVector): Bits {
  if ('bitfield' in v) {
    b.int(v.bitfield.length, 16).bit(0);
    for (const x of v.bitfield) b.bit(x);
    return b;
  }
  const maxId = v.maxId ?? Math.max(0, ...v.ranges.map((r) => r[r.length - 1]));
  b.int(maxId, 16)
    .bit(1)
    .int(v.numEntries ?? v.ranges.length, 12);
  for (const r of v.ranges) {
    b.bit(r.length === 2).int(r[0], 16);
    if (r.length === 2) b.int(r[1], 16);
  }
  return b;
}

/** The fields of a TC string's core segment; every one has a plain default. */
export interface CoreFields {
  version?: number;
  cmpId?: number;
  purposeConsents?: number[];
  purposeLI?: number[];
  country?: string;
  vendorConsents?: VendorVector;
  vendorLI?: VendorVector;
  restrictions?: Restriction[];
  numRestrictions?: number;
}

const bitsOf = (ids: number[] | undefined, n: number) =>
  Array.from({ length: n }, (_, i) => (ids ?? []).includes(i + 1));

/** A TC string's core segment (TCF v2 field order), as Base64url. */
export function tcCore(f: CoreFields = {}): string {
  const b = new Bits().int(f.version ?? 2, 6);
  b.int(17e9, 36).int(17e9, 36); // created, last updated (deciseconds)
  b.int(f.cmpId ?? 10, 12)
    .int(1, 12)
    .int(1, 6); // CMP id, CMP version, consent screen
  b.int(4, 6).int(13, 6); // consent language EN
  b.int(100, 12).int(4, 6).bit(1).bit(0); // vendor list version, policy version, service specific, non-standard stacks
  b.int(0, 12); // special features
  for (const x of bitsOf(f.purposeConsents ?? [1, 2, 3, 4], 24)) b.bit(x);
  for (const x of bitsOf(f.purposeLI, 24)) b.bit(x);
  b.bit(0); // purpose one treatment
  const country = f.country ?? 'FR';
  b.int(country.charCodeAt(0) - 65, 6).int(country.charCodeAt(1) - 65, 6);
  vendorVector(b, f.vendorConsents ?? { ranges: [[131]] });
  vendorVector(b, f.vendorLI ?? { ranges: [] });
  const rs = f.restrictions ?? [];
  b.int(f.numRestrictions ?? rs.length, 12);
  for (const r of rs) {
    b.int(r.purpose, 6).int(r.type, 2).int(r.ranges.length, 12);
    for (const e of r.ranges) {
      b.bit(e.length === 2).int(e[0], 16);
      if (e.length === 2) b.int(e[1], 16);
    }
  }
  return b.base64url();
}

/** A disclosed-vendors segment (segment type 1) holding `v`. */
export const disclosedSegment = (v: VendorVector) => vendorVector(new Bits().int(1, 3), v).base64url();

/** A GPP header (type 3, version 1) listing section-id entries: a number, or `[from, to]`, delta-coded as GPP does. */
export function gppHeader(entries: (number | [number, number])[], numEntries = entries.length): string {
  const b = new Bits().int(3, 6).int(1, 6).int(numEntries, 12);
  let last = 0;
  for (const e of entries) {
    if (typeof e === 'number') {
      b.bit(0).fib(e - last);
      last = e;
    } else {
      b.bit(1)
        .fib(e[0] - last)
        .fib(e[1] - e[0]);
      last = e[1];
    }
  }
  return b.base64url();
}
