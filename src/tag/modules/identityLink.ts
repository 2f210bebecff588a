/**
 * Identity-link module (`setup({ modules: { identityLink: { placementId, ... } } })`).
 * Finds an email in the page's inputs (also inputs added after load) and/or a URL parameter, normalises and
 * SHA-256 hashes it, keeps the hash with an expiry, and emits it as a `hemsha256` eid. When the provider's
 * envelope is on the page (its `_lr_env` cookie / localStorage entry, or its script's `ats.retrieveEnvelope`),
 * it also emits the envelope as a `liveramp.com` eid. The raw email is never stored and never sent; nor is an
 * envelope holding one, or one too long (defineModule refuses such ids, the storage helpers oversized entries).
 * Page flag: `window.sas_disable_identityLink = true`.
 */
import type { Eid } from '../../core/index.js';
import { decodeBase64Loose } from '../../core/codec.js';
import {
  defineModule,
  registerExtension,
  type ModuleDefinition,
  type ModuleContext,
  type ModuleRun,
} from './_module.js';
import { normaliseEmail } from '../../core/pii.js';
import { HASH_KEY } from '../../core/module-keys.js';
import { sha256Hex } from './_sha256.js';
import { loadItem, readCookie, readLocal, saveItem, storing, type StorageType } from './_storage.js';

/** Where the module keeps the email hash (`storageType`). */
export { HASH_KEY };
/** How long a found email hash is kept: 30 days. */
export const HASH_TTL_MS = 30 * 864e5;
/** The provider's first-party envelope entry (cookie or localStorage). */
export const ENVELOPE_KEY = '_lr_env';

/** The module's settings after defaults; undefined (with a reason) when they do not let it run. */
export interface IdentityLinkSettings {
  placementId: number;
  cssSelectors: string[];
  detectionType: 'scrapeAndUrl' | 'scrape' | 'url';
  storageType: StorageType;
  urlParameter: string;
}

/** Applies the defaults (docs/wire-format.md#automatic-transfer-settings), checks each key; the settings or why not. */
export function readSettings(s: Record<string, unknown>): IdentityLinkSettings | string {
  const {
    placementId,
    cssSelectors,
    detectionType = 'scrapeAndUrl',
    storageType = 'localStorage',
    urlParameter = 'email',
  } = s;
  if (typeof placementId !== 'number' || !Number.isFinite(placementId)) return 'placementId (number) is mandatory';
  if (!['scrapeAndUrl', 'scrape', 'url'].includes(detectionType as string)) return 'bad detectionType';
  if (storageType !== 'localStorage' && storageType !== 'cookie') return 'bad storageType';
  if (typeof urlParameter !== 'string' || !urlParameter) return 'bad urlParameter';
  const selectors = cssSelectors ?? ['input[type=text]', 'input[type=email]'];
  try {
    // Only an array of strings; querySelector then throws on an invalid selector, and so on an empty list or an
    // empty string in it (`''`, `'a,'`).
    if (!Array.isArray(selectors) || !selectors.every((x) => typeof x === 'string')) throw Error();
    document.querySelector(selectors.join());
  } catch {
    return 'bad cssSelectors';
  }
  return {
    placementId,
    cssSelectors: selectors,
    detectionType: detectionType as IdentityLinkSettings['detectionType'],
    storageType,
    urlParameter,
  };
}

/** The envelope's JSON, stored or from the script: `{ envelope }` (checked to be a non-empty string). */
interface Envelope {
  envelope?: unknown;
}

