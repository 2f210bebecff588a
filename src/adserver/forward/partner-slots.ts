/**
 * Speed for the forwarding policy (policy.ts): what the fast path of `eidsFor` needs of a partner, per partner
 * object as the caller keeps it. Its bit (eid-codes.ts); what consent requires of the eids it receives (its bit,
 * plus EXEMPT under a refusal) for the decoding last seen, so a user's calls (decoded once, call-memo.ts) cost no
 * refusal lookup per partner; and the positions of the eids it receives for the codes last seen (undefined: every
 * eid), so that its list is made without testing each eid. Partners come in the same order call after call, so
 * the slot after the last one used is tried first. Bounded: 64 slots, then reused.
 */
import type { DecodedConsent } from '../consent/index.js';
import type { Prepared } from './call-memo.js';
import { EXEMPT, OTHER } from './eid-codes.js';
import type { DemandPartner } from './partners.js';

/** What is kept of one partner object. */
export interface Slot {
  partner: DemandPartner;
  id: string;
  vendor: number | undefined;
  bit: number;
  /** The decoding `need` was worked out for (null: none yet). */
  decoded: DecodedConsent | undefined | null;
  /** The bits an eid's code needs for this partner to receive it. */
  need: number;
  /** The codes `keep` was worked out for. */
  codes: readonly number[] | undefined;
  /** The positions of the eids the partner receives; undefined: every eid. */
  keep: number[] | undefined;
}

const MAX_SLOTS = 64;

/** The slots of the partner objects seen. */
export class PartnerSlots {
  private readonly slots: Slot[] = [];
  private next = 0;
  private evict = 0;

  constructor(
    private readonly bitOf: ReadonlyMap<string, number>,
    /** Whether consent refuses the partner under the prepared call's signals. */
    private readonly refused: (p: Prepared, partner: DemandPartner) => boolean,
  ) {}

  /** The partner's slot, up to date for `p`. Small, so that it is inlined: the slot tried first, when fresh. */
  slotFor(p: Prepared, partner: DemandPartner): Slot {
    const slots = this.slots;
    const s = this.next < slots.length ? slots[this.next] : undefined;
    const fresh = s?.partner === partner && s.id === partner.id && s.vendor === partner.gvlVendorId;
    if (!fresh || s.decoded !== p.decoded || s.codes !== p.codes) return this.refresh(p, partner);
    this.next = this.next + 1 < slots.length ? this.next + 1 : 0;
    return s;
  }

  private refresh(p: Prepared, partner: DemandPartner): Slot {
    const slots = this.slots;
    let k = this.next < slots.length && slots[this.next].partner === partner ? this.next : -1;
    for (let i = 0; k < 0 && i < slots.length; i++) if (slots[i].partner === partner) k = i;
    let s = slots[k];
    // A new partner, or one whose id or vendor id (what its bit and refusal depend on) changed since.
    if (k < 0 || s.id !== partner.id || s.vendor !== partner.gvlVendorId) {
      if (k < 0) k = slots.length < MAX_SLOTS ? slots.length : this.evict++ & (MAX_SLOTS - 1);
      const bit = this.bitOf.get(partner.id) ?? this.bitOf.get(partner.id.toLowerCase()) ?? OTHER;
      const vendor = partner.gvlVendorId;
      s = { partner, id: partner.id, vendor, bit, decoded: null, need: 0, codes: undefined, keep: undefined };
      slots[k] = s;
    }
    this.next = k + 1 < slots.length ? k + 1 : 0;
    if (s.decoded !== p.decoded) {
      s.need = this.refused(p, partner) ? s.bit | EXEMPT : s.bit;
      s.decoded = p.decoded;
      s.codes = undefined;
    }
    if (s.codes !== p.codes) {
      const need = s.need;
      s.codes = p.codes;
      s.keep = (p.common & need) === need ? undefined : [];
      if (s.keep) for (let i = 0; i < p.codes.length; i++) if ((p.codes[i] & need) === need) s.keep.push(i);
    }
    return s;
  }
}
