/**
 * The IAB Global Vendor List (docs/wire-format.md "Global Vendor List"): which purposes each vendor declares, on
 * which legal basis, and which vendors the list deleted. Read from the list's v3 JSON, checked with zod, and kept
 * as one bit mask per vendor and basis, so a forwarding decision asks it in a few array reads.
 *
 * A list is a {@link VendorListSource} by itself (a fixed list: it holds its own version only); the loader
 * (gvl-loader.ts) is the other source, fetching and refreshing lists over HTTP.
 */
import { ConfigurationError } from '../../core/config-error.js';
import { z } from 'zod';
import { TC_CAPS } from './tc-string.js';

/** A list that is not a Global Vendor List v3, naming the field (`vendors.755.purposes[2]`). */
export class GvlError extends ConfigurationError {
  override name = 'GvlError';
  constructor(
    /** The first field at fault (empty for the whole document). */
    readonly field: string,
    message: string,
  ) {
    super(message, [{ path: field, message }]);
  }
}

/** What a list's vendor declares, as the list says it (see {@link GlobalVendorList.vendor}). */
export interface GvlVendor {
  id: number;
  /** Purposes declared on consent. */
  purposes: number[];
  /** Purposes declared on legitimate interest. */
  legIntPurposes: number[];
  /** Purposes whose legal basis the publisher's restrictions may switch (the declared one by default). */
  flexiblePurposes: number[];
  specialPurposes: number[];
  features: number[];
  specialFeatures: number[];
  /** When the list says the vendor was deleted (ISO 8601), whatever the date: a deleted vendor receives nothing. */
  deletedDate?: string;
}

/** What any part of the policy asks a vendor list: the list of a version, and the newest one held. */
export interface VendorListSource {
  /** Changes whenever what `list` or `latest` answer may change; decisions worked out before are then redone. */
  readonly generation: number;
  /** The list of `version` when held (a loader may start fetching it in the background), else undefined. */
  list(version: number): GlobalVendorList | undefined;
  /** The newest list held; undefined before the first load. */
  latest(): GlobalVendorList | undefined;
}

/** Purpose ids a list may name: the TC string has 24 purpose bits. */
const MAX_PURPOSE = 24;
/** Ids of special purposes, features and special features (the list defines a handful of each). */
const MAX_FEATURE = 64;
/** Entries of one id array of a vendor (the list has 11 purposes): more is not a real list. */
const MAX_IDS = 64;

const idList = (max: number) => z.array(z.number().int().min(1).max(max)).max(MAX_IDS);
// Only the fields the decision uses are checked and kept (the others are dropped, not copied).
const vendorSchema = z.object({
  id: z.number().int().min(1).max(65_535),
  name: z.string().max(1_000),
  purposes: idList(MAX_PURPOSE),
  legIntPurposes: idList(MAX_PURPOSE),
  flexiblePurposes: idList(MAX_PURPOSE),
  specialPurposes: idList(MAX_FEATURE),
  features: idList(MAX_FEATURE),
  specialFeatures: idList(MAX_FEATURE),
  deletedDate: z.iso.datetime({ offset: true }).optional(),
});
const declarations = z.record(z.string().regex(/^\d{1,5}$/), z.looseObject({ id: z.number().int().min(1) }));
const listSchema = z.looseObject({
  gvlSpecificationVersion: z.literal(3),
  // The TC string has 12 bits for the list version it names.
  vendorListVersion: z.number().int().min(1).max(4_095),
  tcfPolicyVersion: z.number().int().min(4).max(63),
  lastUpdated: z.iso.datetime({ offset: true }),
  purposes: declarations,
  specialPurposes: declarations,
  features: declarations,
  specialFeatures: declarations,
  // An object; each vendor is checked on its own (checkVendor), so the check can be sliced (parseVendorListSliced).
  // (z.custom: the map is not copied).
  vendors: z.custom<Record<string, unknown>>(
    (v) => typeof v === 'object' && v !== null && !Array.isArray(v),
    'must be an object of vendors by id',
  ),
});
type CheckedVendor = z.infer<typeof vendorSchema>;
type CheckedHead = z.infer<typeof listSchema>;

