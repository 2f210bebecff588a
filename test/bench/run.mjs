#!/usr/bin/env node
// `npm run bench`: runs every test/bench/*.bench.mjs in turn. Each prints ratios measured side by side.
import { readdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const dir = fileURLToPath(new URL('.', import.meta.url));
const only = process.argv[2];
let failed = 0;
for (const f of readdirSync(dir)
  .filter((n) => n.endsWith('.bench.mjs'))
  .sort()) {
  if (only && !f.includes(only)) continue;
  console.log(`\n### ${f}`);
  const r = spawnSync(process.execPath, ['--expose-gc', dir + f], { stdio: 'inherit' });
  if (r.status !== 0) failed++;
}
process.exit(failed ? 1 : 0);
