/**
 * Unified id reader: transfers the advertising token of the Unified ID 2.0 SDK
 * already on the page (`window.__uid2` → `uidapi.com`, for US users) or of its European counterpart
 * (`window.__euid` → `euid.eu`). It never loads either SDK. Where GDPR applies only the European id is sent:
 * UID 2.0 is not offered to European users. Page flag: `window.sas_disable_uid2 = true`.
 */
import type { Eid } from '../../core/index.js';
import { defineModule, registerExtension, type ModuleDefinition, type ModuleRun } from './_module.js';

/**
 * A UID2 or EUID SDK (`window.__uid2`, `window.__euid`), as far as the module uses it; a page may hold anything
 * under those names, so each getter is checked to be a function and each token to be a non-empty string.
 */
interface UidSdk {
  getAdvertisingToken?: unknown;
  getAdvertisingTokenAsync?: unknown;
}

// The SDK's synchronous getter, else its async one (the host's bound limits the wait).
function token(sdk: UidSdk | null | undefined): string | undefined | Promise<string | undefined> {
  if (!sdk) return undefined;
  const ok = (t: unknown) => (typeof t === 'string' && t ? t : undefined);
  try {
    const now =
      typeof sdk.getAdvertisingToken === 'function' ? ok((sdk.getAdvertisingToken as () => unknown)()) : undefined;
    if (now || typeof sdk.getAdvertisingTokenAsync !== 'function') return now;
    return Promise.resolve((sdk.getAdvertisingTokenAsync as () => unknown)()).then(ok, () => undefined);
  } catch {
    return undefined;
  }
}

/** Reads the tokens of the SDKs on the page. Exported for tests. */
export function startUid2(): ModuleRun {
  const w = window as unknown as { __uid2?: UidSdk | null; __euid?: UidSdk | null };
  return {
    async eids(_call, c) {
      const out: Eid[] = [];
      const euid = await token(w.__euid);
      if (euid) out.push({ source: 'euid.eu', uids: [{ id: euid, atype: 3 }] });
      if (c.gdprApplies !== true) {
        const uid2 = await token(w.__uid2);
        if (uid2) out.push({ source: 'uidapi.com', uids: [{ id: uid2, atype: 3 }] });
      }
      return out;
    },
  };
}

/** The module's definition (exported for tests, which make fresh instances of it). */
export const uid2Module: ModuleDefinition = { name: 'uid2', gvl: 21, start: startUid2 };

/** The unified id reader (TCF vendor 21, The Trade Desk). */
export const uid2 = defineModule(uid2Module);

registerExtension(uid2);