const pathOf = (path: readonly PropertyKey[]) =>
  path.map((k, i) => (typeof k === 'number' ? `[${k}]` : `${i ? '.' : ''}${String(k)}`)).join('');

const maskOf = (ids: readonly number[]) => ids.reduce((m, p) => m | (1 << p), 0);
const idsOf = (mask: number) => Array.from({ length: 31 }, (_, p) => p).filter((p) => mask & (1 << p));

/** A vendor's state in a list: absent, listed, or deleted. */
export const VENDOR_ABSENT = 0;
export const VENDOR_LISTED = 1;
export const VENDOR_DELETED = 2;

/**
 * A Global Vendor List, checked and compiled: per vendor id, bit masks of the purposes it declares on consent, on
 * legitimate interest and as flexible (bit `p` for purpose `p`). Vendors past TC_CAPS.maxVendorId (10,000) are not
 * kept: no TC string we read can name them. Immutable.
 */
export class GlobalVendorList implements VendorListSource {
  /** A fixed list never changes. */
  readonly generation = 0;
  /** Vendors listed and not deleted. */
  readonly vendorCount: number;
  /** Vendors the list marks deleted. */
  readonly deletedCount: number;
  private readonly state: Uint8Array;
  private readonly consent: Uint32Array;
  private readonly li: Uint32Array;
  private readonly flexible: Uint32Array;
  private readonly other = new Map<
    number,
    Omit<GvlVendor, 'id' | 'purposes' | 'legIntPurposes' | 'flexiblePurposes'>
  >();

  /** Use {@link parseVendorList}. */
  private constructor(
    /** `vendorListVersion`: the version a TC string names. */
    readonly version: number,
    /** `gvlSpecificationVersion` (3). */
    readonly specVersion: number,
    /** `tcfPolicyVersion`. */
    readonly tcfPolicyVersion: number,
    /** `lastUpdated`, as the list writes it. */
    readonly lastUpdated: string,
    vendors: readonly CheckedVendor[],
  ) {
    const kept = vendors.filter((v) => v.id <= TC_CAPS.maxVendorId);
    const size = kept.reduce((m, v) => Math.max(m, v.id), 0) + 1;
    this.state = new Uint8Array(size);
    this.consent = new Uint32Array(size);
    this.li = new Uint32Array(size);
    this.flexible = new Uint32Array(size);
    let deleted = 0;
    for (const v of kept) {
      this.state[v.id] = v.deletedDate === undefined ? VENDOR_LISTED : VENDOR_DELETED;
      if (v.deletedDate !== undefined) deleted++;
      this.consent[v.id] = maskOf(v.purposes);
      this.li[v.id] = maskOf(v.legIntPurposes);
      this.flexible[v.id] = maskOf(v.flexiblePurposes);
      const { specialPurposes, features, specialFeatures, deletedDate } = v;
      this.other.set(v.id, { specialPurposes, features, specialFeatures, ...(deletedDate ? { deletedDate } : {}) });
    }
    this.deletedCount = deleted;
    this.vendorCount = kept.length - deleted;
  }

  /** @internal Built by {@link parseVendorList} only. */
  static fromChecked(head: CheckedHead, vendors: readonly CheckedVendor[]): GlobalVendorList {
    const { vendorListVersion, gvlSpecificationVersion, tcfPolicyVersion, lastUpdated } = head;
    return new GlobalVendorList(vendorListVersion, gvlSpecificationVersion, tcfPolicyVersion, lastUpdated, vendors);
  }

  /** 0: not in the list; 1: listed; 2: deleted from it. */
  vendorState(id: number): 0 | 1 | 2 {
    return ((id < this.state.length && this.state[id]) || VENDOR_ABSENT) as 0 | 1 | 2;
  }

