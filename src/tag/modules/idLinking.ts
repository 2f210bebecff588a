/**
 * Identifier-linking module (`setup({ modules: { idLinking: { pd? } } })`). Asks the
 * provider's endpoint for the user's id as partner 102 (fixed: the service's partner number), with the optional
 * `pd` and the consent signals; caches the answer in localStorage with an expiry, refreshes it in the background
 * when it is due, and emits an `id5-sync.com` eid with `ext.linkType` and `ext.abTestingControlGroup` as returned.
 * Page flag: `window.sas_disable_idLinking = true`.
 */
import type { Eid } from '../../core/index.js';
import type { ConsentState } from '../extension.js';
import { consentParams } from '../consent-rules.js';
import {
  defineModule,
  registerExtension,
  type ModuleDefinition,
  type ModuleContext,
  type ModuleRun,
  later,
} from './_module.js';
import { loadItem, saveItem, storing } from './_storage.js';
import { CACHE_KEY } from '../../core/module-keys.js';
import { hasEmail, MAX_ID_LENGTH } from '../../core/pii.js';
import { decodeBase64Loose } from '../../core/codec.js';

/** The service's partner number at the provider: fixed by agreement, it never changes. */
export const PARTNER = 102;
/** The provider's endpoint base; `modules.idLinking.url` replaces it (tests and the demo use a local stand-in). */
export const DEFAULT_URL = 'https://id5-sync.com/g/v2';
/** localStorage key of the cached answer. */
export { CACHE_KEY };
/** Defaults: the cached id expires after 90 days and is refreshed after 2 hours (or the server's `cache_control`). */
export const EXPIRY_DAYS = 90;
export const REFRESH_SECONDS = 7200;
// After a failed request, wait this long before the next one (never a request per ad call against a dead endpoint).
const RETRY_AFTER_MS = 60_000;

/** What is cached: the id, its ext, the provider's signature, and what the request depended on. */
export interface CachedId {
  id: string;
  ext?: Record<string, unknown>;
  sig?: string;
  /** The `pd` and consent string the id was fetched with: a change refreshes it. */
  pd: string;
  gdpr: string;
  /** When to refresh (ms since epoch). */
  refreshAt: number;
}

/**
 * The provider's JSON answer, as far as the module reads it. Nothing in it is guaranteed (any JSON may come back):
 * every field is checked before it is kept.
 */
export interface IdLinkingAnswer {
  universal_uid?: unknown;
  signature?: unknown;
  ext?: { linkType?: unknown; abTestingControlGroup?: unknown } | null;
  ab_testing?: { result?: unknown } | null;
  cache_control?: { max_age_sec?: unknown } | null;
}

/** The provider's answer reduced to what we keep, or undefined when it holds no id. */
export function parseResponse(
  body: IdLinkingAnswer | null | undefined,
): (Omit<CachedId, 'pd' | 'gdpr' | 'refreshAt'> & { maxAgeSec?: number }) | undefined {
  if (!body || typeof body.universal_uid !== 'string' || !body.universal_uid || body.universal_uid === '0')
    return undefined;
  const ext: Record<string, unknown> = {};
  const src: NonNullable<IdLinkingAnswer['ext']> = body.ext && typeof body.ext === 'object' ? body.ext : {};
  if (Number.isInteger(src.linkType)) ext.linkType = src.linkType;
  // The control group comes either in ext or as `ab_testing.result` ('control' / 'normal').
  const ab =
    typeof src.abTestingControlGroup === 'boolean'
      ? src.abTestingControlGroup
      : body.ab_testing?.result
        ? body.ab_testing.result === 'control'
        : undefined;
  if (ab !== undefined) ext.abTestingControlGroup = ab;
  const maxAge = Number(body.cache_control?.max_age_sec);
  return {
    id: body.universal_uid,
    ext: Object.keys(ext).length ? ext : undefined,
    // Sent back with the next request: kept only within the id cap.
    sig: typeof body.signature === 'string' && body.signature.length <= MAX_ID_LENGTH ? body.signature : undefined,
    maxAgeSec: maxAge > 0 ? maxAge : undefined,
  };
}

/** The eid for a cached id. */
export const toEid = (c: Pick<CachedId, 'id' | 'ext'>): Eid => ({
  source: 'id5-sync.com',
  // Without an ext, `ext: undefined` (dropped by the eid check and by JSON).
  uids: [{ id: c.id, atype: 1, ext: c.ext }],
});