/** Decodes the provider's stored envelope: Base64 (standard or URL-safe) of JSON `{ timestamp, version, envelope }`. */
export function decodeEnvelope(raw: string | undefined): string | undefined {
  if (!raw) return undefined;
  try {
    const parsed = JSON.parse(decodeBase64Loose(raw)) as Envelope;
    return typeof parsed.envelope === 'string' && parsed.envelope ? parsed.envelope : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The provider's script on the page (`window.ats`), as far as the module uses it: a page may hold anything under
 * that name, so `retrieveEnvelope` is checked to be a function and its answer is checked too.
 */
interface AtsWindow {
  ats?: { retrieveEnvelope?: unknown } | null;
}

/** `ats.retrieveEnvelope(callback)`: answers through the callback, and some versions return a promise as well. */
type RetrieveEnvelope = (cb: (v: unknown) => void) => unknown;

// The provider's script API answers with a JSON string `{ envelope }` through a callback; it may never answer,
// so the host's eidsTimeout bound is what limits the wait.
function envelopeFromScript(w: AtsWindow): Promise<string | undefined> | undefined {
  const ats = w.ats;
  if (!ats || typeof ats.retrieveEnvelope !== 'function') return undefined;
  return new Promise((resolve) => {
    const done = (v: unknown) => {
      try {
        const e = typeof v === 'string' ? (JSON.parse(v) as Envelope).envelope : (v as Envelope | null)?.envelope;
        resolve(typeof e === 'string' && e ? e : undefined);
      } catch {
        resolve(undefined);
      }
    };
    try {
      const r = (ats.retrieveEnvelope as RetrieveEnvelope)(done) as PromiseLike<unknown> | null | undefined;
      if (r && typeof r.then === 'function') r.then(done, () => resolve(undefined));
    } catch {
      resolve(undefined);
    }
  });
}

/** Starts detection under `ctx` (consent already allows it). Exported for tests. */
export function startIdentityLink(ctx: ModuleContext): ModuleRun | undefined {
  const { host } = ctx;
  const cfg = readSettings(ctx.settings);
  if (typeof cfg === 'string') {
    host.warn('identityLink: off:', cfg);
    return undefined;
  }
  const w = window as unknown as AtsWindow;
  // A stored value that is not a SHA-256 hex digest is not ours to send (a page may write anything there).
  let hash: string | undefined = loadItem(cfg.storageType, HASH_KEY);
  if (hash && !/^[\da-f]{64}$/.test(hash)) hash = undefined;
  let pending: Promise<void> | undefined;
  let live = true;
  const selector = cfg.cssSelectors.join();

  const consider = (raw: unknown) => {
    const email = normaliseEmail(raw);
    if (!email) return;
    pending = sha256Hex(email).then(async (h) => {
      // Consent is asked again before every write: withdrawn since the last ad call means no storage and no id.
      if (!live || h === hash || !(await ctx.allowed())) return;
      hash = h;
      saveItem(cfg.storageType, HASH_KEY, h, HASH_TTL_MS);
      host.log('identityLink: email found, hash kept');
    });
  };
  const scan = (root: ParentNode | Element) => {
    if ((root as Element).matches?.(selector)) consider((root as HTMLInputElement).value);
    root.querySelectorAll?.(selector).forEach((el) => consider((el as HTMLInputElement).value));
  };

  if (cfg.detectionType !== 'scrape') {
    try {
      consider(new URLSearchParams(location.search).get(cfg.urlParameter));
    } catch {
      /* no readable URL */
    }
  }
  let observer: MutationObserver | undefined;
  const onInput = (e: Event) =>
    host.guard(() => {
      const t = e.target as HTMLInputElement | null;
      if (t && t.matches?.(selector)) consider(t.value);
    }, 'identityLink');
  if (cfg.detectionType !== 'url') {
    scan(document);
    // Typed emails: `change` and `focusout` bubble to the document, so inputs added later are covered too.
    document.addEventListener('change', onInput, true);
    document.addEventListener('focusout', onInput, true);
    // Forms added after load may arrive pre-filled.
    if (typeof MutationObserver === 'function') {
      observer = new MutationObserver((records) =>
        host.guard(
          () => records.forEach((r) => r.addedNodes.forEach((n) => n.nodeType === 1 && scan(n as Element))),
          'identityLink',
        ),
      );
      observer.observe(document.documentElement, { childList: true, subtree: true });
    }
  }

  return {
    async eids() {
      if (pending) await pending;
      const out: Eid[] = [];
      if (hash) out.push({ source: 'hemsha256', uids: [{ id: hash, atype: 3 }] });
      const envelope =
        (await envelopeFromScript(w)) || decodeEnvelope(readCookie(ENVELOPE_KEY) || readLocal(ENVELOPE_KEY));
      if (envelope) out.push({ source: 'liveramp.com', uids: [{ id: envelope, atype: 3 }] });
      return out;
    },
    stop() {
      // The stored hash goes with the module's keys (defineModule), not just its use.
      live = false;
      observer?.disconnect();
      document.removeEventListener('change', onInput, true);
      document.removeEventListener('focusout', onInput, true);
    },
  };
}

/** The module's definition (exported for tests, which make fresh instances of it). */
export const identityLinkModule: ModuleDefinition = {
  name: 'identityLink',
  gvl: 97,
  start: startIdentityLink,
  mm: () => 3,
  ...storing([HASH_KEY]),
};

/**
 * The identity-link extension (TCF vendor 97, LiveRamp). Its ids come from an email the user typed or logged in
 * with (the hash, and the envelope the provider built from it): match method 3, authenticated.
 */
export const identityLink = defineModule(identityLinkModule);

registerExtension(identityLink);
