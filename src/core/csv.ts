/**
 * The one CSV writer of eidkit (RFC 4180, CRLF records): every CSV the CLI prints and the ad server's report CSV
 * go through it, so a cell a spreadsheet would run as a formula (`=HYPERLINK(…)`, `+1+2`, `-2+3`, `@SUM(…)`) is
 * written as text. A spreadsheet does not always split on commas: Excel in most of continental Europe splits on
 * `;`, an import can split on tabs or `|`. So a field holding any of them is quoted, and within a text field every
 * piece that follows one of them is defused as a cell of its own would be: `Summer promo;=cmd|…` is written
 * `"Summer promo;'=cmd|…"`, which no reader runs, whichever character it splits on. Pure: no DOM, no `node:*`.
 */

/**
 * A text cell a spreadsheet reads as a formula (OWASP "CSV injection"): one starting with `=`, `+`, `-` or `@`,
 * after any spaces or quotes, or with a tab or a CR.
 */
const FORMULA_START = /^(?:[\t\r]|[\s"]*[=+\-@])/;
/** The same start right after a list separator: a cell of its own for a spreadsheet that splits on it. */
const FORMULA_AFTER_SEPARATOR = /([,;\t|\r\n])(?=[\s"]*[=+\-@])/g;
/** What makes a field quoted: a quote, a line break, or a character some spreadsheet splits cells on. */
const NEEDS_QUOTES = /[",;\t|\r\n]/;

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
 * One CSV field: text starting like a formula gets a leading `'`, and so does each piece of it after a list
 * separator that starts like one (numbers and booleans are data and stay as they are, so `-2` is still a number);
 * then the field is quoted when it holds a quote, a line break or a list separator (`,` `;` tab `|`).
 * @example csvField('=1+2') // "'=1+2"
 * @example csvField('Summer promo;=cmd') // "\"Summer promo;'=cmd\""
 */
export function csvField(value: unknown): string {
  let text = cellText(value);
  if (typeof value !== 'number' && typeof value !== 'boolean' && typeof value !== 'bigint') {
    if (FORMULA_START.test(text)) text = `'${text}`;
    text = text.replace(FORMULA_AFTER_SEPARATOR, "$1'");
  }
  return NEEDS_QUOTES.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** One CSV record, CRLF-terminated. */
export function csvRow(values: readonly unknown[]): string {
  return values.map(csvField).join(',') + '\r\n';
}
