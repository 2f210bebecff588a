// The tag's size budget: dist/sas.js, the core a network with no modules downloads, is at most 4,978 B gzip -9
// (consent through locator frames and GPP's EU section included; the no-email Referer rule added 60 B, and no
// email in an eid, a uid or a target 18 B).
// `npm test` builds first, so a change that breaks the budget fails here.
import { describe, expect, test } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';

const dist = fileURLToPath(new URL('../dist/', import.meta.url));
const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  version: string;
};
const read = (file: string) => readFileSync(dist + file, 'utf8');

describe('dist/sas.js', () => {
  test('is at most 4,978 bytes gzip -9', () => {
    expect(existsSync(dist + 'sas.js'), 'run npm run build first').toBe(true);
    const size = gzipSync(read('sas.js'), { level: 9 }).length;
    console.log(`dist/sas.js: ${read('sas.js').length} B minified, ${size} B gzip -9 (budget 4,978 B)`);
    expect(size).toBeLessThanOrEqual(4978);
  });

  test('is one minified IIFE with the version banner and no module syntax', () => {
    const js = read('sas.js');
    expect(js.startsWith(`/*! eidkit v${version} */`)).toBe(true);
    expect(js).not.toMatch(/^\s*(import|export)\s/m);
    expect(js.split('\n').length).toBeLessThanOrEqual(3);
    // No provider names in the minified build: only the debug build carries them.
    expect(js).not.toContain('RTB House');
  });

  test('has a readable debug build with the same banner and provider names', () => {
    const js = read('sas.debug.js');
    expect(js.startsWith(`/*! eidkit v${version} */`)).toBe(true);
    expect(js.split('\n').length).toBeGreaterThan(200);
    expect(js).toContain('RTB House');
    expect(js).toContain(`"${version}"`);
  });
});