/** Starts the module under `ctx` (consent already allows it). Exported for tests. */
export function startIdLinking(ctx: ModuleContext): ModuleRun | undefined {
  const { host, settings } = ctx;
  const pd = settings.pd === undefined ? '' : settings.pd;
  if (typeof pd !== 'string') {
    host.warn('idLinking: off: pd not a string');
    return undefined;
  }
  // The provider takes hashes in `pd`: one holding a raw email (as it is or inside its Base64) is never sent.
  let pdText = pd;
  try {
    pdText = decodeBase64Loose(pd);
  } catch {
    /* not Base64: checked as it is */
  }
  if (hasEmail(pd) || hasEmail(pdText)) {
    host.warn('idLinking: off: pd holds a raw email');
    return undefined;
  }
  if (settings.partner !== undefined && settings.partner !== PARTNER) host.warn('idLinking: partner is always 102');
  const base = typeof settings.url === 'string' && settings.url ? settings.url.replace(/\/+$/, '') : DEFAULT_URL;
  const refreshMs =
    (Number(settings.refreshInSeconds) > 0 ? Number(settings.refreshInSeconds) : REFRESH_SECONDS) * 1000;
  const ttlMs = (Number(settings.expiryDays) > 0 ? Number(settings.expiryDays) : EXPIRY_DAYS) * 864e5;

  const read = (): CachedId | undefined => {
    try {
      const v = loadItem('localStorage', CACHE_KEY);
      const c = v ? (JSON.parse(v) as CachedId) : undefined;
      return c && typeof c.id === 'string' ? c : undefined;
    } catch {
      return undefined;
    }
  };
  let inflight: Promise<CachedId | undefined> | undefined;
  let failedAt = 0;
  let live = true;

  const request = (c: ConsentState, prev: CachedId | undefined): Promise<CachedId | undefined> => {
    const sig = consentParams(c);
    // Undefined fields drop out of the JSON.
    const body = {
      partner: PARTNER,
      o: 'eidkit',
      top: 1,
      // Origin and path only: a query string may hold an email (identity-link's URL parameter); a path holding one
      // is left out too (docs/wire-format.md#no-raw-email-in-urls).
      u: location.origin + (hasEmail(location.pathname) ? '/' : location.pathname),
      gdpr: c.gdprApplies ? 1 : 0,
      gdpr_consent: sig.gdpr_consent,
      us_privacy: sig.us_privacy,
      gpp_string: sig.gpp,
      gpp_sid: sig.gpp_sid,
      pd: pd || undefined,
      s: prev?.sig,
    };
    host.log('idLinking: asking', base);
    // A string body goes as text/plain;charset=UTF-8, a simple CORS request (no preflight round trip before the id).
    // It goes in a task of its own (a message: background tabs throttle timers to 1 s): building the request is
    // the most costly step of the tag's first task, and the ad call that waits for the id waits on the network anyway.
    return later(0)
      .then(() =>
        fetch(`${base}/${PARTNER}.json`, {
          method: 'POST',
          body: JSON.stringify(body),
          credentials: 'include',
          // As the ad calls: where the page URL holds an email, the Referer is the page origin alone.
          referrerPolicy: hasEmail(String(location)) ? 'origin' : '',
        }),
      )
      .then((r) => (r.ok ? r.json() : Promise.reject(new Error('HTTP ' + r.status))))
      .then(async (json: IdLinkingAnswer | null) => {
        const got = parseResponse(json);
        if (!got) throw new Error('no id in the answer');
        const entry: CachedId = {
          id: got.id,
          ext: got.ext,
          sig: got.sig,
          pd,
          gdpr: sig.gdpr_consent || '',
          refreshAt: Date.now() + (got.maxAgeSec ? got.maxAgeSec * 1000 : refreshMs),
        };
        // Consent may have been withdrawn while the request was out: then nothing is stored or sent.
        if (!live || !(await ctx.allowed())) return undefined;
        saveItem('localStorage', CACHE_KEY, JSON.stringify(entry), ttlMs);
        return entry;
      })
      .catch((e: unknown) => {
        failedAt = Date.now();
        host.warn('idLinking: request failed:', e);
        return undefined;
      })
      .finally(() => {
        inflight = undefined;
      });
  };

  return {
    eids(_call, c) {
      const cached = read();
      const fresh = cached && cached.pd === pd && cached.gdpr === (c.tcString || '') && cached.refreshAt > Date.now();
      if (!fresh && !inflight && Date.now() - failedAt > RETRY_AFTER_MS) inflight = request(c, cached);
      // A cached id made with other `pd` or consent is not sent; a merely stale one goes out while it refreshes.
      const usable = cached && cached.pd === pd && cached.gdpr === (c.tcString || '') ? cached : undefined;
      if (usable) return [toEid(usable)];
      return inflight ? inflight.then((e) => (e ? [toEid(e)] : [])) : [];
    },
    stop() {
      // The cached id goes with the module's keys (defineModule), not just its use.
      live = false;
    },
  };
}

/**
 * Match method from the provider's answer (`ext.linkType`): 2, linked through a deterministic signal such as a
 * login, is authenticated (mm 3); 1, linked through the provider's graph, is inferred (mm 5); without a link
 * the provider says nothing of how the id was matched, so mm stays unset. Exported for tests.
 */
export const idLinkingMm = (eid: Eid): number | undefined => {
  const link = eid.uids[0]?.ext?.linkType;
  return link === 2 ? 3 : link === 1 ? 5 : undefined;
};

/** The module's definition (exported for tests, which make fresh instances of it). */
export const idLinkingModule: ModuleDefinition = {
  name: 'idLinking',
  gvl: 131,
  start: startIdLinking,
  mm: idLinkingMm,
  ...storing([CACHE_KEY]),
};

/** The identifier-linking extension (TCF vendor 131, ID5). */
export const idLinking = defineModule(idLinkingModule);

registerExtension(idLinking);
