/**
 * Ad-side id reader (`criteo.com`). Transfers the provider's ad-side id (`cto_bidid`,
 * cookie or localStorage) only when the publisher already runs the provider's script (`window.criteo_pubtag` or
 * `window.Criteo`); it never loads that script and never sends the marketing-side bundle (`cto_bundle`).
 * Page flag: `window.sas_disable_criteo = true`.
 */
import { defineModule, registerExtension, type ModuleDefinition, type ModuleRun } from './_module.js';
import { readCookie, readLocal } from './_storage.js';

/** The storage key of the provider's ad-side id. */
export const BIDID_KEY = 'cto_bidid';

/** Reads the ad-side id when the provider's script is on the page. Exported for tests. */
export function startCriteo(): ModuleRun {
  const w = window as unknown as Record<string, unknown>;
  return {
    eids() {
      if (!w.criteo_pubtag && !w.Criteo) return [];
      const id = readCookie(BIDID_KEY) || readLocal(BIDID_KEY);
      return id ? [{ source: 'criteo.com', uids: [{ id, atype: 1 }] }] : [];
    },
  };
}

/** The module's definition (exported for tests, which make fresh instances of it). */
export const criteoModule: ModuleDefinition = { name: 'criteo', gvl: 91, start: startCriteo };

/** The ad-side id reader (TCF vendor 91, Criteo). */
export const criteo = defineModule(criteoModule);

registerExtension(criteo);
