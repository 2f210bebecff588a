// Differential property test: random valid TC and GPP strings written by the IAB encoders (@iabtcf/core,
// @iabgpp/cmpapi), decided once by our bounded readers (createConsentDecoder) and once straight from the IAB
// libraries' own decoding. Every vendor's verdict and every US opt-out must be the same.
// CONSENT_PROPERTY_RUNS=20000 for a longer run (the default keeps `npm test` to a few seconds).
import { describe, expect, test } from 'vitest';
import fc from 'fast-check';
import { GppModel, HeaderV1 } from '@iabgpp/cmpapi';
import { GVL, PurposeRestriction, TCModel, TCString } from '@iabtcf/core';
import type { EncodingOptions } from '@iabtcf/core';
import { createConsentDecoder, parseVendorList } from '../../../src/adserver/index.js';
import type { TcfRules } from '../../../src/adserver/index.js';
import { readGppHeader } from '../../../src/adserver/consent/gpp-header.js';
import { usDenial } from '../../../src/core/index.js';
import { gppHeader } from './craft.js';
// @ts-expect-error: plain JS, the demo CMP's vendor list
import { vendorList } from '../../support/tcf/gvl.mjs';

const RUNS = Number(process.env.CONSENT_PROPERTY_RUNS) || 1000;
/** GPP strings cost more to encode (a TC string inside, half the time): half as many. */
const GPP_RUNS = Math.ceil(RUNS / 2);
/** A longer run gets a longer timeout (a few ms a string on a busy machine). */
const TIMEOUT = Math.max(20_000, RUNS * 30);

// A vendor list of 60 vendors with ids spread to 1,400 (the real list's range), each with its own purposes, so
// the encoder writes bitfields and ranges, and publisher restrictions of every type.
const template = Object.values(vendorList.vendors)[0] as Record<string, unknown>;
const VENDOR_IDS = [
  ...Array.from({ length: 50 }, (_, i) => 1 + i * 3 + (i % 2)),
  ...[700, 701, 702, 1000, 1199, 1200, 1350, 1398, 1399, 1400],
];
const vendors = Object.fromEntries(
  VENDOR_IDS.map((id, i) => [
    id,
    {
      ...template,
      id,
      name: `Vendor ${id}`,
      purposes: [1, 2, 3, 4, 7, 9].filter((_, j) => (i + j) % 3),
      legIntPurposes: [2, 7, 8, 10].filter((_, j) => (i + j) % 2),
      flexiblePurposes: i % 2 ? [2, 7] : [],
    },
  ]),
);
const gvl = new GVL({ ...vendorList, vendors });
/** Vendor ids asked about: every listed vendor, ids between them, and ids past the last one. */
const PROBES = [...new Set([...VENDOR_IDS, 3, 100, 451, 703, 999, 1401, 9000])];

const ids = (max: number) => fc.uniqueArray(fc.integer({ min: 1, max }), { maxLength: 12 });
/** Vendor sets that encode both ways: scattered ids (bitfields) and runs of the list (ranges). */
const vendorSet = fc.oneof(
  fc.subarray(VENDOR_IDS),
  fc
    .array(fc.tuple(fc.nat(VENDOR_IDS.length - 1), fc.nat(20)), { maxLength: 4 })
    .map((runs) => runs.flatMap(([i, n]) => VENDOR_IDS.slice(i, i + n))),
);
const tcModelArb = fc.record({
  purposeConsents: ids(11),
  purposeLI: ids(11),
  vendorConsents: vendorSet,
  vendorLI: vendorSet,
  restrictions: fc.array(
    fc.record({ purpose: fc.integer({ min: 1, max: 11 }), type: fc.constantFrom(0, 1, 2), vendors: vendorSet }),
    { maxLength: 5 },
  ),
  // Which segments follow the core: service-specific strings carry the publisher's; the others are forced in.
  segments: fc.subarray(['vendorsDisclosed', 'vendorsAllowed', 'publisherTC'] as const),
  allowed: vendorSet,
  publisher: fc.option(ids(11), { nil: undefined }),
});

