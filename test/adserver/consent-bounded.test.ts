// Hostile consent strings: each shape that stalled or killed the server when decoded by the IAB libraries id by id
// (docs/ad-server.md "Consent caps"). A string over a cap is unreadable consent (the conservative path, with a
// problem naming the field), never an exception, never a stall.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import fc from 'fast-check';
import { createConsentDecoder, createForwardingPolicy, parseAdCall } from '../../src/adserver/index.js';
import type { AdCallConsent } from '../../src/adserver/index.js';
import { GPP_CAPS, TC_CAPS } from '../../src/adserver/consent.js';
import { BoundedCache } from '../../src/adserver/consent/cache.js';
import { readGppHeader } from '../../src/adserver/consent/gpp-header.js';
import { readTcString } from '../../src/adserver/consent/tc-string.js';
import { Bits, disclosedSegment, gppHeader, tcCore } from './consent-craft.js';
import type { Restriction } from './consent-craft.js';

/** CPU time of `f` in milliseconds (user and system), with its result. */
function cpu<T>(f: () => T): [T, number] {
  const t = process.cpuUsage();
  const out = f();
  const d = process.cpuUsage(t);
  return [out, (d.user + d.system) / 1000];
}

/** The refusal a partner with vendor id 131 gets, decoded by a fresh decoder (no cache), and the CPU it cost. */
function decide(consent: AdCallConsent, vendorId = 131) {
  const d = createConsentDecoder();
  return cpu(() => d.refusal(d.decode(consent), vendorId));
}

const every = (from: number, to: number): [number, number] => [from, to];
/** A restriction over vendors 1 to `to` for each purpose 1 to `n`, of type `type`. */
const restrictAll = (n: number, to: number, type = 0): Restriction[] =>
  Array.from({ length: n }, (_, i) => ({ purpose: (i % 24) + 1, type: i < 24 ? type : (type + 1) % 3, ranges: [every(1, to)] }));

