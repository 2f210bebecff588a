/**
 * What an ad call is once parsed (docs/wire-format.md): the `AdCall` and its parts, the input and options of the
 * parse functions, and the `Collector` every reader (GET query, POST body, ortb.ts) fills one with. The
 * Collector validates each field as it is handed over: what is broken is dropped and named in `issues`.
 */
import { decodeBase64Json, hasEmail, validateEids } from '../../core/index.js';
import type { Eid, Issue } from '../../core/index.js';
import type { AdCallLimits } from './limits.js';
import type { PageUrlOptions } from './page-url.js';

/**
 * Which ad-call endpoint a request hit: GET `/ac`, POST `/genericpost`, POST `/call`, POST `/prebid/v1`, or none of
 * them.
 */
/**
 * Where the call came in: the tag's `/ac`, `/genericpost`, `/call`; the Prebid.js adapter's `/prebid/v1`; an OpenRTB
 * request at `/openrtb2/auction` (the path Prebid Server and SSPs post to); anything else `unknown`.
 */
export type AdCallEndpoint = 'ac' | 'genericpost' | 'call' | 'prebid' | 'openrtb' | 'unknown';

/** One requested format (placement) of the call. */
export interface AdCallFormat {
  /**
   * Format id (`fmtid`, `formatId`, `formats[].id`, a Prebid unit's `formatId`, an OpenRTB imp's `ext.formatId`); 0
   * when an OpenRTB imp names none.
   */
  id: number;
  /** Publisher tag id of the placement: one-call `tagId`, Prebid ad unit code, OpenRTB `imp.tagid`. */
  tagId?: string;
  /** The caller's id of this placement, which an answer names: Prebid's `bidId`, OpenRTB `imp.id`. */
  impId?: string;
  /** Global placement id (Prebid `gpid`, OpenRTB `imp.ext.gpid`). */
  gpid?: string;
  /** Banner sizes `[w, h]`, when the caller gave them. */
  sizes?: [number, number][];
  /** Video parameters as sent (`context`, `mimes`, `protocols`, `playerSize` / `w`, `h`, …). */
  video?: Record<string, unknown>;
  /** The floor price the caller set. */
  floor?: { value: number; currency: string };
}

/** Privacy signals of the call (docs/wire-format.md#consent-signals-and-rules), passed on to bid requests as sent. */
export interface AdCallConsent {
  /** 1 when GDPR applies, 0 when it does not. */
  gdpr?: 0 | 1;
  /** TCF consent string. */
  gdprConsent?: string;
  /** Google's Additional Consent string (`addtl_consent`). */
  addtlConsent?: string;
  /** GPP string. */
  gpp?: string;
  /** GPP applicable section ids. */
  gppSid?: number[];
  /** US Privacy string (for example `1YNN`). */
  usPrivacy?: string;
  /**
   * Global Privacy Control: true when the browser signals it (`gpc=1`, OpenRTB `regs.gpc` / `regs.ext.gpc`, or the
   * browser's own `Sec-GPC: 1` header), false when the call says 0; absent when nothing says.
   */
  gpc?: boolean;
}

/** What one ad call carries, validated. Fields that were absent or invalid are left out (see `issues`). */
export interface AdCall {
  /** The endpoint that was hit. */
  endpoint: AdCallEndpoint;
  /** Network id (`nwid` / `networkId`). */
  networkId?: number;
  /** Site id (`siteid` / `siteId`). */
  siteId?: number;
  /** Page id or page name (`pgid` / `pageId`). */
  pageId?: string;
  /** Requested formats: one for GET and generic calls, one or more for one-call requests. */
  formats: AdCallFormat[];
  /** Keyword targeting string (`tgt` / `target`). */
  target?: string;
  /** The tag's timestamp (`tmstp` / `timestamp`), milliseconds since the epoch. */
  timestamp?: number;
  /** Publisher user id (`uid`); it overrides `pid` as the user id (docs/wire-format.md#user-ids-uid-and-pid). */
  uid?: string;
  /** The service's own user id, from the cookie named `pid`. */
  pid?: string;
  /** The valid eids, invalid ones dropped, same-source ones merged. */
  eids: Eid[];
  /** Privacy signals. */
  consent: AdCallConsent;
  /** The `User-Agent` header, for the bid request's device. */
  userAgent?: string;
  /**
   * The page URL the call came from (the `Referer` header, or the body's `page` / `site.page`), without raw emails
   * (`ParseOptions.pageUrl`).
   */
  referer?: string;
  /**
   * The device's address, for the bid request's `device.ip` / `device.ipv6`: an OpenRTB body's `device.ip` (a server
   * relaying the user's request), else the peer given in `ip` (Node requests: their socket's) or, when that peer is
   * one of `trustedProxies`, the client address `X-Forwarded-For` names behind them.
   */
  ip?: string;
  /**
   * Everything that was dropped, and why. Empty for a clean call. At most `maxIssues` entries, then one last entry
   * (path `issues`) saying how many more were found.
   */
  issues: Issue[];
  /** Issues found beyond `maxIssues` and not listed; absent when every issue is listed. */
  issuesOmitted?: number;
}

