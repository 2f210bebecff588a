/**
 * The routes' shared request reading and error responses: the JSON body, the query parameters (each read to a
 * value or a field error), and the 400 / 403 bodies of docs/simulator.md ("Behaviour, status codes and error bodies").
 */
import type { Context } from 'hono';
import { parseDealDate, type DealIssue } from '../../deals/rules/index.js';
import type { RuleId } from './operation.js';

/** A 400 (or 404) naming one field: `{ message, errors: [{ field, message, rule? }] }`. */
export function fieldError(c: Context, field: string, message: string, status: 400 | 404 = 400, rule?: RuleId) {
  return c.json({ message: `${field}: ${message}`, errors: [{ field, message, ...(rule ? { rule } : {}) }] }, status);
}

/**
 * The 400 of a deal that fails the rules: the first issue (or the multiple-buyer refusal) in `message`, all in
 * `errors`.
 */
export function validationError(c: Context, issues: DealIssue[]) {
  // The multiple-buyer refusal is said in `message`, followed by the DSP id.
  const multiBuyer = issues.find((i) => i.message.startsWith('Deal cannot target DSPs'));
  const first = issues[0];
  const message = multiBuyer
    ? multiBuyer.message
    : `The deal is invalid: ${first.path || '(deal)'}: ${first.message}${issues.length > 1 ? ` (and ${issues.length - 1} more)` : ''}`;
  const errors = issues.map((i) => ({ field: i.path, message: i.message, ...(i.rule ? { rule: i.rule } : {}) }));
  return c.json({ message, errors }, 400);
}

/** The 403 of a call a DSP user may not make. */
export function forbiddenForDsp(c: Context, what: string) {
  return c.json({ message: `DSP callers cannot use ${what}`, code: 'FORBIDDEN_FOR_DSP' }, 403);
}

/** The request body as JSON, or the 400 to answer when it is empty or not JSON. */
export async function readJson(c: Context): Promise<{ ok: true; value: unknown } | { ok: false; response: Response }> {
  const text = await c.req.text();
  if (text.trim() === '') {
    return { ok: false, response: fieldError(c, '', 'the request body is empty; send a JSON object') };
  }
  const parsed = parseJsonBody(c, text);
  return 'response' in parsed ? { ok: false, response: parsed.response } : { ok: true, value: parsed.value };
}

/**
 * `text` parsed as JSON, or the 400 of a body that is not JSON. A body sent as another type than JSON (text/plain)
 * names the rule it broke, `json-text`: the document declares such a body as any text, JSON inside.
 */
export function parseJsonBody(c: Context, text: string): { value: unknown } | { response: Response } {
  try {
    return { value: JSON.parse(text) as unknown };
  } catch (err) {
    const typed = /^application\/([\w.+-]*\+)?json\b/i.test((c.req.header('content-type') ?? '').trim());
    const error = { field: '', message: (err as Error).message, ...(typed ? {} : { rule: 'json-text' }) };
    return { response: c.json({ message: 'The request body is not valid JSON', errors: [error] }, 400) };
  }
}

/** A query parameter read: its value (undefined when absent), or the field error to report. */
export type Parsed<T> = { ok: true; value: T } | { ok: false; field: string; message: string };

/** An integer parameter of at least `min`. */
export function parseIntParam(raw: string | undefined, field: string, min: number): Parsed<number | undefined> {
  if (raw === undefined || raw === '') return { ok: true, value: undefined };
  if (!/^\d+$/.test(raw) || Number(raw) < min)
    return { ok: false, field, message: `must be an integer of at least ${min}` };
  return { ok: true, value: Number(raw) };
}

/** A comma-separated list of integer ids. */
export function parseIdList(raw: string | undefined, field: string): Parsed<number[] | undefined> {
  if (raw === undefined || raw.trim() === '') return { ok: true, value: undefined };
  const parts = raw.split(',').map((s) => s.trim());
  if (!parts.every((p) => /^\d+$/.test(p)))
    return { ok: false, field, message: 'must be comma-separated integers, e.g. 1,2,3' };
  return { ok: true, value: parts.map(Number) };
}

/** `true` or `false`, in any case. */
export function parseBool(raw: string | undefined, field: string): Parsed<boolean | undefined> {
  if (raw === undefined || raw === '') return { ok: true, value: undefined };
  const v = raw.toLowerCase();
  if (v !== 'true' && v !== 'false') return { ok: false, field, message: 'must be true or false' };
  return { ok: true, value: v === 'true' };
}

/** An ISO 8601 date-time, read as UTC, to epoch milliseconds. */
export function parseDateParam(raw: string | undefined, field: string): Parsed<number | undefined> {
  if (raw === undefined || raw === '') return { ok: true, value: undefined };
  const ms = parseDealDate(raw);
  if (!/^\d{4}-\d{2}-\d{2}/.test(raw) || Number.isNaN(ms))
    return { ok: false, field, message: 'must be an ISO 8601 date-time (read as UTC)' };
  return { ok: true, value: ms };
}