// Under @iabtcf/core each of these took from 50 ms to 26 s of CPU (measured, 2 cores).
describe('TC strings that the IAB decoder expands id by id', () => {
  test.each([
    ['a vendor consent range to 65,535 (53 characters)', tcCore({ vendorConsents: { maxId: 1, ranges: [every(1, 65_535)] } }), 'vendorConsents: vendor id 65,535'],
    ['a legitimate-interest range to 65,535', tcCore({ vendorLI: { maxId: 1, ranges: [every(1, 65_535)] } }), 'vendorLegitimateInterests: vendor id 65,535'],
    [
      'a publisher restriction over vendors 1 to 65,535 (59 characters, 11 s)',
      tcCore({ restrictions: [{ purpose: 2, type: 0, ranges: [every(1, 65_535)] }] }),
      'publisherRestrictions[0]: vendor id 65,535',
    ],
    [
      'two such restrictions (68 characters, 26 s)',
      tcCore({ restrictions: [2, 3].map((purpose) => ({ purpose, type: 0, ranges: [every(1, 65_535)] })) }),
      'publisherRestrictions[0]: vendor id 65,535',
    ],
    ['a disclosed-vendors segment of ranges to 65,535', `${tcCore()}.${disclosedSegment({ maxId: 1, ranges: Array(10).fill(every(1, 65_535)) })}`, 'segment 2, vendorsDisclosed: vendor id 65,535'],
    ['a max vendor id of 65,535 with no range', tcCore({ vendorConsents: { maxId: 65_535, ranges: [[131]] } }), 'vendorConsents.maxId: vendor id 65,535'],
    ['65 publisher restrictions', tcCore({ restrictions: restrictAll(65, 131) }), 'publisherRestrictions: 65 restrictions, over the cap of 64'],
    ['2,000 range entries declared and absent', tcCore({ vendorConsents: { ranges: [[131]], numEntries: 2000 } }), 'vendorConsents: 2000 range entries declared, the string ends first'],
    ['4,095 range entries declared', tcCore({ vendorConsents: { ranges: [[131]], numEntries: 4095 } }), 'vendorConsents: 4,095 range entries, over the cap of 2,048'],
  ])('%s: unreadable, the problem names the field, no eids for the partner', (_, gdprConsent, field) => {
    const [refusal, ms] = decide({ gdpr: 1, gdprConsent });
    expect(refusal?.code).toBe('gdpr');
    expect(refusal?.message).toContain(field);
    expect(ms).toBeLessThan(20);
  });

  test('more range entries than the cap (2,048) in one string: unreadable', () => {
    const singles = Array.from({ length: 1100 }, (_, i): [number] => [i + 1]);
    const [refusal] = decide({ gdpr: 1, gdprConsent: tcCore({ vendorConsents: { ranges: singles }, vendorLI: { ranges: singles } }) });
    expect(refusal?.message).toContain('vendorLegitimateInterests: 2,200 range entries, over the cap of 2,048');
  });

  test('within the caps, the widest ranges decode in linear time and still decide', () => {
    // 64 restrictions over every vendor id to 10,000 (the IAB tree: 64 x 10,000^2 / 2 steps), ranges to the cap.
    const gdprConsent = tcCore({
      purposeConsents: [1, 2, 3],
      vendorConsents: { ranges: Array(40).fill(every(1, TC_CAPS.maxVendorId)) },
      restrictions: restrictAll(64, TC_CAPS.maxVendorId),
    });
    const [refusal, ms] = decide({ gdpr: 1, gdprConsent }, 9_999);
    expect(refusal?.message).toBe('GDPR applies: vendor 9999 has no legal basis for any of purposes 2, 3, 4, 5, 6, 7, 8, 9, 10 in the TC string, within the publisher restrictions');
    expect(ms).toBeLessThan(20);
    // Vendor consent to the cap, no restriction: a legal basis.
    const open = tcCore({ purposeConsents: [2], vendorConsents: { ranges: [every(1, TC_CAPS.maxVendorId)] } });
    expect(decide({ gdpr: 1, gdprConsent: open }, TC_CAPS.maxVendorId)[0]).toBeUndefined();
  });

  test('conflicting restrictions all hold: consent only and legitimate interest only for one purpose leave no basis', () => {
    const base = { purposeConsents: [2], purposeLI: [2], vendorConsents: { ranges: [[131]] as [number][] }, vendorLI: { ranges: [[131]] as [number][] } };
    const one = tcCore({ ...base, restrictions: [{ purpose: 2, type: 1, ranges: [[131]] }] });
    const both = tcCore({ ...base, restrictions: [1, 2].map((type) => ({ purpose: 2, type, ranges: [[131]] as [number][] })) });
    expect(decide({ gdpr: 1, gdprConsent: one })[0]).toBeUndefined();
    expect(decide({ gdpr: 1, gdprConsent: both })[0]?.message).toMatch(/vendor 131 has no legal basis .* within the publisher restrictions/);
  });

  test('what the IAB decoder refuses is refused: CMP id 1, vendor id 0, a range running backwards in a restriction', () => {
    expect(readTcString(tcCore({ cmpId: 1 }))).toEqual({ problem: 'segment 1, cmpId 1 is not a CMP id' });
    expect(readTcString(tcCore({ vendorConsents: { ranges: [[0]] } }))).toEqual({ problem: 'segment 1, vendorConsents: vendor id 0' });
    expect(readTcString(tcCore({ restrictions: [{ purpose: 2, type: 0, ranges: [[9, 3]] }] }))).toEqual({
      problem: 'segment 1, publisherRestrictions[0]: a range from 9 down to 3',
    });
    expect(readTcString(`${tcCore()}.`)).toEqual({ problem: 'segment 2 is not Base64url text' });
    expect(readTcString(tcCore({ version: 1 }))).toEqual({ problem: 'segment 1, version 1: only TCF v2 strings are read' });
  });

  test('a string of any bits, up to the cap, is read or refused without throwing, in linear time', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.'), maxLength: 600 }), (tail) => {
        // A valid beginning (version 2, plausible fields), then anything.
        const s = tcCore().slice(0, 36) + tail;
        const [out, ms] = cpu(() => readTcString(s));
        expect(typeof out).toBe('object');
        expect(ms).toBeLessThan(20);
      }),
      { numRuns: 500 },
    );
    expect(readTcString('C'.repeat(TC_CAPS.maxLength + 1))).toEqual({ problem: 'the TC string is 8,001 characters, over the cap of 8,000' });
  });
});

