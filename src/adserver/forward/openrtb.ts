/**
 * Forwarding eids to demand partners (docs/wire-format.md#forwarding-to-demand-partners): an OpenRTB 2.6 bid request
 * carrying every received eid, known and unknown, unmodified, in `user.eids`; for a partner flagged OpenRTB 2.5,
 * in `user.ext.eids` (with the 2.5 places of the privacy signals); for one flagged `both`, in both places. A DMP
 * receives only its preferred provider's eids. With a forwarding policy (policy.ts), only the eids the
 * policy lets through for that partner, still unmodified.
 */
import { randomUUID } from 'node:crypto';
import type { Eid } from '../../core/index.js';
import type { ForwardingPolicy } from './policy.js';
import { eidsForPartner } from './partners.js';
import type { DemandPartner } from './partners.js';
import { ortbImps } from './openrtb-imp.js';
import type { OrtbImp } from './openrtb-imp.js';
import type { AdCall, PageUrlOptions } from '../parse/index.js';
import { emailOnlyRules, scrubWith } from '../parse/index.js';
import { given, OptionsError } from '../common/index.js';

/** Options of {@link buildBidRequest}. */
export interface BidRequestOptions {
  /** Request id; a random UUID when omitted. */
  id?: string;
  /** Extra eids the service adds (for example from envelope expansion), after the received ones. */
  extraEids?: readonly Eid[];
  /** Maximum time for bids, milliseconds. Default 300. */
  tmax?: number;
  /** Auction type: 1 first price, 2 second price. Default 1. */
  at?: number;
  /** Accepted currencies. Default `['EUR']`. */
  cur?: string[];
  /** Marks the request as a test (not billable). */
  test?: boolean;
  /** Which eids the partner may receive (permissions, consent): see `createForwardingPolicy`. Default: all. */
  policy?: ForwardingPolicy;
  /**
   * How an email still in the call's page URL leaves `site.page` (a call built by hand, not parsed): stripped by
   * default, or `'hash'` (docs/ad-server.md#page-urls-without-emails). Parameters by name are the parser's job.
   */
  pageUrl?: Pick<PageUrlOptions, 'emails'>;
}

const OPENRTB_VERSIONS: ReadonlySet<unknown> = new Set([undefined, '2.5', '2.6', 'both']);

/** A partner a bid request can be built for: a named one, of a version we write (plain JavaScript gets no types). */
function checkPartner(partner: DemandPartner): void {
  if (partner === null || typeof partner !== 'object') {
    throw new OptionsError('partner', `must be an object such as { id: 'dsp-a' } (got ${given(partner)})`);
  }
  if (typeof partner.id !== 'string' || partner.id === '') {
    throw new OptionsError('partner.id', `must name the partner, a non-empty string (got ${given(partner.id)})`);
  }
  if (!OPENRTB_VERSIONS.has(partner.openrtb)) {
    throw new OptionsError('partner.openrtb', `must be '2.5', '2.6' or 'both' (got ${given(partner.openrtb)})`);
  }
}

/** The OpenRTB UID we send (AdCOM `UID`). */
export interface OrtbUid {
  id: string;
  atype?: number;
  ext?: Record<string, unknown>;
}

/** The OpenRTB EID we send (AdCOM `EID`). */
export interface OrtbEid {
  source: string;
  uids: OrtbUid[];
  inserter?: string;
  matcher?: string;
  mm?: number;
  ext?: Record<string, unknown>;
}

/** The parts of an OpenRTB `BidRequest` this service fills in that are the same in 2.5 and 2.6. */
export interface OrtbBidRequestBase {
  id: string;
  imp: OrtbImp[];
  site?: {
    id?: string;
    page?: string;
    domain?: string;
    keywords?: string;
    publisher?: { id?: string };
    ext?: Record<string, unknown>;
  };
  device?: { ua?: string; ip?: string; ipv6?: string };
  at?: number;
  tmax?: number;
  cur?: string[];
  test?: 0 | 1;
  ext?: Record<string, unknown>;
}

