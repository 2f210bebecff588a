// The README is the landing page: what eidkit is, the two commands, a tour per reader and links, at most 12 KB.
// Everything else lives in the guides (docs/), where the link checks (links.test.ts) follow it.
import { expect, test } from 'vitest';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const readme = readFileSync(join(root, 'README.md'), 'utf8');

test('the README stays a landing page: at most 12 KB', () => {
  const bytes = statSync(join(root, 'README.md')).size;
  expect(bytes, `README.md is ${bytes} B`).toBeLessThanOrEqual(12_288);
});

test('the README has the two commands, the tours and the links to the guides, and no reference section', () => {
  const headings = [...readme.matchAll(/^## (.+)$/gm)].map((m) => m[1]);
  expect(headings).toEqual([
    'Two commands (fresh Debian 12, Node 20, as root)',
    'Five-minute tours',
    'Privacy: what is enforced where',
    'More',
    'License',
  ]);
  expect(readme).toContain('npm install && npm run demo');
  expect(readme).toContain('npm install && npm test');
  for (const guide of ['tag', 'operator', 'ad-server', 'deals', 'simulator', 'providers', 'project']) {
    expect(readme).toContain(`(docs/${guide}.md`);
  }
});

test('no paragraph of the README or a guide is written twice in it', () => {
  const guides = readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md'));
  for (const file of ['README.md', ...guides.map((g) => join('docs', g))]) {
    const text = readFileSync(join(root, file), 'utf8').replace(/```[\s\S]*?```/g, '');
    const paragraphs = text
      .split(/\n\s*\n/)
      .map((p) => p.trim())
      .filter((p) => p.length > 80 && !p.startsWith('|'));
    const repeated = paragraphs.filter((p, i) => paragraphs.indexOf(p) !== i);
    expect(repeated, `${file} repeats a paragraph`).toEqual([]);
  }
});