function encodeTc(spec: typeof tcModelArb extends fc.Arbitrary<infer T> ? T : never): string {
  const m = new TCModel(gvl);
  m.cmpId = 10;
  m.cmpVersion = 1;
  m.isServiceSpecific = true;
  m.purposeConsents.set(spec.purposeConsents);
  m.purposeLegitimateInterests.set(spec.purposeLI);
  m.vendorConsents.set(spec.vendorConsents);
  m.vendorLegitimateInterests.set(spec.vendorLI);
  for (const r of spec.restrictions) {
    for (const v of r.vendors) m.publisherRestrictions.add(v, new PurposeRestriction(r.purpose, r.type));
  }
  m.vendorsAllowed.set(spec.allowed);
  if (spec.publisher) m.publisherConsents.set(spec.publisher);
  return TCString.encode(m, { segments: ['core', ...spec.segments] } as EncodingOptions);
}

/** The same vendor list compiled by our reader (the policy's `gvl`), and a later version the strings do not name. */
const gvlJson = { ...vendorList, vendors };
const ourList = parseVendorList(gvlJson);
const otherVersion = parseVendorList({ ...gvlJson, vendorListVersion: gvlJson.vendorListVersion + 1 });
const RULES: TcfRules[] = [
  {},
  { legitimateInterest: false },
  { purposes: [1, 7, 11] },
  { gvl: ourList },
  { gvl: ourList, purposes: [3, 7, 8], requiredPurposes: [7] },
  { gvl: otherVersion },
  { gvl: otherVersion, gvlVersionMissing: 'newest' },
];
/** Purposes legitimate interest may serve (TCF policy 4 and later): not 1, nor 3 to 6. */
const LI_PURPOSES = new Set([2, 7, 8, 9, 10, 11]);
const DISCLOSED_FROM = Date.UTC(2026, 2, 1);

/**
 * The verdict as the rule reads (docs/wire-format.md "Global Vendor List", docs/ad-server.md "Forwarding
 * policy"), straight from @iabtcf/core's model of the string and, with a list, its GVL's reading of the vendors.
 */
function iabMessage(m: TCModel, vendorId: number, rules: TcfRules): string | undefined {
  const li = rules.legitimateInterest ?? true;
  const purposes = rules.purposes ?? [2, 3, 4, 5, 6, 7, 8, 9, 10];
  const required = rules.requiredPurposes ?? [2];
  const say = (why: string) => `GDPR applies: ${why}`;
  let vendor: { purposes: number[]; legIntPurposes: number[]; flexiblePurposes: number[] } | undefined;
  let version = 0;
  if (rules.gvl) {
    const held = rules.gvl.latest()!;
    if (held.version !== m.vendorListVersion && rules.gvlVersionMissing !== 'newest') {
      return say(`the TC string names Global Vendor List version ${m.vendorListVersion}, which is not loaded`);
    }
    version = held.version;
    vendor = gvl.vendors[vendorId];
    if (!vendor) return say(`gvl vendor ${vendorId} is not in the Global Vendor List (version ${version})`);
  }
  const updated = Math.max(m.created.getTime(), m.lastUpdated.getTime());
  if (updated >= DISCLOSED_FROM && !m.vendorsDisclosed.has(vendorId)) {
    return say(
      `vendor ${vendorId} is not among the TC string's disclosed vendors (required of strings updated from 1 March 2026)`,
    );
  }
  const vc = m.vendorConsents.has(vendorId);
  const vli = li && m.vendorLegitimateInterests.has(vendorId);
  if (!vc && !vli) {
    const onlyLI = !li && m.vendorLegitimateInterests.has(vendorId);
    if (onlyLI)
      return say(`vendor ${vendorId} has legitimate interest only, and the policy requires consent in the TC string`);
    return say(`vendor ${vendorId} has no consent in the TC string`);
  }
  const rs = m.publisherRestrictions.getRestrictions(vendorId);
  const declared = (p: number) => !vendor || vendor.purposes.includes(p) || vendor.legIntPurposes.includes(p);
  // The basis the string alone gives a purpose (consent, legitimate interest), then within the declarations.
  const byString = (p: number) => {
    const types = rs.filter((r) => r.purposeId === p).map((r) => r.restrictionType as number);
    if (types.includes(0)) return { consent: false, li: false };
    return {
      consent: vc && !types.includes(2) && m.purposeConsents.has(p),
      li: vli && LI_PURPOSES.has(p) && !types.includes(1) && m.purposeLegitimateInterests.has(p),
    };
  };
  const basis = (p: number) => {
    const flexible = !!vendor?.flexiblePurposes.includes(p);
    const onConsent = !vendor || vendor.purposes.includes(p) || (flexible && vendor.legIntPurposes.includes(p));
    const onLI = !vendor || vendor.legIntPurposes.includes(p) || (flexible && vendor.purposes.includes(p));
    const s = byString(p);
    return (s.consent && onConsent) || (s.li && onLI);
  };
  /** The refusal for purposes `wanted` without a basis: the list's when the string alone gives one. */
  const why = (wanted: readonly number[], p?: number) => {
    const lost = wanted.filter((q) => byString(q).consent || byString(q).li).sort((a, b) => a - b)[0];
    if (lost !== undefined && !declared(lost)) {
      return say(`gvl vendor ${vendorId} does not declare purpose ${lost} (list version ${version})`);
    }
    if (lost !== undefined) {
      const on = byString(lost).consent ? 'consent' : 'legitimate interest';
      return say(
        `gvl vendor ${vendorId} does not declare purpose ${lost} on ${on} (list version ${version}), the basis the TC string gives`,
      );
    }
    if (p !== undefined) {
      const within = rs.some((r) => r.purposeId === p) ? ', within the publisher restrictions' : '';
      return say(`vendor ${vendorId} has no legal basis for purpose ${p} in the TC string${within}`);
    }
    const within = rs.length ? ', within the publisher restrictions' : '';
    return say(
      `vendor ${vendorId} has no legal basis for any of purposes ${purposes.join(', ')} in the TC string${within}`,
    );
  };
  if (!purposes.some(basis)) {
    if (!purposes.some(declared)) {
      return say(`gvl vendor ${vendorId} declares none of purposes ${purposes.join(', ')} (list version ${version})`);
    }
    return why(purposes);
  }
  for (const p of [...required].sort((a, b) => a - b)) {
    if (basis(p)) continue;
    if (!declared(p)) return say(`gvl vendor ${vendorId} does not declare purpose ${p} (list version ${version})`);
    return why([p], p);
  }
  return undefined;
}