/** An OpenRTB 2.6 bid request: eids in `user.eids`, privacy signals in their 2.6 fields. */
export interface OrtbBidRequest26 extends OrtbBidRequestBase {
  user?: { id?: string; consent?: string; eids?: OrtbEid[]; ext?: Record<string, unknown> };
  regs?: { gdpr?: 0 | 1; us_privacy?: string; gpp?: string; gpp_sid?: number[]; ext?: Record<string, unknown> };
}

/** An OpenRTB 2.5 bid request: eids in `user.ext.eids`, privacy signals in `user.ext` and `regs.ext`. */
export interface OrtbBidRequest25 extends OrtbBidRequestBase {
  user?: { id?: string; ext?: { eids?: OrtbEid[]; consent?: string } & Record<string, unknown> };
  regs?: { ext?: { gdpr?: 0 | 1; us_privacy?: string; gpp?: string; gpp_sid?: number[] } & Record<string, unknown> };
}

/** A bid request for a partner flagged `both`: eids and privacy signals in their 2.6 and their 2.5 places. */
export interface OrtbBidRequestBoth extends OrtbBidRequestBase {
  user?: {
    id?: string;
    consent?: string;
    eids?: OrtbEid[];
    ext?: { eids?: OrtbEid[]; consent?: string } & Record<string, unknown>;
  };
  regs?: {
    gdpr?: 0 | 1;
    us_privacy?: string;
    gpp?: string;
    gpp_sid?: number[];
    ext?: { gdpr?: 0 | 1; us_privacy?: string; gpp?: string; gpp_sid?: number[] } & Record<string, unknown>;
  };
}

/** A bid request of any version. */
export type OrtbBidRequest = OrtbBidRequest25 | OrtbBidRequest26 | OrtbBidRequestBoth;

/** True when the object has a key of its own: no array of keys made, as Object.keys would, five times a request. */
function hasKeys(o: object): boolean {
  for (const k in o) if (Object.hasOwn(o, k)) return true;
  return false;
}

// The last referer's host: calls from one page arrive in runs, and each call builds a request per partner.
let lastReferer = '';
let lastHost: string | undefined;

function hostOf(url: string | undefined): string | undefined {
  if (!url) return undefined;
  if (url === lastReferer) return lastHost;
  let host: string | undefined;
  try {
    host = new URL(url).hostname || undefined;
  } catch {
    host = undefined;
  }
  lastReferer = url;
  lastHost = host;
  return host;
}

/**
 * Builds the bid request for one partner from one ad call.
 * OpenRTB 2.6: eids in `user.eids`, `gdpr`/`us_privacy`/`consent` at top level of `regs`/`user`.
 * OpenRTB 2.5: eids in `user.ext.eids`, privacy signals in `regs.ext` and `user.ext`.
 * @example buildBidRequest(call, { id: 'dsp-a', openrtb: '2.5' }).user.ext.eids
 */