describe('GPP headers whose section-id ranges the IAB library expands id by id', () => {
  // Each of these, given to `new GppModel(…)`, expands the range before checking it: the first aborts V8 (the
  // whole process), the second costs 1.8 s and 341 MB. The reader refuses them before the library sees them.
  test.each([
    ['DBAB4oogqhIW~BAAAAAAA (21 characters: ids to 10^9)', 'DBAB4oogqhIW~BAAAAAAA', 'SectionIds: a section id over the cap of 255'],
    ['a range to 10^7', `${gppHeader([[1, 10_000_000]])}~BAAAAAAA`, 'SectionIds: a section id over the cap of 255'],
    ['one id of 10^9', `${gppHeader([1_000_000_000])}~A`, 'SectionIds: a section id over the cap of 255'],
    ['a range 1 to 255: more sections than the cap', `${gppHeader([[1, 255]])}${'~A'.repeat(255)}`, 'SectionIds: more than 32 sections, the cap'],
    ['4,095 entries declared', `${gppHeader([7], 4095)}~A`, 'SectionIds: 4095 entries, over the cap of 32'],
    ['ids that do not match the sections', `${gppHeader([7, 8])}~A`, "SectionIds list 2 sections, the string holds 1"],
    ['a header cut short', `${gppHeader([7, 8]).slice(0, 4)}~A~B`, 'SectionIds end before their last entry'],
    ['a header of 300 characters', `DB${'A'.repeat(298)}~A`, 'the GPP header is 300 characters, over the cap of 256'],
  ])('%s: refused by the header reader, naming the field', (_, gpp, problem) => {
    const [out, ms] = cpu(() => readGppHeader(gpp));
    expect(out).toEqual({ problem: expect.stringContaining(problem) });
    expect(ms).toBeLessThan(20);
  });

  test('a string without a GPP header is left to the library (a bare TC string is its EU section)', () => {
    expect(readGppHeader(tcCore())).toBeUndefined();
    expect(readGppHeader('garbage')).toBeUndefined();
    expect(readGppHeader('D'.repeat(GPP_CAPS.maxLength + 1))).toEqual({ problem: 'the GPP string is 8001 characters, over the cap of 8000' });
  });

  const dist = fileURLToPath(new URL('../../dist/node/adserver/index.js', import.meta.url));
  test('the whole GET path survives them in a process of its own: no abort, no big heap, the conservative answer', () => {
    if (!existsSync(dist)) throw new Error('build first: npm run build');
    const urls = [
      '/ac?nwid=1&gpp=DBAB4oogqhIW~BAAAAAAA',
      `/ac?nwid=1&gpp=${gppHeader([[1, 10_000_000]])}~BAAAAAAA&gpp_sid=7`,
      `/ac?nwid=1&gdpr=1&gdpr_consent=${tcCore({ restrictions: [2, 3].map((purpose) => ({ purpose, type: 0, ranges: [every(1, 65_535)] })) })}`,
    ];
    // Run apart: on the IAB path the first URL makes V8 abort, which no try/catch (nor a test runner) survives.
    const script = `
      const { createForwardingPolicy, parseAdCall } = await import(${JSON.stringify(dist)});
      const policy = createForwardingPolicy();
      const out = JSON.parse(process.env.URLS).map((url) => {
        const call = parseAdCall({ url });
        return policy.explain(call, [{ id: 'dsp', gvlVendorId: 131 }]).partners[0].consent;
      });
      console.log(JSON.stringify({ out, maxRssMb: process.resourceUsage().maxRSS / 1024 }));`;
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { env: { ...process.env, URLS: JSON.stringify(urls) }, encoding: 'utf8', timeout: 15_000 });
    expect(child.signal).toBeNull();
    expect(child.status, child.stderr).toBe(0);
    const { out, maxRssMb } = JSON.parse(child.stdout);
    expect(out.map((r: { code: string }) => r.code)).toEqual(['gpp', 'gpp', 'gdpr']);
    expect(out[0].message).toContain('SectionIds');
    expect(out[2].message).toContain('publisherRestrictions[0]');
    expect(maxRssMb).toBeLessThan(200);
  });
});

