// Bit-level writers of consent strings for the fuzz suite: TCF v2 TC strings and GPP strings built field by
// field, so any value the formats can express (vendor 65,535, 4,095 ranges, a GPP section range to 10^9) can be
// produced in a few characters, as an attacker would (docs/ad-server.md "Fuzzing"). Layouts: the TCF v2 core
// segment and the GPP v1 header, most significant bit first, Base64url without padding.

const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** A growing string of bits ('0' / '1'), written most significant bit first as both formats are. */
export class Bits {
  private parts: string[] = [];
  /** `value` on `width` bits (values wider than `width` are cut to their low bits). */
  int(value: number, width: number): this {
    const v = Math.max(0, Math.floor(value)) % 2 ** width;
    this.parts.push(v.toString(2).padStart(width, '0'));
    return this;
  }
  bool(b: boolean): this {
    this.parts.push(b ? '1' : '0');
    return this;
  }
  /** A bit field: `bits[i]` is bit i. */
  field(bits: readonly boolean[]): this {
    this.parts.push(bits.map((b) => (b ? '1' : '0')).join(''));
    return this;
  }
  /** Fibonacci coding (GPP): Zeckendorf bits from 1 upwards, then a closing 1. `n` ≥ 1. */
  fib(n: number): this {
    const fibs = [1, 2];
    while (fibs[fibs.length - 1] + fibs[fibs.length - 2] <= n) fibs.push(fibs[fibs.length - 1] + fibs[fibs.length - 2]);
    const bits = new Array<string>(fibs.length).fill('0');
    let rest = Math.max(1, Math.floor(n));
    for (let i = fibs.length - 1; i >= 0; i--) {
      if (fibs[i] <= rest) {
        bits[i] = '1';
        rest -= fibs[i];
      }
    }
    this.parts.push(bits.join('').replace(/0+$/, '') + '1');
    return this;
  }
  raw(bits: string): this {
    this.parts.push(bits);
    return this;
  }
  get text(): string {
    return this.parts.join('');
  }
  /** Base64url without padding, the last sextet filled with zero bits. */
  base64url(): string {
    const bits = this.text;
    let out = '';
    for (let i = 0; i < bits.length; i += 6) out += B64URL[parseInt(bits.slice(i, i + 6).padEnd(6, '0'), 2)];
    return out;
  }
}

/** One entry of a TCF range section: a single id, or `start`..`end` (either may be out of order or 0). */
export interface IdRange {
  start: number;
  end?: number;
}

/** A TCF vendor section: a bit field up to `maxId`, or `maxId` and a list of ranges. */
export type VendorSection = { maxId: number; bits: boolean[] } | { maxId: number; ranges: IdRange[] };

/** A publisher restriction: purpose, type (0 not allowed, 1 consent only, 2 LI only, 3 undefined) and vendor ranges. */
export interface Restriction {
  purpose: number;
  type: number;
  ranges: IdRange[];
}

/** The fields of a TC string's core segment (TCF v2). */
export interface TcFields {
  version: number;
  created: number;
  cmpId: number;
  cmpVersion: number;
  vendorListVersion: number;
  policyVersion: number;
  serviceSpecific: boolean;
  specialFeatures: boolean[];
  purposeConsents: boolean[];
  purposeLI: boolean[];
  vendorConsents: VendorSection;
  vendorLI: VendorSection;
  restrictions: Restriction[];
  /** Extra segments (disclosed vendors, …) as raw Base64url text, joined with `.`. */
  segments: string[];
}

function ranges(b: Bits, list: readonly IdRange[]): void {
  b.int(list.length, 12);
  for (const r of list) {
    b.bool(r.end !== undefined).int(r.start, 16);
    if (r.end !== undefined) b.int(r.end, 16);
  }
}

function vendorSection(b: Bits, v: VendorSection): void {
  b.int(v.maxId, 16);
  if ('bits' in v) b.bool(false).field(v.bits);
  else {
    b.bool(true);
    ranges(b, v.ranges);
  }
}

/** The core segment's bits, without encoding (also the GPP `tcfeuv2` section's core segment). */
export function tcCoreBits(f: TcFields): Bits {
  const b = new Bits()
    .int(f.version, 6)
    .int(f.created, 36)
    .int(f.created, 36)
    .int(f.cmpId, 12)
    .int(f.cmpVersion, 12)
    .int(1, 6)
    .int(4, 6) // language "EN"
    .int(13, 6)
    .int(f.vendorListVersion, 12)
    .int(f.policyVersion, 6)
    .bool(f.serviceSpecific)
    .bool(false)
    .field(f.specialFeatures.slice(0, 12).concat(Array(12).fill(false)).slice(0, 12))
    .field(f.purposeConsents.slice(0, 24).concat(Array(24).fill(false)).slice(0, 24))
    .field(f.purposeLI.slice(0, 24).concat(Array(24).fill(false)).slice(0, 24))
    .bool(false)
    .int(0, 6) // publisher country "AA"
    .int(0, 6);
  vendorSection(b, f.vendorConsents);
  vendorSection(b, f.vendorLI);
  b.int(f.restrictions.length, 12);
  for (const r of f.restrictions) {
    b.int(r.purpose, 6).int(r.type, 2);
    ranges(b, r.ranges);
  }
  return b;
}

/** A TC string from its fields. */
export function tcString(f: TcFields): string {
  return [tcCoreBits(f).base64url(), ...f.segments].join('.');
}

/** A TC string of a service-specific CMP with consent for purposes 1 to 10, and `fields` laid over it. */
export function tcWith(fields: Partial<TcFields>): string {
  return tcString({
    version: 2,
    created: 17_000_000_000,
    cmpId: 10,
    cmpVersion: 1,
    vendorListVersion: 100,
    policyVersion: 4,
    serviceSpecific: true,
    specialFeatures: [],
    purposeConsents: Array<boolean>(10).fill(true),
    purposeLI: [],
    vendorConsents: { maxId: 0, bits: [] },
    vendorLI: { maxId: 0, bits: [] },
    restrictions: [],
    segments: [],
    ...fields,
  });
}

/** One entry of a GPP section-id range: a single id or `start`..`end`, Fibonacci-coded as offsets. */
export interface GppIdEntry {
  /** Offset from the previous id (≥ 1 on the wire; 0 here is written as 1). */
  offset: number;
  /** For a range: its length past the start (offset of the end from the start). */
  span?: number;
}

/** A GPP header (type 3, version 1) with its section-id entries. */
export function gppHeader(entries: readonly GppIdEntry[], count = entries.length): string {
  const b = new Bits().int(3, 6).int(1, 6).int(count, 12);
  for (const e of entries) {
    b.bool(e.span !== undefined).fib(Math.max(1, e.offset));
    if (e.span !== undefined) b.fib(Math.max(1, e.span));
  }
  return b.base64url();
}

/** The section ids a GPP header's entries name (for building a matching string), at most `max` of them. */
export function gppSectionIds(entries: readonly GppIdEntry[], max = 64): number[] {
  const ids: number[] = [];
  let at = 0;
  for (const e of entries) {
    at += Math.max(1, e.offset);
    ids.push(at);
    if (e.span !== undefined) {
      const end = at + Math.max(1, e.span);
      for (let id = at + 1; id <= end && ids.length < max; id++) ids.push(id);
      at = end;
    }
    if (ids.length >= max) break;
  }
  return ids.slice(0, max);
}
