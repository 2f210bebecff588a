/** Rendering rows for a terminal (aligned table) and for machines (CSV per RFC 4180, JSON). */

/** One cell as text: null and undefined are empty, arrays are joined with `;`, objects are JSON. */
export function cellText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (Array.isArray(value)) return value.map((v) => (v !== null && typeof v === 'object' ? JSON.stringify(v) : String(v))).join(';');
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** One CSV field, quoted when it holds a comma, quote, CR or LF (RFC 4180). */
export function csvField(value: unknown): string {
  const text = cellText(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** One CSV record (CRLF-terminated, RFC 4180). */
export function csvRow(values: unknown[]): string {
  return values.map(csvField).join(',') + '\r\n';
}

/** An aligned text table with a header row; cells longer than `maxWidth` are cut with `…`. */
export function formatTable(rows: Array<Record<string, unknown>>, columns: string[], maxWidth = 40): string {
  const cut = (s: string) => {
    const flat = s.replace(/[\r\n\t]+/g, ' ');
    return flat.length > maxWidth ? flat.slice(0, maxWidth - 1) + '…' : flat;
  };
  const cells = rows.map((r) => columns.map((c) => cut(cellText(r[c]))));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((row) => row[i]!.length)));
  const line = (values: string[]) => values.map((v, i) => v.padEnd(widths[i]!)).join('  ').trimEnd();
  return [line(columns), line(widths.map((w) => '-'.repeat(w))), ...cells.map(line)].join('\n') + '\n';
}

/** Key/value lines for one record (`deals get` without `--json`). */
export function formatRecord(record: Record<string, unknown>): string {
  const keys = Object.keys(record).filter((k) => record[k] !== null && record[k] !== undefined && !(Array.isArray(record[k]) && (record[k] as unknown[]).length === 0));
  const width = Math.max(0, ...keys.map((k) => k.length));
  return keys.map((k) => `${k.padEnd(width)}  ${cellText(record[k])}`).join('\n') + '\n';
}
