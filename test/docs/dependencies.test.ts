// The "Dependencies" section of docs/project.md names every package package.json depends on, so a new dependency
// comes with its reason, and a package said to be unused is not in package.json.
import { expect, test } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const project = readFileSync(join(root, 'docs', 'project.md'), 'utf8');

/** The text of docs/project.md's `## Dependencies` section. */
function dependenciesSection(): string {
  const start = project.indexOf('\n## Dependencies\n');
  if (start < 0) throw new Error('docs/project.md has no "## Dependencies" section');
  const end = project.indexOf('\n## ', start + 1);
  return project.slice(start, end < 0 ? undefined : end);
}

const kinds = ['dependencies', 'devDependencies', 'peerDependencies'] as const;

test('docs/project.md names every runtime, build and peer dependency of package.json in its Dependencies section', () => {
  const section = dependenciesSection();
  const named = (name: string) => section.includes(`\`${name}\``);
  const unnamed = kinds.flatMap((kind) => Object.keys(pkg[kind] ?? {}).filter((name) => !named(name)));
  expect(unnamed, 'packages in package.json that the Dependencies section does not name').toEqual([]);
});

test('a package the Dependencies section calls not used is in no dependency list', () => {
  const unused = [...dependenciesSection().matchAll(/Not used: \*\*([\w@/.-]+)\*\*/g)].map((m) => m[1]);
  expect(unused).toContain('js-base64');
  for (const name of unused) for (const kind of kinds) expect(pkg[kind]?.[name], `${name} in ${kind}`).toBeUndefined();
});
