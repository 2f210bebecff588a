/**
 * A bounded reader of TCF v2 TC strings (docs/ad-server.md "Forwarding policy", consent caps): the purposes,
 * vendors and publisher restrictions the forwarding decision needs, in one pass over the bits, linear in the
 * string's length.
 *
 * Why not `TCString.decode` of `@iabtcf/core`: it expands each vendor range id by id (a 33-bit entry names up to
 * 65,535 vendors) and inserts publisher restrictions into an unbalanced search tree, quadratic in a range's width,
 * so a 59-character string holds the event loop for seconds. The library stays the reference: a property test
 * encodes thousands of strings with it and checks that both give the same decisions
 * (test/adserver/consent/consent.property.test.ts). Where the library refuses a string, this reader refuses it too;
 * it also refuses absurd values the format allows (the caps below), which no CMP writes.
 */
import { bitReader, OutOfBits } from './bits.js';
import type { BitReader } from './bits.js';
import { mergeRanges, NO_IDS } from './id-ranges.js';
import type { IdRanges } from './id-ranges.js';

/** Hard caps on what a TC string may claim; a string over one is unreadable consent (docs/ad-server.md). */
export const TC_CAPS = {
  /** Characters of the whole string (an ad call's URL is under 8,000). */
  maxLength: 8_000,
  /** Highest vendor id anywhere (Global Vendor List ids are assigned from 1 and are near 1,400). */
  maxVendorId: 10_000,
  /** Range entries of all vendor vectors and restrictions together (a 4,096-character string holds under 1,500). */
  maxRangeEntries: 2_048,
  /** Publisher restrictions (purpose and type pairs; TCF has 11 purposes and 3 types). */
  maxRestrictions: 64,
} as const;

/**
 * A publisher restriction: for `vendors`, `purpose` is not allowed (0), allowed on consent only (1) or on
 * legitimate interest only (2).
 */
export interface TcRestriction {
  purpose: number;
  type: 0 | 1 | 2;
  vendors: IdRanges;
}

/** What the forwarding decision needs from a TC string. */
export interface TcConsent {
  /** Purposes 1 to 24 with consent, bit `p` for purpose `p`. */
  purposeConsents: number;
  /** Purposes 1 to 24 with legitimate interest established, bit `p` for purpose `p`. */
  purposeLI: number;
  vendorConsents: IdRanges;
  vendorLI: IdRanges;
  /** In the string's order, one per purpose and type (repeated pairs merged). */
  restrictions: TcRestriction[];
  /** The Global Vendor List version the consent platform showed (`vendorListVersion`). */
  vendorListVersion: number;
  /** The TCF policy version (`tcfPolicyVersion`): 4 and up is TCF v2.2, whose vendor lists are v3. */
  policyVersion: number;
  /** The later of `created` and `lastUpdated`, in ms since 1970. */
  updatedMs: number;
  /** The vendors the platform disclosed to the user (the disclosed-vendors segment), when the string has one. */
  disclosedVendors?: IdRanges;
}

/** A TC string that is not used, and why (naming the field). */
export interface TcProblem {
  problem: string;
}

/** Thrown inside the reader; {@link readTcString} returns it as a {@link TcProblem}. */
class Unreadable extends Error {}

const fmt = (n: number) => n.toLocaleString('en-US');
const overCap = (field: string, what: string, cap: number) =>
  new Unreadable(`${field}: ${what}, over the cap of ${fmt(cap)}`);
const SEGMENTS = ['core', 'vendorsDisclosed', 'vendorsAllowed', 'publisherTC'] as const;

/** The running count of range entries, checked against its cap as entries are declared. */
interface Budget {
  entries: number;
}

function declareEntries(budget: Budget, n: number, r: BitReader, field: string) {
  budget.entries += n;
  if (budget.entries > TC_CAPS.maxRangeEntries) {
    throw overCap(field, `${fmt(budget.entries)} range entries`, TC_CAPS.maxRangeEntries);
  }
  // Each entry takes 17 bits at least: a count the rest of the string cannot hold is refused before any loop.
  if (n * 17 > r.left) throw new Unreadable(`${field}: ${n} range entries declared, the string ends first`);
}

function checkId(id: number, field: string) {
  if (id > TC_CAPS.maxVendorId) throw overCap(field, `vendor id ${fmt(id)}`, TC_CAPS.maxVendorId);
}

/** A vendor vector: max id (16 bits), encoding (1 bit), then a bitfield of max id bits or range entries. */
function readVendorVector(r: BitReader, field: string, budget: Budget): IdRanges {
  const maxId = r.int(16);
  checkId(maxId, `${field}.maxId`);
  if (!r.bit()) {
    if (r.left < maxId) throw new Unreadable(`${field}: ${fmt(maxId)} bits declared, the string ends first`);
    // At most one run every two ids: the pairs fit in maxId + 1 numbers.
    const out = new Uint16Array(maxId + 1);
    let k = 0;
    r.runs(maxId, (from, to) => {
      out[k++] = from;
      out[k++] = to;
    });
    return k ? out.slice(0, k) : NO_IDS;
  }
  const n = r.int(12);
  declareEntries(budget, n, r, field);
  const flat: number[] = [];
  for (let i = 0; i < n; i++) {
    const isRange = r.bit();
    const from = r.int(16);
    const to = isRange ? r.int(16) : from;
    checkId(Math.max(from, to), field);
    // The IAB library sets nothing for a range that ends before it starts, and refuses vendor id 0.
    if (to < from) continue;
    if (from === 0) throw new Unreadable(`${field}: vendor id 0`);
    flat.push(from, to);
  }
  return mergeRanges(flat);
}

