// Size budgets of the tag: the core with its built-in consent reader (and V8's compile hint) is at most 5,010 B gzip; a network with no
// modules downloads it followed by the statement that deletes what switched-off modules and experiments stored (81 B
// more); the full tag with every module and the experiments add-on stays within 11,548 B. Measured with gzip -9 on the
// built files, so `npm test` (which builds first) fails when a change breaks a budget.
import { describe, expect, test } from 'vitest';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { composeTag, MODULES as ALL, parseNetworksConfig } from '../src/operator/index.js';

const dist = fileURLToPath(new URL('../dist/', import.meta.url));
const gz = (text: string | Buffer) => gzipSync(text, { level: 9 }).length;
const sizeOf = (file: string) => gz(readFileSync(dist + file));
const CORE = 5010;
/** What the statement deleting the modules' keys adds to the script of a network with no module (measured). */
const FORGET = 81;
const FULL = 11548;
const config = parseNetworksConfig({ networks: { '1234': { modules: [] }, '4321': { modules: [...ALL] } } });

describe('tag size budgets (gzip -9)', () => {
  test('the core with the consent reader is at most 5,010 bytes; as served to a network with no modules, 81 more', () => {
    expect(existsSync(dist + 'sas.js'), 'dist/sas.js is built').toBe(true);
    const core = sizeOf('sas.js');
    const served = gz(composeTag(1234, config));
    console.log(`core dist/sas.js: ${core} B gzip; served to a network with no modules: ${served} B gzip`);
    expect(core).toBeLessThanOrEqual(CORE);
    expect(served).toBeLessThanOrEqual(CORE + FORGET);
  });

  test('the full tag with every module and the experiments add-on is at most 11,548 bytes', () => {
    expect(existsSync(dist + 'sas.full.js'), 'dist/sas.full.js is built').toBe(true);
    const full = sizeOf('sas.full.js');
    console.log(
      `full dist/sas.full.js: ${full} B gzip; served with every module enabled: ${gz(composeTag(4321, config))} B gzip`,
    );
    expect(full).toBeLessThanOrEqual(FULL);
    expect(gz(composeTag(4321, config))).toBeLessThanOrEqual(FULL);
  });

  test('the render add-on (dist/addons/render.js), outside the core, is at most 1,280 bytes', () => {
    const render = sizeOf('addons/render.js');
    console.log(`render add-on dist/addons/render.js: ${render} B gzip`);
    expect(render).toBeLessThanOrEqual(1280);
  });

  test('every module is built as its own add-on script', () => {
    const built = readdirSync(dist + 'modules').filter((f) => f.endsWith('.js') && !f.endsWith('.debug.js'));
    for (const name of ALL) expect(built).toContain(`${name}.js`);
    console.log('add-on modules (gzip):', Object.fromEntries(ALL.map((n) => [n, sizeOf(`modules/${n}.js`)])));
  });

  test("docs/project.md gives each add-on module's size as built, within 2 %", () => {
    const project = readFileSync(fileURLToPath(new URL('../docs/project.md', import.meta.url)), 'utf8');
    for (const name of ALL) {
      const row = new RegExp(`^\\| \`dist/modules/${name}\\.js\` gzip[^|]*\\|[^|]*\\| ([\\d,]+) B \\|`, 'm').exec(
        project,
      );
      expect(row, `docs/project.md has no size row for dist/modules/${name}.js`).not.toBeNull();
      const documented = Number(row![1].replace(/,/g, ''));
      const built = sizeOf(`modules/${name}.js`);
      expect(
        Math.abs(documented - built) / built,
        `${name}: documented ${documented} B, built ${built} B`,
      ).toBeLessThan(0.02);
    }
  });
});
