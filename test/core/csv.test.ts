import { describe, expect, test } from 'vitest';
import fc from 'fast-check';
import { csvField, csvRow } from '../../src/core/csv.js';

/** The separators a spreadsheet may split a line on: comma, Excel's `;` in most of Europe, tab, pipe. */
const SEPARATORS = [',', ';', '\t', '|'];

/**
 * The cells a spreadsheet splitting on `sep` sees in one CSV line: quotes honoured only where a cell starts with
 * one (RFC 4180, as Excel and LibreOffice read), or not at all (`naive`).
 */
function cellsOf(line: string, sep: string, naive: boolean): string[] {
  if (naive) return line.split(sep);
  const cells: string[] = [];
  let i = 0;
  for (;;) {
    let cell = '';
    if (line[i] === '"') {
      for (i++; i < line.length; i++) {
        if (line[i] !== '"') cell += line[i];
        else if (line[i + 1] === '"') cell += line[i++];
        else break;
      }
      i++;
    }
    const end = line.indexOf(sep, i);
    cell += end < 0 ? line.slice(i) : line.slice(i, end);
    cells.push(cell);
    if (end < 0) return cells;
    i = end + 1;
  }
}

/** A cell that a spreadsheet would run: `=`, `+`, `-` or `@` first, after any spaces or quotes. */
const isFormula = (cell: string) => /^[\s"]*[=+\-@]/.test(cell);

describe('the CSV writer', () => {
  test.each(['=HYPERLINK("http://x.test","click")', '+1+2', '-2+3', '@SUM(A1:A2)', '\tcmd', '\rcmd'])(
    'writes %j as text, not a formula',
    (text) => {
      const field = csvField(text);
      const unquoted = field.startsWith('"') ? field.slice(1, -1).replace(/""/g, '"') : field;
      expect(unquoted).toBe(`'${text}`);
    },
  );

  test('keeps numbers and booleans as data, negative numbers included', () => {
    expect(csvRow([-2, 0.5, true, null, undefined])).toBe('-2,0.5,true,,\r\n');
  });

  test('quotes fields holding a comma, quote or line break (RFC 4180)', () => {
    expect(csvRow(['a,b', 'say "hi"', 'two\nlines', 'plain'])).toBe('"a,b","say ""hi""","two\nlines",plain\r\n');
  });

  test('joins arrays with ; and writes objects as JSON, defusing and quoting the result', () => {
    expect(csvField([1, 2, 3])).toBe('"1;2;3"');
    expect(csvField(['=1', 'x', '@y'])).toBe(`"'=1;x;'@y"`);
    expect(csvField({ a: 1 })).toBe('"{""a"":1}"');
  });

  test('a formula after a semicolon is defused and the field quoted: no reader splitting on ; runs it', () => {
    const row = csvRow([100001, "Summer promo;=cmd|' /C calc'!A0", 2.5]);
    expect(row).toBe(`100001,"Summer promo;'=cmd|' /C calc'!A0",2.5\r\n`);
    for (const naive of [false, true]) expect(cellsOf(row.trimEnd(), ';', naive).filter(isFormula)).toEqual([]);
  });

  test.each(SEPARATORS)('quotes a field holding %j, a list separator of some spreadsheet', (sep) => {
    expect(csvField(`a${sep}b`)).toBe(`"a${sep}b"`);
  });

  test('whatever the text, no cell of the line is a formula for a spreadsheet splitting on , ; tab or |', () => {
    const piece = fc.constantFrom('=', '+', '-', '@', ' ', '"', "'", ',', ';', '\t', '|', '\r', '\n', 'a', '1', 'cmd');
    const text = fc.array(piece, { maxLength: 12 }).map((p) => p.join(''));
    fc.assert(
      fc.property(fc.array(text, { minLength: 1, maxLength: 4 }), (texts) => {
        const line = csvRow(texts).slice(0, -2);
        for (const sep of SEPARATORS)
          for (const naive of [false, true])
            for (const cell of cellsOf(line, sep, naive).flatMap((c) => c.split(/[\r\n]/)))
              expect(isFormula(cell), `${JSON.stringify(line)} split on ${JSON.stringify(sep)}`).toBe(false);
      }),
      { numRuns: 2_000 },
    );
  });
});