/** Request headers as WHATWG `Headers` or Node's `IncomingHttpHeaders`-style record. */
export type HeadersLike = Headers | Record<string, string | string[] | undefined>;

/** What {@link parseAdCall} reads: the URL, method, headers and (for POST) the body. */
export interface AdCallInput {
  /** Absolute URL, or a path with query string (`/ac?nwid=1&eids=…`). */
  url: string | URL;
  /** HTTP method; `GET` when omitted, or `POST` when a body is given. */
  method?: string;
  /** Request headers (the `cookie`, `user-agent` and `referer` headers are read). */
  headers?: HeadersLike;
  /** POST body: raw text or bytes, or an object a framework already parsed from JSON. */
  body?: string | Uint8Array | Record<string, unknown> | null;
}

/** Options of every parse function. */
export interface ParseOptions {
  /** Size caps; defaults in {@link DEFAULT_LIMITS}. */
  limits?: Partial<AdCallLimits>;
  /**
   * The address of the peer that sent the request: `req.socket.remoteAddress` on Node (parseIncomingMessage reads
   * it itself when this is absent), the platform's client address elsewhere. Never a header's value.
   */
  ip?: string;
  /** How the page URL (`referer`) loses its emails: stripped by default (docs/ad-server.md#page-urls-without-emails).
   */
  pageUrl?: PageUrlOptions;
  /**
   * Your own proxies in front of this server (load balancers, a CDN): addresses, CIDR blocks (`10.0.0.0/8`) or
   * `loopback`, `linklocal`, `uniquelocal`. When the peer is one of them, the device's address is read from
   * `X-Forwarded-For` (from the right, past every trusted proxy); from any other peer the header is ignored, since
   * anyone can write it. Default none.
   */
  trustedProxies?: readonly string[];
}

const MAX_ID = 2 ** 31 - 1;

