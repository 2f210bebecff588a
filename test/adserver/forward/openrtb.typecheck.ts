// Compiled (never run) by openrtb.test.ts with the TypeScript compiler: the bid requests we build must fit the
// published OpenRTB types of npm `iab-openrtb` (v2.6 and v2.5), not only our own.
import type {
  BidRequest as BidRequest26,
  EID as EID26,
  Imp as Imp26,
  UID as UID26,
  User as User26,
  Video as Video26,
} from 'iab-openrtb/v26';
import type { BidRequest as BidRequest25Spec, Imp as Imp25, Video as Video25 } from 'iab-openrtb/v25';
import { buildBidRequest, createForwardingPolicy } from '../../../src/adserver/index.js';
import type {
  AdCall,
  OrtbBidRequest25,
  OrtbBidRequest26,
  OrtbBidRequestBoth,
  OrtbVideo,
} from '../../../src/adserver/index.js';

declare const call: AdCall;
const policy = createForwardingPolicy({ permissions: [{ source: 'id5-sync.com', partners: ['dsp'] }] });

// iab-openrtb narrows UID.atype to AdCOM's 1 | 2 | 3 and EID.mm to 0..5, but AdCOM 1.0 also allows
// vendor-specific values >= 500 (PAIR ids use atype 571187). Only those two fields are widened to `number`.
type Uid = Omit<UID26, 'atype'> & { atype?: number };
type Eid = Omit<EID26, 'uids' | 'mm'> & { uids: Uid[]; mm?: number };
type User = Omit<User26, 'eids'> & { eids?: Eid[] };
// The Video enumerations (protocols, plcmt, startdelay, api, …) are widened to numbers too: a caller's video
// parameters are relayed as sent (startdelay > 0 is a number of seconds, which the published type leaves out),
// checked for their JSON kind, not against the AdCOM lists.
type Widen<T> = {
  [K in keyof T]: NonNullable<T[K]> extends number
    ? number
    : NonNullable<T[K]> extends readonly number[]
      ? number[]
      : T[K];
};
type Spec26 = Omit<BidRequest26, 'user' | 'imp'> & {
  user?: User;
  imp: (Omit<Imp26, 'video'> & { video?: Widen<Video26> })[];
};
type BidRequest25 = Omit<BidRequest25Spec, 'imp'> & { imp: (Omit<Imp25, 'video'> & { video?: Widen<Video25> })[] };

const r26: Spec26 = buildBidRequest(call, { id: 'dsp' });
const r26explicit: Spec26 = buildBidRequest(call, { id: 'dsp', openrtb: '2.6' });
const r25: BidRequest25 = buildBidRequest(call, { id: 'legacy', openrtb: '2.5' });
// With a forwarding policy, and for a partner reading both places (a 2.6 request whose ext also holds the 2.5 fields).
const r26policy: Spec26 = buildBidRequest(call, { id: 'dsp', gvlVendorId: 45 }, { policy });
const r25policy: BidRequest25 = buildBidRequest(call, { id: 'legacy', openrtb: '2.5', gvlVendorId: 45 }, { policy });
const rBoth: Spec26 = buildBidRequest(call, { id: 'both', openrtb: 'both', gvlVendorId: 45 }, { policy });

// Every key we emit must be a key the published type declares (assignability alone would let extra keys through).
type KeysWithin<Ours, Theirs> =
  Exclude<keyof NonNullable<Ours>, keyof NonNullable<Theirs>> extends never ? true : false;
const checks: [
  KeysWithin<OrtbBidRequest26, BidRequest26>,
  KeysWithin<OrtbBidRequest26['user'], BidRequest26['user']>,
  KeysWithin<OrtbBidRequest26['regs'], BidRequest26['regs']>,
  KeysWithin<OrtbBidRequest26['site'], BidRequest26['site']>,
  KeysWithin<OrtbBidRequest26['device'], BidRequest26['device']>,
  KeysWithin<OrtbBidRequest26['imp'][number], BidRequest26['imp'][number]>,
  KeysWithin<NonNullable<OrtbBidRequest26['user']>['eids'] extends (infer E)[] | undefined ? E : never, EID26>,
  KeysWithin<OrtbBidRequest25, BidRequest25>,
  KeysWithin<OrtbBidRequest25['user'], BidRequest25['user']>,
  KeysWithin<OrtbBidRequest25['regs'], BidRequest25['regs']>,
  KeysWithin<OrtbBidRequestBoth, BidRequest26>,
  KeysWithin<OrtbBidRequestBoth['user'], BidRequest26['user']>,
  KeysWithin<OrtbBidRequestBoth['regs'], BidRequest26['regs']>,
  // Our video has the fields of both versions; buildBidRequest writes each version only its own (a run-time check).
  Exclude<keyof OrtbVideo, keyof Video26 | keyof Video25> extends never ? true : false,
  KeysWithin<OrtbBidRequest25['imp'][number], Imp25>,
] = [true, true, true, true, true, true, true, true, true, true, true, true, true, true, true];

// Controls: these must be rejected, or the published types did not load and the check above proves nothing.
// @ts-expect-error an EID without uids is not an OpenRTB 2.6 EID
const noUids: Spec26 = { id: '1', imp: [], user: { eids: [{ source: 'x.example' }] } };
// @ts-expect-error OpenRTB 2.5 has no user.eids
const v25Eids: BidRequest25['user'] = { eids: [] };

export { r26, r26explicit, r25, r26policy, r25policy, rBoth, checks, noUids, v25Eids };
