/**
 * The eidkit Prebid.js bid adapter: one `spec` in the shape
 * `pbjs.registerBidAdapter(null, code, spec)` takes (Prebid 9 to 11). It sends the eids exactly as Prebid hands
 * them to a bidder, so Prebid's own consent enforcement (tcfControl, `transmitEids`) keeps deciding what goes.
 * Written for size (the standalone build has a 1,635 B gzip budget): no dependencies, nothing from Prebid but the
 * core's email detector.
 */
import type { PrebidWireBid, PrebidWireRequest, PrebidWireResponse, PrebidWireUnit } from './wire.js';
import { hasEmail } from '../core/pii.js';

/** The adapter's bid params. */
export interface EidkitBidParams {
  networkId: number | string;
  siteId: number | string;
  pageId: number | string;
  formatId: number | string;
  /** The ad server's base URL (`https://ads.example.com`); the request goes to `{domain}/prebid/v1`. */
  domain: string;
  /** Optional keyword targeting. */
  target?: string;
}

/** The parts of a Prebid bid request the adapter reads. */
export interface PrebidBid {
  bidId: string;
  adUnitCode: string;
  params: EidkitBidParams;
  mediaTypes?: { banner?: { sizes?: [number, number][] }; video?: Record<string, unknown> };
  ortb2Imp?: { ext?: { gpid?: string } };
  userIdAsEids?: unknown[];
  getFloor?: (o: {
    currency: string;
    mediaType: string;
    size: string;
  }) => { floor?: number; currency?: string } | undefined;
}

/** The parts of Prebid's bidder request the adapter reads. */
export interface PrebidBidderRequest {
  ortb2?: {
    site?: Record<string, unknown>;
    user?: { ext?: { eids?: unknown[] } & Record<string, unknown> } & Record<string, unknown>;
    source?: { ext?: { schain?: Record<string, unknown> } };
  };
  gdprConsent?: { gdprApplies?: boolean; consentString?: string; addtlConsent?: string };
  gppConsent?: { gppString?: string; applicableSections?: number[] };
  uspConsent?: string;
  refererInfo?: { page?: string };
  timeout?: number;
}

/** What `buildRequests` returns, one per ad server. */
export interface PrebidServerRequest {
  method: 'POST';
  url: string;
  /** The JSON body ({@link PrebidWireRequest}) as text. */
  data: string;
  options: { withCredentials: true };
}

/** A bid as Prebid wants it from `interpretResponse`. */
export interface PrebidBidResponse {
  requestId: string;
  cpm: number;
  currency: string;
  width?: number;
  height?: number;
  ad?: string;
  vastXml?: string;
  mediaType: 'banner' | 'video';
  ttl: number;
  creativeId: string;
  netRevenue: boolean;
  dealId?: string;
  meta?: { advertiserDomains?: string[] };
  nurl?: string;
}

/** A user sync Prebid registers. */
export interface PrebidUserSync {
  type: 'iframe' | 'image';
  url: string;
}

/** The adapter spec. */
export interface EidkitSpec {
  code: string;
  gvlid: number;
  supportedMediaTypes: string[];
  isBidRequestValid(bid: PrebidBid): boolean;
  buildRequests(bids: PrebidBid[], bidderRequest?: PrebidBidderRequest): PrebidServerRequest[];
  interpretResponse(response: { body?: unknown } | undefined, request?: PrebidServerRequest): PrebidBidResponse[];
  getUserSyncs(
    options: { iframeEnabled?: boolean; pixelEnabled?: boolean },
    responses?: { body?: unknown }[],
    gdprConsent?: PrebidBidderRequest['gdprConsent'],
    uspConsent?: string,
    gppConsent?: PrebidBidderRequest['gppConsent'],
  ): PrebidUserSync[];
  onBidWon(bid: { nurl?: string; cpm?: number; originalCpm?: number }): void;
  onTimeout(
    timedOut: { bidId?: string; adUnitCode?: string; timeout?: number; params?: EidkitBidParams | EidkitBidParams[] }[],
  ): void;
}

/** Options of {@link createSpec}. */
export interface SpecOptions {
  /** Bidder code. Default `eidkit`. */
  code?: string;
  /** Global Vendor List id Prebid's TCF enforcement checks for this bidder. Default 45 (the ad service). */
  gvlid?: number;
  /** Where messages go (Prebid's log when registered through {@link register}); default: nowhere. */
  log?: (message: string) => void;
}

const REQUIRED = ['networkId', 'siteId', 'pageId', 'formatId', 'domain'] as const;
/** The service's currency: floors are asked in it and bids without a currency are in it. */
const CURRENCY = 'EUR';

/** POSTs a beacon (with the page's cookies) that outlives the page; a failure never reaches the page. */
function beacon(url: string, body?: string): void {
  try {
    navigator.sendBeacon(url, body);
  } catch {
    // No sendBeacon, or a URL it refuses: the beacon is best effort.
  }
}

const base = (domain: string) => domain.replace(/\/+$/, '');

/** The unit of one bid request on the wire. */
function unitOf(bid: PrebidBid): PrebidWireUnit {
  const mt = bid.mediaTypes ?? {};
  const u: PrebidWireUnit = {
    bidId: bid.bidId,
    adUnitCode: bid.adUnitCode,
    formatId: bid.params.formatId,
    gpid: bid.ortb2Imp?.ext?.gpid,
    banner: mt.banner?.sizes,
    video: mt.video,
  };
  try {
    const f = bid.getFloor?.({ currency: CURRENCY, mediaType: '*', size: '*' });
    if (f && f.floor! > 0) u.floor = { value: f.floor!, currency: f.currency || CURRENCY };
  } catch {
    // A floors module that throws means no floor, not no bid.
  }
  return u;
}

