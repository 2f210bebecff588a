/**
 * Provenance of module eids (OpenRTB 2.6 §3.2.27 EID `inserter`, `mm`): who put an id on the ad call
 * and how it was matched. Buyers value ids by it and ad servers' permission rules match on it. Only module
 * eids are stamped: eids the page sets with `setEids` go out exactly as given.
 */
import type { Eid } from '../../core/index.js';

/**
 * The page's registrable domain (`news.example.co.uk` → `example.co.uk`), found the way browsers define it
 * without shipping the public suffix list: the shortest parent domain a cookie can be set on (browsers refuse
 * cookies on public suffixes). The probe cookie is removed at once. An IP address or single-label host is
 * returned as it is. Only called while consent allows the module (device access, TCF purpose 1).
 */
export function registrableDomain(d: Document = document): string {
  const host = d.location.hostname;
  const labels = host.split('.');
  if (labels.length < 3 || /^[\d.]+$|:/.test(host)) return host;
  for (let i = labels.length - 2; i > 0; i--) {
    const domain = labels.slice(i).join('.');
    const probe = '_sas_rd=1;path=/;domain=' + domain;
    d.cookie = probe;
    if (d.cookie.includes('_sas_rd=1')) {
      d.cookie = probe + ';max-age=0';
      return domain;
    }
  }
  return host;
}

/**
 * The module's eids with `inserter` (the configured one, else the page's registrable domain) and `mm` (from the
 * module's `mm(eid)`), each only where the provider left it unset. Never changes the given objects.
 */
export function stampProvenance(
  eids: readonly Eid[],
  inserter: () => string,
  mm?: (eid: Eid) => number | undefined,
): Eid[] {
  return eids.map((e) => {
    const m = e.mm ?? mm?.(e);
    return { ...e, inserter: e.inserter || inserter(), ...(m === undefined ? {} : { mm: m }) };
  });
}
