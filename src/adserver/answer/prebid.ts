/**
 * Answering the Prebid.js adapter (docs/wire-format.md#how-eids-reach-an-ad-call): `prebidBidResponse` writes the
 * JSON body `POST /prebid/v1` answers with (src/prebid/wire.ts), so an ad server answers from the parsed call
 * without knowing the adapter's wire format. This is where deals meet the auction: a bid carries the deal's
 * cross-platform `dealId`.
 */
import type { PrebidWireBid, PrebidWireResponse } from '../../prebid/wire.js';
import type { AdCall, AdCallFormat } from '../parse/index.js';

export type { PrebidWireBid, PrebidWireResponse } from '../../prebid/wire.js';

/**
 * One bid the ad server makes for one placement of the call: the wire bid's fields (price, size, `ad` or
 * `vastXml`, `ttl`, `dealId`, `nurl`, …), the placement instead of `requestId`, `mediaType` and `meta` filled in.
 */
export interface PrebidBidInput extends Omit<PrebidWireBid, 'requestId' | 'creativeId' | 'mediaType' | 'meta'> {
  /** The placement: one of `call.formats`, or its `impId` (Prebid's bid id). */
  format: AdCallFormat | string;
  /** The creative's id. */
  creativeId: string | number;
  /** Advertiser domains, for Prebid's `meta.advertiserDomains`. */
  advertiserDomains?: string[];
}

/** Options of {@link prebidBidResponse}. */
export interface PrebidResponseOptions {
  /** User syncs the adapter registers with Prebid (consent parameters are appended by the adapter). */
  syncs?: { type: 'iframe' | 'image'; url: string }[];
}

const fail = (path: string, message: string): never => {
  throw new TypeError(`prebidBidResponse: ${path} ${message}`);
};

/**
 * The JSON body answering a `/prebid/v1` call: one Prebid bid per input bid. Throws a TypeError naming the
 * field for a bid the adapter could not use (unknown placement, no price, no creative).
 * @example
 * const bids = [{ format: call.formats[0], cpm: 2.5, ad: '<div>…</div>', creativeId: 'c1', dealId: 'D-1' }];
 * return Response.json(prebidBidResponse(call, bids), { headers: cors });
 */
export function prebidBidResponse(
  call: AdCall,
  bids: readonly PrebidBidInput[],
  options: PrebidResponseOptions = {},
): PrebidWireResponse {
  const out: PrebidWireBid[] = bids.map((b, i) => {
    const at = `bids[${i}]`;
    const format =
      typeof b.format === 'string'
        ? call.formats.find((f) => f.impId === b.format)
        : call.formats.includes(b.format)
          ? b.format
          : undefined;
    if (!format) fail(`${at}.format`, "is not one of the call's formats");
    const requestId =
      format!.impId ?? fail(`${at}.format`, 'has no impId: the call did not come from the Prebid adapter or OpenRTB');
    if (!(typeof b.cpm === 'number' && Number.isFinite(b.cpm) && b.cpm > 0))
      fail(`${at}.cpm`, 'must be a positive number');
    if (!b.ad === !b.vastXml) fail(`${at}.ad`, 'exactly one of ad and vastXml is needed');
    if (b.creativeId === undefined || b.creativeId === '') fail(`${at}.creativeId`, 'is required');
    if (b.dealId !== undefined && (typeof b.dealId !== 'string' || !b.dealId))
      fail(`${at}.dealId`, 'must be a non-empty string');
    const one = format!.sizes?.length === 1 ? format!.sizes[0] : undefined;
    const width = b.width ?? one?.[0];
    const height = b.height ?? one?.[1];
    if (b.ad && (width === undefined || height === undefined))
      fail(`${at}.width`, 'and height are needed for a placement without exactly one size');
    const bid: PrebidWireBid = {
      requestId,
      cpm: b.cpm,
      currency: b.currency ?? 'EUR',
      ttl: b.ttl ?? 300,
      creativeId: String(b.creativeId),
      netRevenue: b.netRevenue ?? true,
      mediaType: b.vastXml ? 'video' : 'banner',
      meta: { advertiserDomains: b.advertiserDomains ?? [] },
    };
    if (width !== undefined) bid.width = width;
    if (height !== undefined) bid.height = height;
    if (b.ad) bid.ad = b.ad;
    if (b.vastXml) bid.vastXml = b.vastXml;
    if (b.dealId) bid.dealId = b.dealId;
    if (b.nurl) bid.nurl = b.nurl;
    return bid;
  });
  return options.syncs?.length ? { bids: out, syncs: options.syncs } : { bids: out };
}
