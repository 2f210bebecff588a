/**
 * What a module read from the page, checked before it goes on an ad call (docs/tag.md#what-modules-read-and-refuse):
 * an id longer than {@link MAX_ID_LENGTH} characters, or one that looks like raw personal data (an email, a phone
 * number: core/pii.ts), is refused on its own; the module's other ids still go.
 */
import type { Eid } from '../../core/index.js';
import { looksPersonal, MAX_ID_LENGTH } from '../../core/pii.js';

/** True when an id may not go on a call: longer than the cap, or raw personal data. */
const refused = (id: unknown): boolean => typeof id == 'string' && (id.length > MAX_ID_LENGTH || looksPersonal(id));

/**
 * The module's eids without the uids whose id is refused (each named in debug), and without an eid left with no
 * uid. The given objects are never changed (the Prebid bridge hands over Prebid's own). Anything that is not an eid
 * goes on as it is: the host's validation drops it, with its message.
 */
export function refuseUnsafe(eids: Eid[], warn: (...args: unknown[]) => void): Eid[] {
  const out: Eid[] = [];
  for (const e of eids) {
    try {
      const uids = e.uids.filter((u) => {
        const bad = refused(u && u.id);
        if (bad) warn(e.source, 'id refused: too long or personal data');
        return !bad;
      });
      if (uids.length) out.push(uids.length == e.uids.length ? e : { ...e, uids });
    } catch {
      out.push(e);
    }
  }
  return out;
}
