import { describe, expect, test } from 'vitest';
import { DealsFileError, dealsFileJsonSchema, parseDealsFile } from '../../../src/deals/index.js';
import { DealsFileSchema } from '../../../src/deals/plan/schema.js';

describe('deals file', () => {
  test('reads YAML with defaults laid under each deal, and the same file as JSON', () => {
    const yaml = `
defaults:
  currency: EUR
  isActive: true
deals:
  - key: fr-display
    name: FR display
    isActive: false
`;
    const file = parseDealsFile(yaml, 'deals.yaml');
    expect(file.issues).toEqual([]);
    expect(file.entries[0]).toMatchObject({
      key: 'fr-display',
      index: 0,
      fields: { currency: 'EUR', isActive: false, name: 'FR display' },
      issues: [],
    });
    expect([...file.entries[0].own]).toEqual(['name', 'isActive']);
    const json = parseDealsFile(
      JSON.stringify({ defaults: { currency: 'EUR' }, deals: [{ key: 'a', name: 'A' }] }),
      'deals.json',
    );
    expect(json.entries[0].fields).toEqual({ currency: 'EUR', name: 'A' });
  });

  test('a YAML syntax error names the line; a JSON one is reported as JSON', () => {
    expect(() => parseDealsFile('deals:\n  - key: a\n  key: b\n    name: [', 'deals.yaml')).toThrow(
      /deals\.yaml is not valid YAML \(line \d+, column \d+\)/,
    );
    expect(() => parseDealsFile('{"deals": [', 'deals.json')).toThrow(DealsFileError);
    expect(() => parseDealsFile('a: 1\na: 2\n', 'x.yaml')).toThrow(/Map keys must be unique/);
  });

  test('collects structural problems with their paths: unknown fields, missing, invalid, duplicate and reserved keys', () => {
    const file = parseDealsFile(
      JSON.stringify({
        version: 2,
        defaults: { nope: 1, callerDealIds: ['x'] },
        unmanaged: ['price', 'colour'],
        deals: [
          { name: 'no key' },
          { key: 'has space' },
          { key: 'a' },
          { key: 'a' },
          { key: 'b', callerDealIds: ['eidkit:b'] },
          7,
        ],
      }),
      'deals.json',
    );
    expect(file.issues).toEqual([
      { path: 'version', message: expect.stringMatching(/unknown top-level field "version"/) },
      { path: 'defaults.nope', message: 'unknown deal field "nope"' },
      { path: 'defaults.callerDealIds', message: expect.any(String) },
      { path: 'unmanaged[1]', message: '"colour" is not a deal field' },
    ]);
    const issues = file.entries.map((e) => [e.key, e.issues.map((i) => i.path)]);
    expect(issues).toEqual([
      ['#0', ['key']],
      ['has space', ['key']],
      ['a', []],
      ['a#3', ['key']],
      ['b', ['callerDealIds[0]']],
      ['#5', ['']],
    ]);
    expect(file.entries[2].unmanaged).toEqual(['price']);
  });

  test('the JSON Schema describes the file, its keys and the deal fields for editors', () => {
    const schema = dealsFileJsonSchema() as any;
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(schema.required).toEqual(['deals']);
    expect(schema.additionalProperties).toBe(false);
    const entry = schema.properties.deals.items;
    expect(entry.required).toEqual(['key']);
    expect(entry.properties.key.pattern).toBe('^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$');
    expect(entry.properties.pricingModel).toBeDefined();
    expect(entry.properties.countryCodes.anyOf).toContainEqual({ type: 'null' });
    expect(entry.additionalProperties).toBe(false);
    expect(schema.properties.defaults.properties.currency.pattern).toBe('^[A-Z]{3}$');
    // The zod schema the JSON Schema comes from accepts a well-formed file.
    expect(DealsFileSchema.safeParse({ defaults: { currency: 'EUR' }, deals: [{ key: 'a', price: 2 }] }).success).toBe(
      true,
    );
  });
});