/** Privacy signals by ad-call name (docs/wire-format.md#consent-signals-and-rules): body fields, sync URL query. */
function consentFields(
  gdpr?: PrebidBidderRequest['gdprConsent'],
  usp?: string,
  gpp?: PrebidBidderRequest['gppConsent'],
) {
  return {
    gdpr: gdpr?.gdprApplies != null ? (+gdpr.gdprApplies as 0 | 1) : undefined,
    gdpr_consent: gdpr?.consentString,
    addtl_consent: gdpr?.addtlConsent,
    gpp: gpp?.gppString,
    gpp_sid: gpp?.applicableSections,
    us_privacy: usp,
  };
}

/**
 * Creates the adapter spec.
 * @example pbjs.registerBidAdapter(null, 'eidkit', createSpec())
 */
export function createSpec(options: SpecOptions = {}): EidkitSpec {
  const log = (m: string) => options.log?.(m);
  return {
    code: options.code || 'eidkit',
    gvlid: options.gvlid || 45,
    supportedMediaTypes: ['banner', 'video'],

    isBidRequestValid(bid) {
      const p = bid.params || ({} as EidkitBidParams);
      // `domain` must be an http(s) base URL: a bare host name would send the request to the page's own origin.
      const missing = REQUIRED.filter((k) =>
        k == 'domain' ? !/^https?:\/\//.test(p[k]) : p[k] == null || p[k] === '',
      );
      // Prebid logs only "invalid bid"; say which param, as a publisher needs to fix it.
      if (missing.length) log(`${bid.adUnitCode}: missing or invalid params.${missing.join(', params.')}`);
      return !missing.length;
    },

    buildRequests(bids, br = {}) {
      // One request per ad server (in practice one per auction): every ad unit for that server in it.
      const byDomain: Record<string, PrebidBid[]> = {};
      for (const b of bids) (byDomain[base(b.params.domain)] ||= []).push(b);
      const o = br.ortb2 ?? {};
      // The eids exactly as Prebid gives this bidder (after its consent checks), never re-read from the page, less the
      // sources the eidkit tag's experiments hold out of this browser (`window.__sasxp`), whose arms go along as `xp`.
      const x = (globalThis as { __sasxp?: { out?: unknown[]; xp?: unknown[] } }).__sasxp;
      const eids = (o.user?.ext?.eids ?? bids[0].userIdAsEids)?.filter(
        (e) => !x?.out?.includes(String((e as { source?: unknown } | null)?.source).toLowerCase()),
      );
      let user = o.user;
      if (user?.ext?.eids) {
        // Sent once, as `eids`: the first-party user data goes without them.
        const { eids: _, ...ext } = user.ext;
        user = { ...user, ext };
      }
      return Object.keys(byDomain).map((domain) => {
        const p = byDomain[domain][0].params;
        const data: PrebidWireRequest = {
          networkId: p.networkId,
          siteId: p.siteId,
          pageId: p.pageId,
          target: p.target,
          units: byDomain[domain].map(unitOf),
          eids,
          xp: x?.xp,
          ...consentFields(br.gdprConsent, br.uspConsent, br.gppConsent),
          schain: o.source?.ext?.schain,
          site: o.site,
          user,
          page: br.refererInfo?.page,
          tmax: br.timeout,
        };
        return {
          method: 'POST',
          url: domain + '/prebid/v1',
          data: JSON.stringify(data, (_, v: unknown) => (typeof v == 'string' && hasEmail(v) ? undefined : v)),
          options: { withCredentials: true },
        };
      });
    },

    interpretResponse(response) {
      // The answer carries Prebid's own bid fields (src/adserver prebidBidResponse writes it); a broken answer
      // (not JSON, no bids, odd entries) is no bid, never an exception.
      const bids = (response?.body as PrebidWireResponse | undefined)?.bids;
      const out: PrebidBidResponse[] = [];
      if (!Array.isArray(bids)) log('no bids in answer');
      else
        for (const b of bids as (PrebidWireBid | null)[]) {
          if (b?.requestId && b.cpm > 0 && (b.ad || b.vastXml))
            out.push({
              currency: CURRENCY,
              ttl: 300,
              netRevenue: true,
              ...b,
            });
          else log('bid dropped: needs requestId, cpm, ad or vastXml');
        }
      return out;
    },

    getUserSyncs(options, responses = [], gdprConsent, uspConsent, gppConsent) {
      const fields = consentFields(gdprConsent, uspConsent, gppConsent);
      // The JSON round trip drops the absent signals; URLSearchParams encodes the rest (gpp_sid as `2,7`).
      const q = String(new URLSearchParams(JSON.parse(JSON.stringify(fields)) as Record<string, string>));
      const out: PrebidUserSync[] = [];
      for (const r of responses)
        for (const s of (r.body as PrebidWireResponse | undefined)?.syncs ?? [])
          if (s?.url && (s.type === 'iframe' ? options.iframeEnabled : s.type === 'image' && options.pixelEnabled))
            out.push({ type: s.type, url: s.url + (q && (s.url.includes('?') ? '&' : '?') + q) });
      return out;
    },

    onBidWon(bid) {
      if (bid.nurl) beacon(bid.nurl.replace(/\$\{AUCTION_PRICE\}/g, '' + (bid.originalCpm ?? bid.cpm)));
    },

    onTimeout(timedOut) {
      for (const t of timedOut) {
        const p = ([] as (EidkitBidParams | undefined)[]).concat(t.params)[0];
        if (p?.domain)
          beacon(
            base(p.domain) + '/prebid/v1/timeout',
            JSON.stringify({ bidId: t.bidId, adUnitCode: t.adUnitCode, timeout: t.timeout }),
          );
      }
    },
  };
}
