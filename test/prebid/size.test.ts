// The standalone Prebid.js adapter's size budget: dist/prebid/eidkit-adapter.js is at most 1,638 B gzip -9
// (leaving out values that hold an email added 62 B; following the tag's experiments, held-out sources left out and
// the arms sent as `xp`, 47 B). `npm test` builds first, so a change that breaks the budget
// fails here.
import { expect, test } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';

const file = fileURLToPath(new URL('../../dist/prebid/eidkit-adapter.js', import.meta.url));

test('the standalone adapter is at most 1,638 bytes gzip -9', () => {
  expect(existsSync(file), 'run npm run build first').toBe(true);
  const js = readFileSync(file);
  const size = gzipSync(js, { level: 9 }).length;
  console.log(`dist/prebid/eidkit-adapter.js: ${js.length} B minified, ${size} B gzip -9 (budget 1,638 B)`);
  expect(size).toBeLessThanOrEqual(1638);
});

test('the standalone adapter is one IIFE with no module syntax and no Prebid code in it', () => {
  const js = readFileSync(file, 'utf8');
  expect(js).not.toMatch(/^\s*(import|export)\s/m);
  // It reaches Prebid only through the page's global: no bundled copy of Prebid's internals.
  expect(js).not.toMatch(/registerBidder\(|adapterManager|bidderFactory/);
  expect(js).toContain('registerBidAdapter(null');
});
