import { describe, expect, test } from 'vitest';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { Application, TSConfigReader } from 'typedoc';
import config, { apiEntryPoints } from '../../typedoc.config.mjs';

describe('the API reference (npm run docs)', () => {
  test('TypeDoc builds one module page per package.json entry point, without a warning', async () => {
    const out = mkdtempSync(join(tmpdir(), 'eidkit-api-'));
    try {
      const app = await Application.bootstrapWithPlugins({ ...config, out }, [new TSConfigReader()]);
      const project = await app.convert();
      expect(project, 'TypeDoc could not convert the entry points').toBeDefined();
      await app.generateDocs(project!, out);
      expect(app.logger.hasErrors() || app.logger.hasWarnings(), 'TypeDoc logged warnings or errors (see above)').toBe(false);
      // src/adserver/index.ts is the module "adserver", documented at modules/adserver.html.
      const modules = apiEntryPoints().map((e: { file: string }) => basename(dirname(e.file)));
      expect(project!.children!.map((c) => c.name).sort()).toEqual([...modules].sort());
      for (const name of modules) expect(existsSync(join(out, 'modules', `${name}.html`)), `modules/${name}.html`).toBe(true);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }, 180_000);
});