/** A parse in progress: collects fields and issues (filled by readers.ts and ortb.ts). */
export class Collector {
  readonly call: AdCall;
  readonly limits: AdCallLimits;
  constructor(endpoint: AdCallEndpoint, limits: AdCallLimits) {
    this.limits = limits;
    this.call = { endpoint, formats: [], eids: [], consent: {}, issues: [] };
  }
  /** Sets an optional field only when it has a value, so absent fields have no key at all. */
  set<K extends 'networkId' | 'siteId' | 'pageId' | 'target'>(key: K, value: AdCall[K]): void {
    if (value !== undefined) this.call[key] = value;
  }
  /** Records one issue; past `maxIssues` it is only counted (a URL of 100,000 bad escapes is not 100,000 issues). */
  issue(path: string, message: string): void {
    if (this.call.issues.length < this.limits.maxIssues) this.call.issues.push({ path, message });
    else this.call.issuesOmitted = (this.call.issuesOmitted ?? 0) + 1;
  }
  /** Records each of `issues` (see {@link issue}). */
  issues(issues: readonly Issue[], suffix = ''): void {
    for (const i of issues) this.issue(i.path, i.message + suffix);
  }
  /** Ends the list: when issues were only counted, one last entry says how many. */
  closeIssues(): void {
    const omitted = this.call.issuesOmitted;
    if (!omitted) return;
    const message = `${omitted} more issues not listed (maxIssues ${this.limits.maxIssues})`;
    this.call.issues.push({ path: 'issues', message });
  }
  /** A positive integer id (a number, or a string of digits), else an issue. */
  id(path: string, v: unknown): number | undefined {
    if (v === undefined || v === null || v === '') return undefined;
    const n = typeof v === 'number' ? v : typeof v === 'string' && /^\s*\d{1,10}\s*$/.test(v) ? Number(v) : NaN;
    if (Number.isInteger(n) && n > 0 && n <= MAX_ID) return n;
    this.issue(path, 'must be a positive integer id');
    return undefined;
  }
  /** A non-empty string up to `max` characters (numbers are accepted and stringified), else an issue. */
  text(path: string, v: unknown, max = this.limits.maxTextLength): string | undefined {
    if (v === undefined || v === null) return undefined;
    const s = typeof v === 'string' ? v.trim() : typeof v === 'number' && Number.isFinite(v) ? String(v) : undefined;
    if (s === undefined) {
      this.issue(path, 'must be a string');
      return undefined;
    }
    if (!s) return undefined;
    if (s.length > max) {
      this.issue(path, `longer than ${max} characters; dropped`);
      return undefined;
    }
    return s;
  }
  timestamp(path: string, v: unknown): void {
    if (v === undefined || v === null || v === '') return;
    const n = typeof v === 'number' ? v : typeof v === 'string' && /^\s*\d{1,16}\s*$/.test(v) ? Number(v) : NaN;
    if (Number.isSafeInteger(n) && n >= 0) this.call.timestamp = n;
    else this.issue(path, 'must be a millisecond timestamp');
  }
  /**
   * {@link text} for a value that is kept, logged or forwarded as it came (the uid, the keyword target): one holding
   * an email address is raw personal data and goes, whole, with an issue.
   */
  impersonal(path: string, v: unknown, max?: number): string | undefined {
    const s = this.text(path, v, max);
    if (s === undefined || !hasEmail(s)) return s;
    this.issue(path, 'holds an email address; dropped (send its hash, never the address)');
    return undefined;
  }
  uid(path: string, v: unknown): void {
    const uid = this.impersonal(path, v, this.limits.maxUserIdLength);
    if (uid !== undefined) this.call.uid = uid;
  }
  /** Validates eids; `fresh` when this parser made them with JSON.parse, so they may be kept as they are. */
  eids(input: unknown, fresh: boolean): void {
    const { value, issues } = validateEids(input, this.limits, { reuse: fresh });
    this.call.eids = value;
    this.issues(issues);
  }
  /** The `eids` GET parameter: Base64 (standard or URL-safe, padded or not) of a JSON array. */
  eidsParam(param: string): void {
    if (param.length > this.limits.maxEidsParamLength) {
      this.issue('eids', `parameter longer than ${this.limits.maxEidsParamLength} characters; all eids dropped`);
      return;
    }
    const { value, issues } = decodeBase64Json(param);
    if (issues.length) {
      this.issues(issues, '; all eids dropped');
      return;
    }
    this.eids(value, true);
  }
  /** Reads the privacy signals; `names` are the paths issues name them by, in argument order. */
  consent(
    gdpr: unknown,
    gdprConsent: unknown,
    gpp: unknown,
    gppSid: unknown,
    usPrivacy: unknown,
    names: string[],
  ): void {
    const c = this.call.consent;
    if (gdpr !== undefined && gdpr !== null && gdpr !== '') {
      if (gdpr === 0 || gdpr === 1 || gdpr === '0' || gdpr === '1' || typeof gdpr === 'boolean')
        c.gdpr = Number(gdpr) as 0 | 1;
      else this.issue(names[0], 'must be 0 or 1');
    }
    const tcf = this.text(names[1], gdprConsent);
    if (tcf !== undefined) c.gdprConsent = tcf;
    const gppString = this.text(names[2], gpp);
    if (gppString !== undefined) c.gpp = gppString;
    if (gppSid !== undefined && gppSid !== null && gppSid !== '') {
      // An object's `[object Object]` fails the digit test below like any other junk.
      // eslint-disable-next-line @typescript-eslint/no-base-to-string
      const list = Array.isArray(gppSid) ? gppSid : String(gppSid).split(',');
      const sids = list.map((s) => (typeof s === 'number' ? s : /^\s*\d{1,5}\s*$/.test(String(s)) ? Number(s) : NaN));
      if (sids.length <= 64 && sids.every((n) => Number.isInteger(n) && n >= 0)) c.gppSid = sids;
      else this.issue(names[3], 'must be a list of section ids');
    }
    const usp = this.text(names[4], usPrivacy, 16);
    if (usp !== undefined) c.usPrivacy = usp;
  }
  /** Reads a Global Privacy Control flag (`1` / `0`, as a number, a string or a boolean) at `path`. */
  gpc(path: string, v: unknown): void {
    if (v === undefined || v === null || v === '') return;
    if (v === 1 || v === '1' || v === true) this.call.consent.gpc = true;
    else if (v === 0 || v === '0' || v === false) this.call.consent.gpc ??= false;
    else this.issue(path, 'must be 0 or 1');
  }
}
