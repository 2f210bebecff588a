/**
 * A bounded reader of GPP's US sections (docs/wire-format.md#us-state-privacy): fixed-width fields, read straight from
 * the Base64url text in one pass. The IAB library (`@iabgpp/cmpapi`) reads the same sections through strings of
 * '0' and '1' characters, tens of microseconds a section; this reader costs about one, so the eight sections a GET
 * call may carry stay far inside its CPU budget. The property test holds it to the library on random strings.
 */
import { bitReader, OutOfBits } from './bits.js';
import type { BitReader } from './bits.js';
import type { UsFields } from '../../core/index.js';

/**
 * Each US section's core segment, field by field in the order of the IAB's GPP specification: a name alone is a
 * 2-bit integer, except the 6-bit version (`Version`, `MspaVersion`); `Name:n` is a list of n 2-bit integers; `Name:1`
 * one 2-bit integer read as a list. The second segment: `gpc` (a 2-bit segment type, then the `Gpc` bit), `sdc` (the
 * newest states' sensitive-data consents, a list of 8), or none.
 */
const NOTICES_TA = 'SaleOptOutNotice TargetedAdvertisingOptOutNotice';
const OPT_OUTS_TA = 'SaleOptOut TargetedAdvertisingOptOut';
const MSPA = 'MspaCoveredTransaction MspaOptOutOptionMode MspaServiceProviderMode';
/** The states from Florida on: ProcessingNotice, the two notices and opt-outs, sensitive data, children, consent. */
const NEWER = (notice: string, sensitive: number, kids: string) =>
  `Version ${notice} ${NOTICES_TA} ${OPT_OUTS_TA} SensitiveDataProcessing:${sensitive} ${kids} AdditionalDataProcessingConsent ${MSPA}`;
/** The newest states (Maryland on): the MSPA fields first. */
const NEWEST = (rest: string) =>
  `MspaVersion MspaCoveredTransaction MspaMode ProcessingNotice ${NOTICES_TA} ${OPT_OUTS_TA} ${rest}AdditionalDataProcessingConsent`;
const LAYOUTS: Record<string, [string, ('gpc' | 'sdc')?]> = {
  usca: [
    `Version SaleOptOutNotice SharingOptOutNotice SensitiveDataLimitUseNotice SaleOptOut SharingOptOut SensitiveDataProcessing:9 KnownChildSensitiveDataConsents:2 PersonalDataConsents ${MSPA}`,
    'gpc',
  ],
  usva: [
    `Version SharingNotice ${NOTICES_TA} ${OPT_OUTS_TA} SensitiveDataProcessing:8 KnownChildSensitiveDataConsents ${MSPA}`,
  ],
  usco: [
    `Version SharingNotice ${NOTICES_TA} ${OPT_OUTS_TA} SensitiveDataProcessing:7 KnownChildSensitiveDataConsents ${MSPA}`,
    'gpc',
  ],
  usut: [
    `Version SharingNotice ${NOTICES_TA} SensitiveDataProcessingOptOutNotice ${OPT_OUTS_TA} SensitiveDataProcessing:8 KnownChildSensitiveDataConsents ${MSPA}`,
  ],
  usct: [
    `Version SharingNotice ${NOTICES_TA} ${OPT_OUTS_TA} SensitiveDataProcessing:8 KnownChildSensitiveDataConsents:3 ${MSPA}`,
    'gpc',
  ],
  usfl: [NEWER('ProcessingNotice', 8, 'KnownChildSensitiveDataConsents:3')],
  usmt: [NEWER('SharingNotice', 8, 'KnownChildSensitiveDataConsents:3'), 'gpc'],
  usor: [NEWER('ProcessingNotice', 11, 'KnownChildSensitiveDataConsents:3'), 'gpc'],
  ustx: [NEWER('ProcessingNotice', 8, 'KnownChildSensitiveDataConsents'), 'gpc'],
  usde: [NEWER('ProcessingNotice', 9, 'KnownChildSensitiveDataConsents:5'), 'gpc'],
  usia: [
    `Version ProcessingNotice ${NOTICES_TA} SensitiveDataOptOutNotice ${OPT_OUTS_TA} SensitiveDataProcessing:8 KnownChildSensitiveDataConsents ${MSPA}`,
    'gpc',
  ],
  usne: [NEWER('ProcessingNotice', 8, 'KnownChildSensitiveDataConsents'), 'gpc'],
  usnh: [NEWER('ProcessingNotice', 8, 'KnownChildSensitiveDataConsents:3'), 'gpc'],
  usnj: [NEWER('ProcessingNotice', 10, 'KnownChildSensitiveDataConsents:5'), 'gpc'],
  ustn: [NEWER('ProcessingNotice', 8, 'KnownChildSensitiveDataConsents'), 'gpc'],
  usmn: [NEWER('ProcessingNotice', 8, 'KnownChildSensitiveDataConsents'), 'gpc'],
  usmd: [NEWEST(''), 'gpc'],
  usin: [NEWEST('KnownChildSensitiveDataConsents '), 'sdc'],
  usky: [NEWEST('KnownChildSensitiveDataConsents '), 'sdc'],
  usri: [NEWEST('KnownChildSensitiveDataConsents '), 'sdc'],
};
/** The national section: version 2 (16 sensitive categories, 3 child consents); see {@link readUsSection}. */
const USNAT = (sensitive: number, kids: number) =>
  `Version SharingNotice SaleOptOutNotice SharingOptOutNotice TargetedAdvertisingOptOutNotice SensitiveDataProcessingOptOutNotice SensitiveDataLimitUseNotice SaleOptOut SharingOptOut TargetedAdvertisingOptOut SensitiveDataProcessing:${sensitive} KnownChildSensitiveDataConsents:${kids} PersonalDataConsents ${MSPA}`;
