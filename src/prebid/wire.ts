/**
 * The wire format between the eidkit Prebid.js adapter and the ad server (`POST {domain}/prebid/v1`), shared
 * by the adapter (src/prebid) and the receiving side (src/adserver). Types only: nothing here runs.
 */

/** One ad unit of the auction, as the adapter sends it. */
export interface PrebidWireUnit {
  /** Prebid's bid id; the answer's `requestId` names it. */
  bidId: string;
  /** The ad unit's code on the page (sent on as the format's tag id). */
  adUnitCode: string;
  /** The placement's format id (`params.formatId`). */
  formatId: number | string;
  /** Site and page of this unit when they differ from the request's. */
  siteId?: number | string;
  pageId?: number | string;
  /** Global placement id (`ortb2Imp.ext.gpid`). */
  gpid?: string;
  /** Banner sizes, `[[w, h], …]`. */
  banner?: [number, number][];
  /** `mediaTypes.video` as the publisher wrote it: `context`, `mimes`, `protocols`, `playerSize`, … */
  video?: Record<string, unknown>;
  /** The floor Prebid's floors module gives for this unit. */
  floor?: { value: number; currency: string };
}

/** The body of `POST /prebid/v1`: one per auction, every ad unit in it. */
export interface PrebidWireRequest {
  networkId: number | string;
  siteId: number | string;
  pageId: number | string;
  target?: string;
  units: PrebidWireUnit[];
  /**
   * The eids exactly as Prebid handed them to the adapter (`ortb2.user.ext.eids`, else `userIdAsEids`), less the
   * sources the eidkit tag's experiments hold out of this browser.
   */
  eids?: unknown[];
  /**
   * The experiments' arms of this page, as the eidkit tag decided them (`window.__sasxp.xp`): entries
   * `{ id, arm: 'h' | 'c', pct, src, st }` (docs/wire-format.md#experiments-the-xp-field). Absent without experiments.
   */
  xp?: unknown[];
  gdpr?: 0 | 1;
  gdpr_consent?: string;
  addtl_consent?: string;
  gpp?: string;
  gpp_sid?: number[];
  us_privacy?: string;
  /** The supply chain (`ortb2.source.ext.schain` in Prebid 10+). */
  schain?: Record<string, unknown>;
  /** First-party data: `ortb2.site`, and `ortb2.user` without its eids (they are in `eids`). */
  site?: Record<string, unknown>;
  user?: Record<string, unknown>;
  /** The page URL Prebid detected. */
  page?: string;
  /** Auction timeout, milliseconds. */
  tmax?: number;
}

/**
 * One bid of the answer: Prebid's own bid fields, which the adapter passes on (defaults: EUR, ttl 300, net revenue).
 */
export interface PrebidWireBid {
  /** The unit's `bidId`. */
  requestId: string;
  cpm: number;
  currency?: string;
  width?: number;
  height?: number;
  /** Banner markup, or… */
  ad?: string;
  /** …a VAST document for video. */
  vastXml?: string;
  ttl?: number;
  creativeId: string;
  netRevenue?: boolean;
  /** The deal's cross-platform `dealId` (docs/deal-rules.md#the-read-shape), when the bid comes from a deal. */
  dealId?: string;
  /** `banner` or `video` (a bid with `vastXml` must say `video`). */
  mediaType: 'banner' | 'video';
  meta?: { advertiserDomains?: string[] };
  /** Win notice URL; `${AUCTION_PRICE}` is replaced by the winning price. */
  nurl?: string;
}

/** The answer to `POST /prebid/v1`: bids (maybe none) and user syncs the adapter may register. */
export interface PrebidWireResponse {
  bids: PrebidWireBid[];
  syncs?: { type: 'iframe' | 'image'; url: string }[];
}
