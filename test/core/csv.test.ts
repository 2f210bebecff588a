import { describe, expect, test } from 'vitest';
import { csvField, csvRow } from '../../src/core/csv.js';

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

  test('joins arrays with ; and writes objects as JSON, defusing the result', () => {
    expect(csvField([1, 2, 3])).toBe('1;2;3');
    expect(csvField(['=1', 'x'])).toBe("'=1;x");
    expect(csvField({ a: 1 })).toBe('"{""a"":1}"');
  });
});