LAYOUTS.usnat = [USNAT(16, 3), 'gpc'];
const USNAT_V1 = USNAT(12, 2);

/** Parsed layouts: per field, its name and its count (0: one integer). */
const parsed = new Map<string, [string, number][]>();
const fieldsOf = (layout: string): [string, number][] => {
  let f = parsed.get(layout);
  if (!f) {
    f = layout.split(' ').map((d) => {
      const [name, n] = d.split(':');
      return [name, n ? Number(n) : 0];
    });
    parsed.set(layout, f);
  }
  return f;
};

function readFields(r: BitReader, layout: string, out: UsFields): void {
  for (const [name, n] of fieldsOf(layout)) {
    if (!n) out[name] = r.int(name === 'Version' || name === 'MspaVersion' ? 6 : 2);
    else {
      const list: number[] = [];
      for (let i = 0; i < n; i++) list.push(r.int(2));
      out[name] = list;
    }
  }
}

/**
 * The fields of US section `name` from its text in a GPP string (`BVVqAAIAAgA.QA`), or null when it cannot be read
 * (not Base64url, too short, an unknown section). `uspv1` is its 4 characters. The national section is read in the
 * layout its length says (60 or 66 bits: version 1's 12 categories and 2 child consents; else version 2's 16 and 3),
 * whatever its version field says: a version 1 section written in the version 2 layout keeps its last entries
 * (the IAB library hides them; other readers see them, and they may refuse).
 */
export function readUsSection(name: string, text: string): UsFields | null {
  if (name === 'uspv1') {
    return text.length === 4
      ? { Version: Number(text[0]), Notice: text[1], OptOutSale: text[2], LspaCovered: text[3] }
      : null;
  }
  const layout = LAYOUTS[name] as [string, ('gpc' | 'sdc')?] | undefined;
  if (!layout) return null;
  const segments = text.split('.');
  const core = bitReader(segments[0]);
  if (!core) return null;
  const out: UsFields = {};
  try {
    const bits = segments[0].length * 6;
    readFields(core, name === 'usnat' && (bits === 60 || bits === 66) ? USNAT_V1 : layout[0], out);
    if (layout[1] === 'gpc') {
      out.Gpc = false;
      if (segments.length > 1) {
        const gpc = bitReader(segments[1]);
        if (!gpc) return null;
        out.GpcSegmentType = gpc.int(2);
        out.Gpc = gpc.bit();
      }
    } else if (layout[1] === 'sdc' && segments.length > 1) {
      const sdc = bitReader(segments[1]);
      if (!sdc) return null;
      readFields(sdc, 'SensitiveDataProcessing:8', out);
    }
  } catch (e) {
    if (e instanceof OutOfBits) return null;
    throw e;
  }
  return out;
}
