/**
 * Header-bidding bridge (the unified auction): before each ad call, reads the eids of the
 * publisher's Prebid.js user id module (`pbjs.getUserIdsAsEids()`; `modules.prebid.global` names another global)
 * and hands them to the host, which merges them under the page's own eids. When it has none yet and the library
 * offers `getUserIdsAsync`, the bridge waits for its ids (within the host's bound).
 * Page flag: `window.sas_disable_prebid = true`.
 */
import type { Eid } from '../../core/index.js';
import {
  defineModule,
  registerExtension,
  type ModuleDefinition,
  type ModuleContext,
  type ModuleRun,
} from './_module.js';

/**
 * The Prebid.js global, as far as the bridge uses it; a page may hold anything under that name, so each method is
 * checked to be a function before it is called, and the eids it returns are checked to be an array.
 */
interface PrebidGlobal {
  getUserIdsAsEids?: unknown;
  getUserIdsAsync?: unknown;
}

/** Starts the bridge under `ctx`. Exported for tests. */
export function startPrebid(ctx: ModuleContext): ModuleRun | undefined {
  const name = ctx.settings.global === undefined ? 'pbjs' : ctx.settings.global;
  if (typeof name !== 'string' || !/^[A-Za-z_$][\w$]*$/.test(name)) {
    ctx.host.warn('prebid: off: global must be a JavaScript identifier');
    return undefined;
  }
  return {
    async eids() {
      const lib = (window as unknown as Record<string, PrebidGlobal | null | undefined>)[name];
      if (!lib || typeof lib.getUserIdsAsEids !== 'function') return [];
      const read = () => {
        const eids = (lib.getUserIdsAsEids as () => unknown)();
        return Array.isArray(eids) ? (eids as Eid[]) : [];
      };
      const now = read();
      // Nothing yet: the library may still be fetching its ids; wait for them (the host bounds the wait).
      if (now.length || typeof lib.getUserIdsAsync !== 'function') return now;
      await (lib.getUserIdsAsync as () => unknown)();
      return read();
    },
  };
}

/** The module's definition (exported for tests, which make fresh instances of it). */
export const prebidModule: ModuleDefinition = { name: 'prebid', gvl: 45, start: startPrebid, mm: false };

/**
 * The header-bidding bridge (reads ids the page already has; the ad service is TCF vendor 45). Its eids go on
 * unchanged (`mm: false`): Prebid's id modules set their own inserter, matcher and mm.
 */
export const prebid = defineModule(prebidModule);

registerExtension(prebid);
