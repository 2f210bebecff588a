/** The messages of validateDeal's field-level issues: short, naming what was expected and what came. */
import type { z } from 'zod';
import { formatPath } from '../../core/path.js';

/** How a value reads in a message: `null`, `an array`, the number itself, `a string`… */
export function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'number') return String(v);
  if (typeof v === 'object') return 'an object';
  if (typeof v === 'string') return 'a string';
  if (typeof v === 'boolean') return String(v);
  return typeof v;
}

const EXPECTED: Record<string, string> = {
  int: 'an integer',
  number: 'a number',
  string: 'a string',
  boolean: 'true or false',
  array: 'an array',
  object: 'an object',
  null: 'null',
};

/** zod error map giving short, field-level messages (schema-level custom messages take precedence). */
export function messageFor(iss: z.core.$ZodRawIssue): string {
  switch (iss.code) {
    case 'invalid_type': {
      const exp = EXPECTED[iss.expected] ?? iss.expected;
      return `must be ${exp}, got ${typeName(iss.input)}`;
    }
    case 'too_small': {
      if (iss.origin === 'array') return `needs at least ${iss.minimum} item${Number(iss.minimum) === 1 ? '' : 's'}`;
      if (iss.origin === 'string')
        return Number(iss.minimum) <= 1 ? 'must not be empty' : `must be at least ${iss.minimum} characters`;
      return iss.inclusive === false ? `must be greater than ${iss.minimum}` : `must be at least ${iss.minimum}`;
    }
    case 'too_big': {
      if (iss.origin === 'array') return `takes at most ${iss.maximum} items`;
      if (iss.origin === 'string') return `must be at most ${iss.maximum} characters`;
      return iss.inclusive === false ? `must be less than ${iss.maximum}` : `must be at most ${iss.maximum}`;
    }
    case 'invalid_value':
      return `must be one of ${iss.values.map((v) => JSON.stringify(v)).join(', ')}`;
    case 'invalid_union':
      return `must be a positive integer id or a non-empty string, got ${typeName(iss.input)}`;
    case 'unrecognized_keys':
      return `unknown field${iss.keys.length === 1 ? '' : 's'} ${iss.keys.map((k) => `"${k}"`).join(', ')}`;
    case 'invalid_format':
      return `has an invalid format (${iss.format})`;
    default:
      return 'is invalid';
  }
}

/** A field's zod issues as field-path issues (an unknown key becomes its own path). */
export function zodIssues(
  field: string,
  issues: readonly z.core.$ZodIssue[],
): { path: string; message: string; rule?: 'two-decimals' }[] {
  const out: { path: string; message: string; rule?: 'two-decimals' }[] = [];
  for (const iss of issues) {
    const base = [field, ...iss.path];
    if (iss.code === 'unrecognized_keys') {
      for (const key of iss.keys) out.push({ path: formatPath([...base, key]), message: `unknown field "${key}"` });
    } else if (iss.code === 'not_multiple_of') {
      // Two decimal places: a rule the OpenAPI document states in words, not as multipleOf (docs/simulator.md).
      out.push({ path: formatPath(base), message: iss.message, rule: 'two-decimals' });
    } else {
      out.push({ path: formatPath(base), message: iss.message });
    }
  }
  return out;
}