describe('the decode cache', () => {
  test('holds at most its entries and its bytes, whatever the strings', () => {
    const d = createConsentDecoder({}, 10_000, 1024 * 1024);
    // Distinct strings near the largest a call carries (restrictions over every id, wide ranges).
    for (let i = 0; i < 400; i++) {
      const gdprConsent = tcCore({ vendorConsents: { ranges: Array.from({ length: 200 }, (_, j): [number] => [1 + ((i * 7 + j * 13) % 9_999)]) }, restrictions: restrictAll(8, 2 + i) });
      d.decode({ gdpr: 1, gdprConsent });
      d.decode({ gpp: `${gppHeader([7])}~${'B'.repeat(1000 + i)}` });
    }
    const { tcf, gpp } = d.stats();
    expect(tcf.bytes).toBeLessThanOrEqual(1024 * 1024);
    expect(gpp.bytes).toBeLessThanOrEqual(1024 * 1024);
    expect(tcf.entries).toBeGreaterThan(50);
    const few = createConsentDecoder({}, 10);
    for (let i = 0; i < 100; i++) few.decode({ gdpr: 1, gdprConsent: tcCore({ vendorConsents: { ranges: [[i + 1]] } }) });
    expect(few.stats().tcf.entries).toBeLessThanOrEqual(10);
  });

  test('keeps large results too (decoding them again is what an attacker wants), and unreadable ones', () => {
    const d = createConsentDecoder();
    const big = { gdpr: 1 as const, gdprConsent: tcCore({ vendorConsents: { ranges: Array(100).fill(every(1, 10_000)) }, restrictions: restrictAll(64, 10_000) }) };
    expect(d.decode(big).tcf).toBe(d.decode(big).tcf);
    const bomb = { gdpr: 1 as const, gdprConsent: tcCore({ vendorConsents: { ranges: [every(1, 65_535)] } }) };
    expect(d.decode(bomb).tcf).toBe(d.decode(bomb).tcf);
  });

  test('BoundedCache: a turnover keeps the entries used since the last one, and never goes past either bound', () => {
    const c = new BoundedCache<string>(4, 100, (k, v) => k.length + v.length);
    const make = (k: string) => k.toUpperCase();
    for (const k of ['a', 'b', 'c']) c.get(k, make); // c turns 'a', 'b' into the old generation
    c.get('a', make); // used again: back in the young generation
    c.get('d', make);
    c.get('e', make); // second turnover: 'b' is dropped
    let made = 0;
    const count = (k: string) => (made++, make(k));
    c.get('a', count);
    c.get('b', count);
    expect(made).toBe(1);
    expect(c.stats().entries).toBeLessThanOrEqual(4);
    c.get('x'.repeat(60), make); // over half the bytes alone: returned, not kept
    expect(c.stats().bytes).toBeLessThanOrEqual(100);
  });
});

describe('the GET parse and forwarding policy with the worst consent a URL can carry', () => {
  test('costs under a few milliseconds of CPU per call, and decides conservatively', () => {
    const policy = createForwardingPolicy();
    const partners = Array.from({ length: 10 }, (_, i) => ({ id: `dsp${i}`, gvlVendorId: 1 + i * 997 }));
    // Largest strings within an 8,000-character URL: TC to the caps, then GPP with a long section.
    const cases = [
      tcCore({ vendorConsents: { ranges: Array(100).fill(every(1, 10_000)) }, vendorLI: { ranges: Array(100).fill(every(1, 10_000)) }, restrictions: restrictAll(64, 10_000) }),
      tcCore({ vendorConsents: { bitfield: Array.from({ length: 10_000 }, (_, i) => i % 2 === 0) }, vendorLI: { bitfield: Array.from({ length: 10_000 }, (_, i) => i % 3 === 0) } }),
    ].map((tc) => `/ac?nwid=1&gdpr=1&gdpr_consent=${tc}&gpp=${gppHeader([7, 8])}~${'B'.repeat(1000)}~${'C'.repeat(1000)}`);
    for (const url of cases) {
      expect(url.length).toBeLessThan(8_000);
      let worst = 0;
      for (let i = 0; i < 5; i++) {
        // A fresh policy each time: nothing cached, the decode is paid in full.
        const fresh = createForwardingPolicy();
        const [, ms] = cpu(() => {
          const call = parseAdCall({ url });
          for (const p of partners) fresh.eidsFor(call, p);
        });
        worst = Math.max(worst, ms);
      }
      expect(worst).toBeLessThan(10);
    }
    expect(policy).toBeDefined();
  });
});
