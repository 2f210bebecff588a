// Our US section reader (gpp-us.ts) against the IAB's own library: on random field values in every US section
// (encoded by @iabgpp/cmpapi), both read the same fields; on random text, ours never reads what the library
// refuses, and never throws.
import { describe, expect, test } from 'vitest';
import fc from 'fast-check';
import { GppModel } from '@iabgpp/cmpapi';
import { readUsSection } from '../../../src/adserver/consent/gpp-us.js';
import { US_SECTIONS } from '../../../src/core/index.js';

const RUNS = Number(process.env.EIDKIT_FUZZ_RUNS) || 300;
const STATES = US_SECTIONS.slice(1);

/** The fields the library gives for a section, without the segment bookkeeping it adds. */
function libraryFields(m: GppModel, name: string): Record<string, unknown> {
  const { GpcSegmentIncluded: _, ...fields } = m.getSection(name) as Record<string, unknown>;
  return fields;
}

describe('the US section reader decides on the fields the IAB library reads', () => {
  test(`random values in every US section (${RUNS} runs per section): the same fields`, () => {
    for (const name of STATES) {
      const template = new GppModel();
      template.setFieldValue(
        name,
        name >= 'usin' && ['usmd', 'usin', 'usky', 'usri'].includes(name) ? 'MspaVersion' : 'Version',
        1,
      );
      const shape = libraryFields(template, name);
      const arb = fc.record(
        Object.fromEntries(
          Object.entries(shape)
            .filter(([k]) => !['Version', 'MspaVersion', 'GpcSegmentType'].includes(k))
            .map(([k, v]) => [
              k,
              Array.isArray(v)
                ? fc.array(fc.integer({ min: 0, max: 2 }), { minLength: v.length, maxLength: v.length })
                : typeof v === 'boolean'
                  ? fc.boolean()
                  : k === 'MspaCoveredTransaction'
                    ? fc.integer({ min: 1, max: 2 })
                    : fc.integer({ min: 0, max: 2 }),
            ]),
        ),
      );
      fc.assert(
        fc.property(arb, (values) => {
          const m = new GppModel();
          m.setFieldValue(name, name === 'usnat' ? 'Version' : Object.keys(shape)[0], name === 'usnat' ? 2 : 1);
          for (const [k, v] of Object.entries(values)) m.setFieldValue(name, k, v);
          const text = m.encode().split('~')[1];
          const ours = readUsSection(name, text);
          expect({ name, ours }).toEqual({ name, ours: libraryFields(new GppModel(m.encode()), name) });
        }),
        { numRuns: RUNS },
      );
    }
  }, 120_000);

  test('a version 1 national section: the library trims it to 12 and 2 entries; ours reads its layout by length', () => {
    const m = new GppModel();
    m.setFieldValue('usnat', 'Version', 1);
    m.setFieldValue('usnat', 'KnownChildSensitiveDataConsents', [0, 1]);
    const text = m.encode().split('~')[1];
    expect(readUsSection('usnat', text)).toEqual(libraryFields(new GppModel(m.encode()), 'usnat'));
    // Written in the version 2 layout with version 1 (other encoders do): the third child consent is read.
    const v2 = new GppModel();
    v2.setFieldValue('usnat', 'KnownChildSensitiveDataConsents', [0, 0, 1]);
    const long = 'B' + v2.encode().split('~')[1].slice(1);
    expect(readUsSection('usnat', long)?.KnownChildSensitiveDataConsents).toEqual([0, 0, 1]);
  });

  test(`random text (${RUNS * 5} runs): never throws; reads nothing the library refuses`, () => {
    const text = fc.stringMatching(/^[A-Za-z0-9_\-.]{0,40}$/);
    fc.assert(
      fc.property(fc.constantFrom(...STATES), text, (name, t) => {
        const ours = readUsSection(name, t);
        let refused = false;
        try {
          const m = new GppModel();
          m.decodeSection(name, t);
          m.getSection(name);
        } catch {
          refused = true;
        }
        if (refused) expect(ours).toBeNull();
      }),
      { numRuns: RUNS * 5 },
    );
  });
});