  /** Purposes the vendor declares on consent, bit `p` for purpose `p` (0 when not listed). */
  consentPurposes(id: number): number {
    return id < this.consent.length ? this.consent[id] : 0;
  }

  /** Purposes the vendor declares on legitimate interest, bit `p` for purpose `p`. */
  liPurposes(id: number): number {
    return id < this.li.length ? this.li[id] : 0;
  }

  /** Purposes the vendor declares flexible, bit `p` for purpose `p`. */
  flexiblePurposes(id: number): number {
    return id < this.flexible.length ? this.flexible[id] : 0;
  }

  /** What the list says of vendor `id`, or undefined when it does not list it. */
  vendor(id: number): GvlVendor | undefined {
    const other = this.other.get(id);
    if (!other) return undefined;
    return {
      id,
      purposes: idsOf(this.consent[id]),
      legIntPurposes: idsOf(this.li[id]),
      flexiblePurposes: idsOf(this.flexible[id]),
      ...other,
    };
  }

  /** This list when `version` is its own. */
  list(version: number): GlobalVendorList | undefined {
    return version === this.version ? this : undefined;
  }

  /** This list. */
  latest(): this {
    return this;
  }
}

const refused = (field: string, why: string) =>
  new GvlError(field, `not a Global Vendor List v3: ${field || 'the document'}: ${why}`);

function checkHead(input: unknown): { head: CheckedHead; entries: [string, unknown][] } {
  let value = input;
  if (typeof input === 'string') {
    try {
      value = JSON.parse(input);
    } catch (e) {
      throw new GvlError('', `the Global Vendor List is not JSON (${e instanceof Error ? e.message : String(e)})`);
    }
  }
  const parsed = listSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw refused(pathOf(issue.path), issue.message);
  }
  return { head: parsed.data, entries: Object.entries(parsed.data.vendors) };
}

function checkVendor(key: string, value: unknown): CheckedVendor {
  const at = `vendors.${key}`;
  if (!/^\d{1,5}$/.test(key)) throw refused(at, 'a vendor key is its id');
  const parsed = vendorSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const rest = pathOf(issue.path);
    throw refused(rest ? `${at}${rest.startsWith('[') ? '' : '.'}${rest}` : at, issue.message);
  }
  if (String(parsed.data.id) !== key) throw refused(`${at}.id`, `${parsed.data.id} is not the vendor's key`);
  return parsed.data;
}

/**
 * Checks and compiles a Global Vendor List v3 (its JSON text, or the parsed value); throws {@link GvlError} naming
 * the first field at fault. Fields the decision does not use (names, URLs, retention, stacks) are not kept.
 * Synchronous: for a list read at start-up or given once (the loader's downloads use the sliced form).
 * @example parseVendorList(readFileSync('vendor-list.json', 'utf8')).version
 */
export function parseVendorList(input: unknown): GlobalVendorList {
  const { head, entries } = checkHead(input);
  return GlobalVendorList.fromChecked(
    head,
    entries.map(([key, v]) => checkVendor(key, v)),
  );
}

/** Vendors checked between two turns of the event loop (1 to 2 ms of CPU for 50 real vendors). */
const SLICE = 50;

/**
 * {@link parseVendorList} in slices of 50 vendors, each in its own turn of the event loop, so a list checked while
 * the server answers ad calls holds them for one slice at most (and its JSON.parse).
 */
export async function parseVendorListSliced(text: string): Promise<GlobalVendorList> {
  const { head, entries } = checkHead(text);
  const vendors: CheckedVendor[] = [];
  for (let i = 0; i < entries.length; i++) {
    if (i && i % SLICE === 0) await new Promise((resolve) => setImmediate(resolve));
    vendors.push(checkVendor(entries[i][0], entries[i][1]));
  }
  return GlobalVendorList.fromChecked(head, vendors);
}
