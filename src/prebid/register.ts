/** Registering the adapter on a Prebid.js instance through its public API (no copy of Prebid's code). */
import { createSpec } from './spec.js';
import type { EidkitSpec, SpecOptions } from './spec.js';

/** The parts of the Prebid global `register` uses. */
export interface PrebidGlobal {
  registerBidAdapter(adapter: null, code: string, spec: EidkitSpec): void;
  getConfig?(key: string): unknown;
}

/**
 * Registers the eidkit bidder on `pbjs` (code `eidkit` and GVL id 45 unless given) and returns its spec.
 * Messages go to the console like Prebid's own, only when Prebid's debug mode is on.
 * @example import pbjs from 'prebid.js'; import { register } from 'eidkit/prebid'; register(pbjs, { code: 'eidkit' });
 */
export function register(pbjs: PrebidGlobal, options: Omit<SpecOptions, 'log'> = {}): EidkitSpec {
  const spec = createSpec({
    ...options,
    log(m) {
      if (pbjs.getConfig?.('debug')) console.warn('WARNING: ' + spec.code + ': ' + m);
    },
  });
  pbjs.registerBidAdapter(null, spec.code, spec);
  return spec;
}
