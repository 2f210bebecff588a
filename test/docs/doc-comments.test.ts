import { describe, expect, test } from 'vitest';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { apiEntryPoints } from '../../typedoc.config.mjs';
import { compilerOptionsOf, formatUndocumented, undocumentedExports } from './doc-comments.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const options = compilerOptionsOf(join(root, 'tsconfig.json'));

describe('doc comments on exports', () => {
  test('the entry points come from package.json exports', () => {
    const names = apiEntryPoints(root).map((e: { name: string }) => e.name);
    expect(names).toEqual(
      expect.arrayContaining(['eidkit/core', 'eidkit/adserver', 'eidkit/deals', 'eidkit/simulator']),
    );
  });

  test('every symbol an entry point exports has a doc comment', () => {
    const files = apiEntryPoints(root).map((e: { file: string }) => e.file);
    const missing = undocumentedExports(files, root, options);
    // The message lists each symbol and where it is declared, ready to fix.
    expect(formatUndocumented(missing), `exports without a /** doc comment */:\n${formatUndocumented(missing)}`).toBe(
      '',
    );
  });

  test('an entry point with undocumented exports fails, naming each symbol and its file', () => {
    const fixture = join(root, 'test/docs/fixtures/undocumented/index.ts');
    const missing = undocumentedExports([fixture], root, options);
    expect(missing.map((m) => m.name).sort()).toEqual([
      'StarUndocumented',
      'onlyExample',
      'reexported',
      'undocumented',
    ]);
    expect(missing.find((m) => m.name === 'reexported')).toEqual({
      entry: 'test/docs/fixtures/undocumented/index.ts',
      name: 'reexported',
      declaredAt: 'test/docs/fixtures/undocumented/other.ts:1',
    });
    expect(formatUndocumented(missing)).toContain(
      'test/docs/fixtures/undocumented/index.ts: undocumented (test/docs/fixtures/undocumented/index.ts:6)',
    );
  });
});