describe('the bounded readers decide as the IAB libraries do', () => {
  test(
    `random TC strings from @iabtcf/core (${RUNS} runs): the same verdict for every vendor`,
    () => {
      const decoders = RULES.map((r) => createConsentDecoder(r));
      fc.assert(
        fc.property(tcModelArb, fc.nat(RULES.length - 1), (spec, i) => {
          const tc = encodeTc(spec);
          const m = TCString.decode(tc);
          const rules = RULES[i];
          const decoded = decoders[i].decode({ gdpr: 1, gdprConsent: tc });
          const ours = PROBES.map((v) => decoders[i].refusal(decoded, v)?.message);
          const theirs = PROBES.map((v) => iabMessage(m, v, rules));
          // One comparison per string (an expect per vendor would cost more than the decoding).
          if (ours.some((o, j) => o !== theirs[j])) expect({ tc, rules, ours }).toEqual({ tc, rules, ours: theirs });
        }),
        { numRuns: RUNS },
      );
    },
    TIMEOUT,
  );

  const usSections = fc.record(
    {
      usnat: fc.record({ SaleOptOut: fc.nat(2), SharingOptOut: fc.nat(2), TargetedAdvertisingOptOut: fc.nat(2) }),
      usca: fc.record({ SaleOptOut: fc.nat(2), SharingOptOut: fc.nat(2) }),
      usva: fc.record({ SaleOptOut: fc.nat(2), TargetedAdvertisingOptOut: fc.nat(2) }),
      usco: fc.record({ SaleOptOut: fc.nat(2), TargetedAdvertisingOptOut: fc.nat(2) }),
      ustx: fc.record({ SaleOptOut: fc.nat(2) }),
      uspv1: fc.record({ OptOutSale: fc.constantFrom('Y', 'N') }),
    },
    { requiredKeys: [] },
  );
  const gppArb = fc.record({
    us: usSections,
    tcf: fc.option(tcModelArb, { nil: undefined }),
    sid: fc.option(fc.subarray([2, 6, 7, 8, 9, 10, 16]), { nil: undefined }),
  });
  const SECTION_IDS: Record<string, number> = { uspv1: 6, usnat: 7, usca: 8, usva: 9, usco: 10, ustx: 16 };

  test(
    `random GPP strings from @iabgpp/cmpapi (${GPP_RUNS} runs): the same US verdicts and EU verdicts`,
    () => {
      const d = createConsentDecoder();
      fc.assert(
        fc.property(gppArb, ({ us, tcf, sid }) => {
          const w = new GppModel();
          for (const [section, fields] of Object.entries(us)) {
            for (const [k, v] of Object.entries(fields)) w.setFieldValue(section, k, v);
          }
          if (tcf) w.decodeSection('tcfeuv2', encodeTc(tcf));
          if (!w.getSectionIds().length) return;
          const gpp = w.encode();
          // The IAB side: the library's model read directly.
          const m = new GppModel(gpp);
          // The first reason of each applicable US section, from the library's own reading of the section.
          const expected: { section: string; field: string }[] = [];
          for (const section of Object.keys(us)) {
            const id = SECTION_IDS[section];
            if (!m.getSectionIds().includes(id) || (sid && !sid.includes(id))) continue;
            const denial = usDenial(section, m.getSection(section) as Record<string, unknown>);
            if (denial) expected.push({ section, field: /^[A-Za-z]+/.exec(denial)![0] });
          }
          const order = (a: { section: string; field: string }[]) => a.map((o) => `${o.section}.${o.field}`).sort();
          const decoded = d.decode({ gpp, ...(sid ? { gppSid: sid } : {}) });
          expect(order(decoded.usOptOuts)).toEqual(order(expected));
          // A section named applicable that the string does not hold fails closed (the EU and Canadian TCF aside).
          const missing = sid?.find((id) => id !== 2 && id !== 5 && !m.getSectionIds().includes(id));
          if (missing === undefined) expect(decoded.gppProblem).toBeUndefined();
          else expect(decoded.gppProblem).toMatch(new RegExp(`names section ${missing}, which the GPP string`));
          const header = readGppHeader(gpp);
          expect(header && 'sectionIds' in header ? header.sectionIds : header).toEqual(m.getSectionIds());
          // The EU section where it applies: the same TC verdicts as @iabtcf/core's.
          if (tcf && (!sid || sid.includes(2))) {
            const eu = d.decode({ gdpr: 1, gpp, ...(sid ? { gppSid: sid } : {}) });
            const tc = TCString.decode(m.encodeSectionById(2));
            const ours = PROBES.map((v) => d.refusal({ ...eu, usOptOuts: [], gppProblem: undefined }, v)?.message);
            const theirs = PROBES.map((v) => iabMessage(tc, v, {}));
            if (ours.some((o, j) => o !== theirs[j])) expect(ours).toEqual(theirs);
          }
        }),
        { numRuns: GPP_RUNS },
      );
    },
    TIMEOUT,
  );

  test(
    `random GPP headers, any section ids up to the cap (${RUNS} runs): the ids @iabgpp/cmpapi reads`,
    () => {
      const idLists = fc
        .uniqueArray(fc.integer({ min: 1, max: 255 }), { minLength: 1, maxLength: 8 })
        .map((a) => a.sort((x, y) => x - y));
      fc.assert(
        fc.property(idLists, fc.boolean(), (list, asRanges) => {
          // Runs of consecutive ids as ranges, or every id on its own: both are valid headers.
          const entries: (number | [number, number])[] = [];
          for (const id of list) {
            const last = entries[entries.length - 1];
            if (asRanges && Array.isArray(last) && last[1] === id - 1) last[1] = id;
            else if (asRanges && typeof last === 'number' && last === id - 1) entries[entries.length - 1] = [last, id];
            else entries.push(id);
          }
          const header = gppHeader(entries);
          expect(new HeaderV1(header).getFieldValue('SectionIds')).toEqual(list);
          expect(readGppHeader(`${header}${'~x'.repeat(list.length)}`)).toEqual({ sectionIds: list });
        }),
        { numRuns: RUNS },
      );
    },
    TIMEOUT,
  );
});
