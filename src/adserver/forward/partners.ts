/**
 * Demand partners: who bid requests go to, and which eids a partner may
 * receive before any forwarding policy: every eid for a DSP, only its preferred provider's for a DMP. Shared by
 * the bid request builder (openrtb.ts) and the forwarding policy (policy.ts).
 * See docs/wire-format.md#forwarding-to-demand-partners.
 */
import { providerById, providerForSource } from '../../core/index.js';
import type { Eid, Provider } from '../../core/index.js';

/** A demand partner bid requests go to. */
export interface DemandPartner {
  /** Partner id, for your own bookkeeping and logs. */
  id: string;
  /**
   * OpenRTB version the partner reads. Default `'2.6'` (`user.eids`); `'2.5'` moves eids to `user.ext.eids`;
   * `'both'` writes both (and the privacy signals in both their 2.6 and 2.5 places), for a partner migrating.
   */
  openrtb?: '2.5' | '2.6' | 'both';
  /** The partner's IAB TCF Global Vendor List id: where GDPR applies, a forwarding policy needs its legal basis. */
  gvlVendorId?: number;
  /** `'dmp'` for a data partner: it receives only the eids of `preferredProvider`. Default `'dsp'`. */
  kind?: 'dsp' | 'dmp';
  /** A DMP's one preferred provider (registry id or source), agreed with the operator. Required for a DMP. */
  preferredProvider?: number | string;
}

/** The provider a DMP prefers, resolved through the registry; throws for a DMP without a registered one. */
export function preferredProviderOf(partner: DemandPartner): Provider {
  const p = partner.preferredProvider;
  const provider = typeof p === 'number' ? providerById(p) : providerForSource(p);
  if (provider.id === 0) {
    throw new TypeError(
      `DMP partner "${partner.id}" needs preferredProvider set to one registered provider (id or source)`,
    );
  }
  return provider;
}

/**
 * The eids a partner may receive: all of them for a DSP; for a DMP only those of its preferred provider.
 * The eid objects are passed through as they are (no copy, no change).
 */
export function eidsForPartner(eids: readonly Eid[], partner: DemandPartner): Eid[] {
  if ((partner.kind ?? 'dsp') !== 'dmp') return [...eids];
  const preferred = preferredProviderOf(partner);
  return eids.filter((e) => providerForSource(e.source).id === preferred.id);
}
