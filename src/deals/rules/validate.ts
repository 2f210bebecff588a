/**
 * validateDeal: every rule of docs/deal-rules.md#rules-a-deal-must-follow, collected as issues, never thrown. Each
 * field is read against its own schema here; the rules across fields are in ./cross-field.ts.
 */
import type { z } from 'zod';
import { applyDealDefaults, type CompleteDealWrite } from './defaults.js';
import { DEAL_READ_ONLY_FIELDS, MANDATORY_DEAL_FIELDS, dealWriteFields, type DealWrite } from './schemas.js';
import { messageFor, typeName, zodIssues } from './messages.js';
import { RULE_CHECKS, type RuleInput } from './cross-field.js';
import { DEAL_RULES } from './validation-types.js';
import type { DealIssue, DealRuleId, DealValidationContext, DealValidationResult } from './validation-types.js';

export { parseDealDate } from './cross-field.js';

const READ_ONLY = new Set<string>(DEAL_READ_ONLY_FIELDS);
const FIELDS = dealWriteFields as Record<string, z.ZodType>;

/**
 * Checks a deal write body against every rule of the deal API and returns all problems with their field
 * paths. Never throws. On success `value` is the body to store, with defaults filled in (PUT semantics).
 * @example
 * const r = validateDeal(body, { mode: 'update', stored, now: Date.now(), reference: { dsps } });
 * if (!r.ok) for (const i of r.issues) console.error(`${i.path}: ${i.message}`);
 */
export function validateDeal(deal: unknown, context: DealValidationContext): DealValidationResult {
  try {
    return check(deal, context);
  } catch (err) {
    // A rule must never throw into the caller; report it as an issue instead.
    return {
      ok: false,
      issues: [{ path: '', message: `the deal could not be validated: ${(err as Error)?.message ?? err}` }],
      warnings: [],
    };
  }
}

function check(deal: unknown, context: DealValidationContext): DealValidationResult {
  const issues: DealIssue[] = [];
  const warnings: DealIssue[] = [];
  if (deal === null || typeof deal !== 'object' || Array.isArray(deal)) {
    return {
      ok: false,
      issues: [{ path: '', message: `the deal must be a JSON object, got ${typeName(deal)}` }],
      warnings,
    };
  }
  const body = deal as Record<string, unknown>;
  const { mode, stored, reference } = context;
  const now = context.now === undefined ? Date.now() : +context.now;
  const parsed: Record<string, unknown> = {};
  const bad = new Set<string>();

  for (const [key, v] of Object.entries(body)) {
    if (key === 'partnerIds') {
      // partnerIds was removed from the API (docs/deal-rules.md#partnerids-is-gone); old deals are edited with dspIds.
      issues.push({
        path: 'partnerIds',
        message: 'partnerIds was removed from the API and is refused: use dspIds instead',
      });
      continue;
    }
    if (READ_ONLY.has(key)) {
      if (mode === 'create')
        issues.push({ path: key, message: `${key} is read-only and cannot be set when creating a deal` });
      else if (
        stored &&
        (key === 'id' || key === 'dealId') &&
        v !== undefined &&
        stored[key] !== undefined &&
        v !== stored[key]
      ) {
        issues.push({
          path: key,
          message: `does not match the deal being replaced (${key} ${JSON.stringify(stored[key])})`,
          rule: 'matches-replaced-deal',
        });
      }
      continue;
    }
    const schema = Object.hasOwn(FIELDS, key) ? FIELDS[key] : undefined;
    if (!schema) {
      issues.push({ path: key, message: `unknown field "${key}"` });
      continue;
    }
    if (v === undefined) continue;
    const r = schema.safeParse(v, { error: messageFor });
    if (r.success) parsed[key] = r.data;
    else {
      bad.add(key);
      issues.push(...zodIssues(key, r.error.issues));
    }
  }
  for (const field of MANDATORY_DEAL_FIELDS) {
    if (body[field] === undefined) {
      bad.add(field);
      issues.push({
        path: field,
        message: `is required${field === 'beginDate' || field === 'endDate' ? ' (null means no limit)' : ''}`,
        rule: 'complete-deal',
      });
    }
  }

  const d = applyDealDefaults(parsed as DealWrite) as Record<string, unknown> & CompleteDealWrite;
  const ok = (...fields: string[]) => fields.every((f) => !bad.has(f));
  const input: RuleInput = { d, body, mode, stored, reference, now, ok, issues, warnings };
  // Each cross-field rule in the order of DEAL_RULES; those checked while reading the fields have no entry here.
  for (const id of Object.keys(DEAL_RULES) as DealRuleId[]) RULE_CHECKS[id]?.(input);

  if (issues.length > 0) return { ok: false, issues, warnings };
  return { ok: true, value: d, issues, warnings };
}