export function buildBidRequest(
  call: AdCall,
  partner: DemandPartner & { openrtb: '2.5' },
  options?: BidRequestOptions,
): OrtbBidRequest25;
/** Builds a bid request with eids in both `user.eids` and `user.ext.eids`, for a partner flagged `both`. */
export function buildBidRequest(
  call: AdCall,
  partner: DemandPartner & { openrtb: 'both' },
  options?: BidRequestOptions,
): OrtbBidRequestBoth;
/** Builds an OpenRTB 2.6 bid request (eids in `user.eids`) for a partner not flagged 2.5. */
export function buildBidRequest(
  call: AdCall,
  partner: DemandPartner & { openrtb?: '2.6' },
  options?: BidRequestOptions,
): OrtbBidRequest26;
/** Builds the bid request of the version the partner reads. */
export function buildBidRequest(call: AdCall, partner: DemandPartner, options?: BidRequestOptions): OrtbBidRequest;
export function buildBidRequest(call: AdCall, partner: DemandPartner, options: BidRequestOptions = {}): OrtbBidRequest {
  checkPartner(partner);
  // Where each field goes: its 2.6 place, its 2.5 place (`ext`), or both.
  const in26 = partner.openrtb !== '2.5';
  const in25 = partner.openrtb === '2.5' || partner.openrtb === 'both';
  const eids = (
    options.policy
      ? options.policy.eidsFor(call, partner, options.extraEids)
      : eidsForPartner(options.extraEids?.length ? [...call.eids, ...options.extraEids] : call.eids, partner)
  ) as OrtbEid[];
  // The page URL as it was parsed already has no email; one built by hand is scrubbed here (a repeat costs one
  // string compare: scrubWith keeps its last answer).
  const page = call.referer && scrubWith(call.referer, emailOnlyRules(options.pageUrl, 'options.pageUrl'));
  const secure = page?.startsWith('https:') ? 1 : undefined;
  const req: OrtbBidRequestBase & { user?: Record<string, unknown>; regs?: Record<string, unknown> } = {
    id: options.id ?? randomUUID(),
    imp: ortbImps(call.formats, secure, in26, in25),
    at: options.at ?? 1,
    tmax: options.tmax ?? 300,
    cur: options.cur ?? ['EUR'],
  };
  if (options.test) req.test = 1;

  const site: NonNullable<OrtbBidRequestBase['site']> = {};
  if (call.siteId !== undefined) site.id = String(call.siteId);
  if (page) site.page = page;
  const domain = hostOf(page);
  if (domain) site.domain = domain;
  if (call.target) site.keywords = call.target;
  if (call.networkId !== undefined) site.publisher = { id: String(call.networkId) };
  if (call.pageId !== undefined) site.ext = { pageId: call.pageId };
  req.site = site;

  const device: NonNullable<OrtbBidRequestBase['device']> = {};
  if (call.userAgent) device.ua = call.userAgent;
  if (call.ip) device[call.ip.includes(':') ? 'ipv6' : 'ip'] = call.ip;
  if (hasKeys(device)) req.device = device;

  // The exchange's own user id is the pid; the publisher's uid is never passed on to partners.
  const user: Record<string, unknown> = {};
  if (call.pid) user.id = call.pid;
  const userExt: Record<string, unknown> = {};
  const regs: Record<string, unknown> = {};
  const regsExt: Record<string, unknown> = {};
  const place = (top: Record<string, unknown>, ext: Record<string, unknown>, key: string, value: unknown) => {
    if (in26) top[key] = value;
    if (in25) ext[key] = value;
  };
  if (call.consent.gdprConsent) place(user, userExt, 'consent', call.consent.gdprConsent);
  if (eids.length) place(user, userExt, 'eids', eids);
  if (hasKeys(userExt)) user.ext = userExt;
  if (hasKeys(user)) req.user = user;

  const { gdpr, usPrivacy, gpp, gppSid } = call.consent;
  if (gdpr !== undefined) place(regs, regsExt, 'gdpr', gdpr);
  if (usPrivacy) place(regs, regsExt, 'us_privacy', usPrivacy);
  if (gpp) place(regs, regsExt, 'gpp', gpp);
  if (gppSid) place(regs, regsExt, 'gpp_sid', gppSid);
  // Global Privacy Control: OpenRTB 2.6's `regs.gpc` (an integer), and `regs.ext.gpc` as the string "1" where 2.5
  // partners (and Prebid Server) read it.
  if (call.consent.gpc) {
    if (in26) regs.gpc = 1;
    regsExt.gpc = '1';
  }
  if (hasKeys(regsExt)) regs.ext = regsExt;
  if (hasKeys(regs)) req.regs = regs;
  return req;
}
