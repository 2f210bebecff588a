/**
 * Field-level comparison of a desired deal with a live one, over every write field: a field the live
 * deal lacks (or holds null) counts as its default (what a PUT sets), dates compare as instants, and key markers in
 * `callerDealIds` are left out (they are eidkit's, not the user's). Also the content hash kept in the marker.
 */
import { createHash } from 'node:crypto';
import { DEAL_WRITE_FIELDS, dealWriteDefaults, parseDealDate } from '../rules/index.js';
import { userCallerDealIds } from '../client/keyed.js';

/** One changed field: live value → desired value. */
export interface FieldChange {
  field: string;
  from: unknown;
  to: unknown;
}

const DATE_FIELDS = new Set(['beginDate', 'endDate', 'expirationDate']);
const DEFAULTS: Record<string, unknown> = dealWriteDefaults();

/** A field's value in canonical form: defaults for absent values, dates as UTC ISO, markers dropped, keys sorted. */
export function normalizeField(field: string, value: unknown): unknown {
  if (value === undefined || value === null) return field in DEFAULTS ? DEFAULTS[field] : null;
  if (field === 'callerDealIds' && Array.isArray(value)) return userCallerDealIds(value as string[]);
  if (DATE_FIELDS.has(field) && typeof value === 'string') {
    const ms = parseDealDate(value);
    return Number.isNaN(ms) ? value : new Date(ms).toISOString();
  }
  return canonical(value);
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[k];
      if (v !== undefined) out[k] = canonical(v);
    }
    return out;
  }
  return value;
}

/** The changes that turn `live` into `desired`, in the order of the write fields. */
export function diffDeal(live: Record<string, unknown>, desired: Record<string, unknown>): FieldChange[] {
  const changes: FieldChange[] = [];
  for (const field of DEAL_WRITE_FIELDS) {
    const a = normalizeField(field, live[field]);
    const b = normalizeField(field, desired[field]);
    if (JSON.stringify(a) !== JSON.stringify(b)) changes.push({ field, from: a, to: b });
  }
  return changes;
}

/** A 12-hex-digit hash of a deal's write fields in canonical form (key markers excluded). */
export function dealContentHash(deal: Record<string, unknown>): string {
  const canonicalDeal = DEAL_WRITE_FIELDS.map((f) => [f, normalizeField(f, deal[f])]);
  return createHash('sha256').update(JSON.stringify(canonicalDeal)).digest('hex').slice(0, 12);
}
