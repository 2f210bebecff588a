// Encodes TCF v2.2 consent strings with npm @iabtcf/core, for the tests and the demo CMP (demo/modules/cmp-entry.mjs).
import { GVL, TCModel, TCString } from '@iabtcf/core';
import { vendorList } from './gvl.mjs';

/** The CMP id the demo's CMP registers with (`new CmpApi(CMP_ID, CMP_VERSION, true)`). */
export const CMP_ID = 10;
/** The demo CMP's version. */
export const CMP_VERSION = 1;

/**
 * A service-specific TC string with consent for `purposes` and `vendors`, and legitimate interest for `vendorLI`
 * and `purposeLI`. As TCF v2.3 requires, it carries the disclosed-vendors segment (every vendor of the list): the
 * core, the disclosed vendors, the publisher's segment.
 * @example encodeTcString([1, 2], [45, 131])
 */
export function encodeTcString(purposes, vendors, vendorLI = [], purposeLI = []) {
  const m = new TCModel(new GVL(vendorList));
  m.cmpId = CMP_ID;
  m.cmpVersion = CMP_VERSION;
  m.isServiceSpecific = true;
  m.purposeConsents.set(purposes);
  m.vendorConsents.set(vendors);
  m.vendorLegitimateInterests.set(vendorLI);
  m.purposeLegitimateInterests.set(purposeLI);
  return TCString.encode(m, { segments: ['core', 'vendorsDisclosed', 'publisherTC'] });
}
