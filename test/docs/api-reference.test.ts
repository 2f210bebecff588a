import { describe, expect, test } from 'vitest';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Application, TSConfigReader } from 'typedoc';
import config, { apiEntryPoints } from '../../typedoc.config.mjs';

describe('the API reference (npm run docs)', () => {
  test('TypeDoc builds one described module page per package.json entry point, named as imported, without a warning', async () => {
    const out = mkdtempSync(join(tmpdir(), 'eidkit-api-'));
    try {
      const app = await Application.bootstrapWithPlugins({ ...config, out }, [new TSConfigReader()]);
      const project = await app.convert();
      expect(project, 'TypeDoc could not convert the entry points').toBeDefined();
      // Validation is where TypeDoc finds links to what the reference leaves out: run it as `npm run docs` does.
      app.validate(project!);
      await app.generateDocs(project!, out);
      expect(app.logger.hasErrors() || app.logger.hasWarnings(), 'TypeDoc logged warnings or errors (see above)').toBe(
        false,
      );
      // Modules are named by their import specifier, each with a page and the description atop its index.ts.
      const names = apiEntryPoints()
        .map((e: { name: string }) => e.name)
        .sort();
      expect(project!.children!.map((c) => c.name).sort()).toEqual(names);
      for (const module of project!.children!) {
        expect(
          module.comment?.summary.length,
          `${module.name}: its index.ts needs a /** description … @packageDocumentation */`,
        ).toBeGreaterThan(0);
      }
      expect(readdirSync(join(out, 'modules')).sort()).toEqual(names.map((n: string) => `${n.replace('/', '_')}.html`));
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }, 180_000);
});
