/**
 * Text rendering for a terminal: aligned tables, key/value records, and the one escaping of characters a
 * terminal would act on ({@link terminalSafe}), which every human-readable output of the CLI goes through
 * (docs/deals.md, "The CLI"). `--json` and `--csv` print exact values instead.
 */
import { cellText } from '../core/csv.js';

// C0 controls (ESC, BEL, CR, LF, TAB…), DEL and C1 controls (U+009B is a one-character CSI): what a terminal acts
// on. Then what forges text visually: the Arabic letter mark, the Mongolian vowel separator, zero-width spaces and
// joiners, left-to-right / right-to-left marks, line and paragraph separators, bidi embeddings, overrides and
// isolates, invisible operators, the byte-order mark and interlinear annotation marks.
const UNSAFE =
  '\\x00-\\x1f\\x7f-\\x9f\\u061c\\u180e\\u200b-\\u200f\\u2028-\\u202e\\u2060-\\u2064\\u2066-\\u206f\\ufeff\\ufff9-\\ufffb';
const UNSAFE_ALL = new RegExp(`[${UNSAFE}]`, 'g');
const UNSAFE_BUT_NEWLINE = new RegExp(`[${UNSAFE.replace('\\x00-\\x1f', '\\x00-\\x09\\x0b-\\x1f')}]`, 'g');

/** `\x1b` for a code point below 256, `\u202e` above. */
function escapeChar(ch: string): string {
  const code = ch.charCodeAt(0);
  return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/**
 * Text that reaches a terminal as text: control characters (C0, DEL, C1, so every ESC / CSI / OSC sequence),
 * bidi controls and zero-width characters are shown escaped (`\x1b`, `\x0a`, `\u202e`). With `keepNewlines`,
 * `\n` stays a line break (for whole outputs whose lines the CLI built; fields are escaped on their own first).
 * @example terminalSafe('a\x1b]0;title\x07b') // 'a\\x1b]0;title\\x07b'
 */
export function terminalSafe(text: string, options: { keepNewlines?: boolean } = {}): string {
  return text.replace(options.keepNewlines ? UNSAFE_BUT_NEWLINE : UNSAFE_ALL, escapeChar);
}

/** A value as one terminal-safe field: {@link cellText}, then {@link terminalSafe} (line breaks escaped too). */
export function fieldText(value: unknown): string {
  return terminalSafe(cellText(value));
}

/** Cuts a cell to `maxWidth` characters with `…`, on one line. Cells hold deal data, never secrets. */
function cutCell(text: string, maxWidth: number): string {
  return text.length > maxWidth ? text.slice(0, maxWidth - 1) + '…' : text;
}

/** An aligned text table with a header row; cells longer than `maxWidth` are cut with `…`. */
export function formatTable(rows: ReadonlyArray<Record<string, unknown>>, columns: readonly string[], maxWidth = 40): string {
  const head = columns.map((c) => terminalSafe(c));
  const cells = rows.map((r) => columns.map((c) => cutCell(fieldText(r[c]), maxWidth)));
  const widths = head.map((c, i) => Math.max(c.length, ...cells.map((row) => row[i]!.length)));
  const line = (values: string[]) => values.map((v, i) => v.padEnd(widths[i]!)).join('  ').trimEnd();
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...cells.map(line)].join('\n') + '\n';
}

/**
 * Key/value lines for one record: the given columns in that order (empty ones included), else every field that
 * has a value.
 */
export function formatRecord(record: Record<string, unknown>, columns?: readonly string[]): string {
  const keys = columns ?? Object.keys(record).filter((k) => record[k] !== null && record[k] !== undefined && !(Array.isArray(record[k]) && (record[k] as unknown[]).length === 0));
  const names = keys.map((k) => terminalSafe(k));
  const width = Math.max(0, ...names.map((k) => k.length));
  return keys.map((k, i) => `${names[i]!.padEnd(width)}  ${fieldText(record[k])}`.trimEnd()).join('\n') + '\n';
}
