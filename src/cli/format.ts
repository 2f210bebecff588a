/**
 * Text rendering for a terminal: aligned tables and key/value records whose every field goes through the one
 * escaping of characters a terminal would act on ({@link terminalSafe}, src/core/terminal.ts; docs/deals.md,
 * "The CLI"). `--json` and `--csv` print exact values instead.
 */
import { cellText } from '../core/csv.js';
import { terminalSafe } from '../core/terminal.js';

/** A value as one terminal-safe field: {@link cellText}, then {@link terminalSafe} (line breaks escaped too). */
export function fieldText(value: unknown): string {
  return terminalSafe(cellText(value));
}

/** Cuts a cell to `maxWidth` characters with `…`, on one line. Cells hold deal data, never secrets. */
function cutCell(text: string, maxWidth: number): string {
  return text.length > maxWidth ? text.slice(0, maxWidth - 1) + '…' : text;
}

/** An aligned text table with a header row; cells longer than `maxWidth` are cut with `…`. */
export function formatTable(
  rows: readonly Record<string, unknown>[],
  columns: readonly string[],
  maxWidth = 40,
): string {
  const head = columns.map((c) => terminalSafe(c));
  const cells = rows.map((r) => columns.map((c) => cutCell(fieldText(r[c]), maxWidth)));
  const widths = head.map((c, i) => Math.max(c.length, ...cells.map((row) => row[i].length)));
  const line = (values: string[]) =>
    values
      .map((v, i) => v.padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...cells.map(line)].join('\n') + '\n';
}

/**
 * Key/value lines for one record: the given columns in that order (empty ones included), else every field that
 * has a value.
 */
export function formatRecord(record: Record<string, unknown>, columns?: readonly string[]): string {
  const keys =
    columns ??
    Object.keys(record).filter(
      (k) =>
        record[k] !== null &&
        record[k] !== undefined &&
        !(Array.isArray(record[k]) && (record[k] as unknown[]).length === 0),
    );
  const names = keys.map((k) => terminalSafe(k));
  const width = Math.max(0, ...names.map((k) => k.length));
  return keys.map((k, i) => `${names[i].padEnd(width)}  ${fieldText(record[k])}`.trimEnd()).join('\n') + '\n';
}
