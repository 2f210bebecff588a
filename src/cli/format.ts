/** Text rendering for a terminal: aligned tables and key/value records. */
import { cellText } from '../core/csv.js';

/** Cuts a cell to `maxWidth` characters with `…`, on one line. Cells hold deal data, never secrets. */
function cutCell(text: string, maxWidth: number): string {
  const flat = text.replace(/[\r\n\t]+/g, ' ');
  return flat.length > maxWidth ? flat.slice(0, maxWidth - 1) + '…' : flat;
}

/** An aligned text table with a header row; cells longer than `maxWidth` are cut with `…`. */
export function formatTable(rows: ReadonlyArray<Record<string, unknown>>, columns: readonly string[], maxWidth = 40): string {
  const cells = rows.map((r) => columns.map((c) => cutCell(cellText(r[c]), maxWidth)));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((row) => row[i]!.length)));
  const line = (values: string[]) => values.map((v, i) => v.padEnd(widths[i]!)).join('  ').trimEnd();
  return [line([...columns]), line(widths.map((w) => '-'.repeat(w))), ...cells.map(line)].join('\n') + '\n';
}

/**
 * Key/value lines for one record: the given columns in that order (empty ones included), else every field that
 * has a value.
 */
export function formatRecord(record: Record<string, unknown>, columns?: readonly string[]): string {
  const keys = columns ?? Object.keys(record).filter((k) => record[k] !== null && record[k] !== undefined && !(Array.isArray(record[k]) && (record[k] as unknown[]).length === 0));
  const width = Math.max(0, ...keys.map((k) => k.length));
  return keys.map((k) => `${k.padEnd(width)}  ${cellText(record[k])}`.trimEnd()).join('\n') + '\n';
}
