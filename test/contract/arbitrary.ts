/**
 * fast-check arbitraries derived from the JSON Schemas of the OpenAPI document, for the generated requests of the
 * contract test: values the schema should accept (the validator double-checks each one before it is sent).
 * Covers the keywords the document uses; anything else is refused loudly rather than guessed.
 */
import fc from 'fast-check';

type Json = Record<string, unknown>;

const KNOWN = new Set([
  'type',
  'enum',
  'const',
  'anyOf',
  'oneOf',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'minItems',
  'maxItems',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minLength',
  'maxLength',
  'pattern',
  'format',
  'description',
  'title',
  'examples',
  'readOnly',
  'x-rules',
  'x-requires-header',
  'default',
]);

/** Small numbers most of the time, the whole range sometimes. */
function integer(min: number, max: number): fc.Arbitrary<number> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.integer({ min, max: Math.min(max, min + 500) }) },
    { weight: 1, arbitrary: fc.integer({ min, max }) },
  );
}

/** An arbitrary of the values `schema` accepts; request bodies leave readOnly properties out. */
export function arbitrary(schema: Json, options: { forRequest?: boolean } = {}): fc.Arbitrary<unknown> {
  const unknown = Object.keys(schema).filter((k) => !KNOWN.has(k));
  if (unknown.length > 0) throw new Error(`no arbitrary for keyword(s) ${unknown.join(', ')}`);
  const sub = (s: unknown) => arbitrary(s as Json, options);
  if ('const' in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  const branches = (schema.anyOf ?? schema.oneOf) as Json[] | undefined;
  if (branches) return fc.oneof(...branches.map(sub));
  if (Array.isArray(schema.type)) {
    return fc.oneof(...(schema.type as string[]).map((type) => arbitrary({ ...schema, type }, options)));
  }
  switch (schema.type) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer': {
      const above = schema.exclusiveMinimum as number | undefined;
      const below = schema.exclusiveMaximum as number | undefined;
      const min = Math.max(-1e9, (schema.minimum as number | undefined) ?? (above !== undefined ? above + 1 : -1000));
      const max = Math.min(1e9, (schema.maximum as number | undefined) ?? (below !== undefined ? below - 1 : 1e9));
      return integer(min, max);
    }
    case 'number': {
      const min = (schema.minimum as number | undefined) ?? -1e6;
      const max = (schema.maximum as number | undefined) ?? 1e6;
      const step = schema.multipleOf as number | undefined;
      if (step) {
        return integer(Math.ceil(min / step), Math.floor(max / step)).map((k) => Number((k * step).toFixed(10)));
      }
      return fc.double({ min, max, noNaN: true, noDefaultInfinity: true }).map((n) => (Object.is(n, -0) ? 0 : n));
    }
    case 'string': {
      const minLength = (schema.minLength as number | undefined) ?? 0;
      const maxLength = (schema.maxLength as number | undefined) ?? 40;
      const base = schema.pattern
        ? fc.stringMatching(new RegExp(schema.pattern as string))
        : schema.format === 'date-time'
          ? fc
              .date({ min: new Date('2000-01-01'), max: new Date('2099-12-31'), noInvalidDate: true })
              .map((d) => d.toISOString())
          : fc.string({ minLength, maxLength: Math.min(maxLength, minLength + 40) });
      return base.filter((s) => s.length >= minLength && s.length <= maxLength);
    }
    case 'array': {
      const minItems = (schema.minItems as number | undefined) ?? 0;
      const maxItems = Math.min((schema.maxItems as number | undefined) ?? 3, minItems + 3);
      return fc.array(sub(schema.items ?? {}), { minLength: minItems, maxLength: maxItems });
    }
    case 'object': {
      const props = Object.entries((schema.properties ?? {}) as Record<string, Json>).filter(
        ([, p]) => !(options.forRequest && p.readOnly),
      );
      const required = new Set((schema.required ?? []) as string[]);
      const record = fc.record(Object.fromEntries(props.map(([k, p]) => [k, sub(p)])), {
        requiredKeys: props.map(([k]) => k).filter((k) => required.has(k)),
      });
      const examples = (schema.examples ?? []) as Json[];
      if (examples.length === 0) return record;
      // Beside wholly random objects, a documented example with a few fields changed: bodies that pass the rules.
      const partial = fc.record(Object.fromEntries(props.map(([k, p]) => [k, sub(p)])), { requiredKeys: [] });
      const changes = fc.integer({ min: 1, max: 3 });
      const tweaked = fc.tuple(fc.constantFrom(...examples), partial, changes).map(([ex, part, n]) => ({
        ...ex,
        ...Object.fromEntries(Object.entries(part).slice(0, n)),
      }));
      return fc.oneof(record, tweaked, tweaked);
    }
    default:
      if (Object.keys(schema).every((k) => k === 'description' || k === 'title')) return fc.jsonValue();
      throw new Error(`no arbitrary for type ${JSON.stringify(schema.type)}`);
  }
}
