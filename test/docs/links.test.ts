import { describe, expect, test } from 'vitest';
import { fileURLToPath } from 'node:url';
import { brokenLinks, formatBroken } from './links.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const fixture = fileURLToPath(new URL('./fixtures/links', import.meta.url));

describe('relative links in README.md and docs/', () => {
  test('every relative link points to a file and heading that exist', () => {
    const broken = brokenLinks(root);
    expect(formatBroken(broken), `links that point nowhere:\n${formatBroken(broken)}`).toBe('');
  });

  test('links to a missing file, a missing heading, outside the repository or to an undefined reference fail, naming file and line', () => {
    expect(formatBroken(brokenLinks(fixture)).split('\n')).toEqual([
      'README.md:17: docs/missing.md: docs/missing.md does not exist',
      'README.md:18: docs/guide.md#no-such-heading: no heading "no-such-heading" in docs/guide.md',
      'README.md:19: #nowhere: no heading "nowhere" in README.md',
      'README.md:20: ../elsewhere/notes.md: points outside the repository (readers on GitHub or npm do not have it)',
      'README.md:21: docs/gone.html: docs/gone.html does not exist',
      'README.md:22: docs/nope.md: docs/nope.md does not exist',
      'README.md:22: [nowhere-ref]: no link definition [nowhere-ref]: … in README.md',
      'docs/guide.md:9: ../README.md#bad: no heading "bad" in README.md',
    ]);
  });
});