function readRestrictions(r: BitReader, budget: Budget): TcRestriction[] {
  const field = 'publisherRestrictions';
  const n = r.int(12);
  if (n > TC_CAPS.maxRestrictions) throw overCap(field, `${n} restrictions`, TC_CAPS.maxRestrictions);
  const byKey = new Map<number, { purpose: number; type: 0 | 1 | 2; flat: number[] }>();
  for (let i = 0; i < n; i++) {
    const purpose = r.int(6);
    const type = r.int(2);
    const entries = r.int(12);
    declareEntries(budget, entries, r, `${field}[${i}]`);
    if (entries && (purpose === 0 || type === 3)) {
      throw new Unreadable(`${field}[${i}]: purpose ${purpose} with type ${type} is not a restriction`);
    }
    const key = purpose * 4 + type;
    let group = byKey.get(key);
    if (!group) byKey.set(key, (group = { purpose, type: type as 0 | 1 | 2, flat: [] }));
    for (let j = 0; j < entries; j++) {
      const isRange = r.bit();
      const from = r.int(16);
      const to = isRange ? r.int(16) : from;
      checkId(Math.max(from, to), `${field}[${i}]`);
      if (to < from) throw new Unreadable(`${field}[${i}]: a range from ${from} down to ${to}`);
      group.flat.push(from, to);
    }
  }
  const groups = [...byKey.values()].filter((g) => g.flat.length);
  return groups.map((g) => ({ purpose: g.purpose, type: g.type, vendors: mergeRanges(g.flat) }));
}

/** Purposes 1 to 24 as a bit mask, bit `p` for purpose `p`. */
function readPurposes(r: BitReader): number {
  let mask = 0;
  for (let p = 1; p <= 24; p++) if (r.bit()) mask |= 1 << p;
  return mask;
}

function readCore(r: BitReader, budget: Budget): TcConsent {
  // The version is 6 bits; its first 3, read as the segment type, are 0.
  const version = r.int(3);
  if (version !== 2) throw new Unreadable(`version ${version}: only TCF v2 strings are read`);
  // Created and last updated, in deciseconds.
  const updatedMs = Math.max(r.int(36), r.int(36)) * 100;
  const cmpId = r.int(12);
  // The IAB library refuses CMP ids 0 and 1.
  if (cmpId < 2) throw new Unreadable(`cmpId ${cmpId} is not a CMP id`);
  r.skip(12 + 6 + 12); // CMP version, consent screen, consent language
  const vendorListVersion = r.int(12);
  const policyVersion = r.int(6);
  r.skip(1 + 1 + 12); // service-specific, non-standard stacks, special feature opt-ins
  const purposeConsents = readPurposes(r);
  const purposeLI = readPurposes(r);
  r.skip(1); // purpose one treatment
  const c1 = r.int(6);
  const c2 = r.int(6);
  // Two letters from 'A' (0): the IAB library accepts 'A' to 'z', that is values up to 57.
  if (c1 > 57 || c2 > 57) throw new Unreadable('publisherCountryCode is not two letters');
  const vendorConsents = readVendorVector(r, 'vendorConsents', budget);
  const vendorLI = readVendorVector(r, 'vendorLegitimateInterests', budget);
  const restrictions = readRestrictions(r, budget);
  return {
    purposeConsents,
    purposeLI,
    vendorConsents,
    vendorLI,
    restrictions,
    vendorListVersion,
    policyVersion,
    updatedMs,
  };
}

/**
 * Reads a TC string, or says why it is not used. Never throws; linear in the string's length whatever it claims.
 * @example readTcString('CQ…').vendorConsents
 */
export function readTcString(tcString: string): TcConsent | TcProblem {
  if (tcString.length > TC_CAPS.maxLength) {
    const length = fmt(tcString.length);
    return { problem: `the TC string has ${length} characters, over the cap of ${fmt(TC_CAPS.maxLength)}` };
  }
  const seen = new Set<number>();
  const budget: Budget = { entries: 0 };
  let core: TcConsent | undefined;
  let disclosed: IdRanges | undefined;
  const segments = tcString.split('.');
  for (let i = 0; i < segments.length; i++) {
    const where = `segment ${i + 1}`;
    const r = bitReader(segments[i]);
    if (!r || !segments[i]) return { problem: `${where} is not Base64url text` };
    try {
      // The core segment has no type field: its first bits are the version (2), so its 3 first bits are 0.
      const type = r.int(3);
      if (type > 3) throw new Unreadable(`segment type ${type} is not a TCF segment`);
      if (seen.has(type)) throw new Unreadable(`a second ${SEGMENTS[type]} segment`);
      seen.add(type);
      if (type === 0) core = readCore(r, budget);
      else if (type === 3) {
        r.skip(24 + 24); // publisher consents, publisher legitimate interests
        r.skip(2 * r.int(6)); // custom purposes: their consents and legitimate interests
      } else {
        const vendors = readVendorVector(r, SEGMENTS[type], budget);
        if (type === 1) disclosed = vendors;
      }
    } catch (e) {
      if (e instanceof Unreadable) return { problem: `${where}, ${e.message}` };
      if (e instanceof OutOfBits) return { problem: `${where} ends before its last field` };
      throw e;
    }
  }
  if (!core) return { problem: 'the TC string has no core segment' };
  if (disclosed) core.disclosedVendors = disclosed;
  return core;
}
