// The repository stands alone: no file points at documents a clone does not have or at issue numbers, and every
// guide section a comment links exists.
import { describe, expect, test } from 'vitest';
import { fileURLToPath } from 'node:url';
import { deadGuideLinks, outsideReferences, repositoryFiles, rulesBroken } from './standalone.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const files = repositoryFiles(root);

describe('references in the repository', () => {
  test('no file points outside the repository: no specification path or name, section number or issue number', () => {
    const found = outsideReferences(root, files).map((r) => `${r.at}: ${r.rule}: ${r.text}`);
    expect(found, `references outside the repository:\n${found.join('\n')}`).toEqual([]);
  });

  test('every guide section a code file links (docs/<guide>.md#<anchor>) exists', () => {
    // test/docs holds the link checkers' own examples of broken links.
    const dead = deadGuideLinks(
      root,
      files.filter((f) => !f.startsWith('test/docs/')),
    ).map((d) => `${d.at}: ${d.target}: ${d.reason}`);
    expect(dead, `links to missing guides or headings:\n${dead.join('\n')}`).toEqual([]);
  });

  test('the walk sees the source, the tests, the demo and the guides', () => {
    for (const f of [
      'src/tag/tag.ts',
      'test/docs/standalone.ts',
      'demo/server.mjs',
      'docs/wire-format.md',
      'rollup.config.mjs',
    ]) {
      expect(files).toContain(f);
    }
  });

  // The samples are assembled at run time so that this file does not break the rules it tests.
  const sample = (...parts: string[]) => parts.join('');
  const section = '\u00a7';
  test.each([
    [sample('see ../shared/', 'spec/x.md'), 'path to the specifications folder'],
    [sample('extended-ids', '.md ', section, '4'), 'specification file name'],
    [sample('domain-', 'notes.md "Consent"'), 'specification file name'],
    [sample('(iss', 'ue #17)'), 'issue number'],
    [sample('(iss', 'ue 5)'), 'issue number'],
    [sample('(iss', 'ues #5, #12)'), 'issue number'],
    [sample('reset (sp', 'ec 4.3)'), 'specification section number'],
    [sample('the two-step flow of sp', 'ec ', section, '5'), 'specification section number'],
    [sample('it overrides pid, ', section, '2.3'), 'section sign without a public standard'],
    [sample('  // 2', '.1: end after begin.'), 'comment opening with a section number'],
    [sample('  // 2', '.1 / 7: a DSP without multiple-buyer support'), 'comment opening with a section number'],
  ])('flags %j as a %s', (line, rule) => {
    expect(rulesBroken(line)).toContain(rule);
  });

  test.each([
    sample('weak validators compare weakly (RFC 9110 ', section, '13.1.2)'),
    sample('Provenance (OpenRTB 2.6 ', section, '3.2.27) is kept exactly as sent'),
    'registers the spec under its code with GVL id 45',
    'each problem is one issue per field',
    'see docs/wire-format.md#the-eid-and-uid-objects',
    '  // 2.5 and 2.6 name the eids array differently',
    '      // 0: decoded; 2: a usage error (commander); 3: the eids could not be decoded',
  ])('lets %j pass', (line) => {
    expect(rulesBroken(line)).toEqual([]);
  });
});
