/**
 * The one CSV writer of eidkit (RFC 4180, CRLF records): every CSV the CLI prints and the ad server's report CSV
 * go through it, so a cell a spreadsheet would run as a formula (`=HYPERLINK(…)`, `+1+2`, `-2+3`, `@SUM(…)`) is
 * written as text. Pure: no DOM, no `node:*`.
 */

/** Characters that make a spreadsheet read a text cell as a formula (OWASP "CSV injection"). */
const FORMULA_START = /^[=+\-@\t\r]/;

/** One value as cell text: null and undefined are empty, arrays are joined with `;`, objects are JSON. */
export function cellText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (Array.isArray(value))
    return value.map((v) => (v !== null && typeof v === 'object' ? JSON.stringify(v) : String(v))).join(';');
  if (typeof value === 'object') return JSON.stringify(value);
  // A primitive here (string, number, boolean, bigint); a function or symbol reads as its String().
  // eslint-disable-next-line @typescript-eslint/no-base-to-string
  return String(value);
}

/**
 * One CSV field: text starting like a formula gets a leading `'` (numbers and booleans are data and stay as they
 * are, so `-2` is still a number), then the field is quoted when it holds a comma, quote, CR or LF.
 * @example csvField('=1+2') // "'=1+2"
 */
export function csvField(value: unknown): string {
  let text = cellText(value);
  if (typeof value !== 'number' && typeof value !== 'boolean' && typeof value !== 'bigint' && FORMULA_START.test(text))
    text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** One CSV record, CRLF-terminated. */
export function csvRow(values: readonly unknown[]): string {
  return values.map(csvField).join(',') + '\r\n';
}
