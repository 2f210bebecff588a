#!/usr/bin/env node
// The eid sources Prebid.js's user-id modules send, read from the `prebid.js` npm package itself: every
// `modules/*IdSystem.js` of its prebuilt ES modules is imported under a happy-dom window, and each submodule's
// `eids` configuration is asked for its source (a fixed `source`, a `getSource(data)` or a function building the
// eids). The registry test (registry-prebid.test.ts) runs this at test time and compares it with the checked-in
// evidence table, prebid-sources.json, which `node test/core/prebid-sources.mjs --write` regenerates with the
// provider our registry gives each source (from dist/: run `npm run build` first). Without `--write` it prints
// the rows as JSON. docs/providers.md, "Sources as Prebid.js sends them", says what the table means.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Window } from 'happy-dom';

const here = dirname(fileURLToPath(import.meta.url));
const pkgDir = join(here, '../../node_modules/prebid.js');
const modulesDir = join(pkgDir, 'dist/src/modules');
const TABLE = join(here, 'prebid-sources.json');

// Modules whose submodule lives elsewhere: liveIntentIdSystem picks its implementation with a build-time
// `require`, which an ES module import cannot run, so its standard implementation is read directly.
const IMPLEMENTATION = { liveIntentIdSystem: '../libraries/liveIntentId/idSystem.js' };

// Data for the `getSource(data)` functions that build the source from the id data. Merkle's module sends
// `<ssp>.merkleinc.com` for each SSP its server matched, or `merkleinc.com`; ssp1 and ssp2 are the SSP names of
// Prebid's own tests (the registry takes any subdomain of merkleinc.com as Merkle's).
const GET_SOURCE_DATA = { merkleId: [{}, { ext: { ssp: 'ssp1' } }, { ext: { ssp: 'ssp2' } }] };
// Values for the eids configurations that are functions (they map the stored ids to eid objects).
const FUNCTION_VALUES = [{ id: 'probe-id', uid: 'probe-id', atype: 1 }];
// A `getSource` that returns this for `{ source: PROBE }` passes on whatever source the provider's server named.
const PROBE = 'probe.invalid';

/** The sources one `eids` entry sends: `[{ source, how }]`; `source` null when the provider's server names it. */
function sourcesOf(key, conf) {
  if (typeof conf === 'function') {
    const eids = [conf(FUNCTION_VALUES, {})].flat();
    return [...new Set(eids.map((e) => e?.source))].map((source) => ({ source, how: 'function' }));
  }
  if (typeof conf.getSource !== 'function') return [{ source: conf.source, how: 'source' }];
  if (conf.getSource({ source: PROBE }) === PROBE) {
    // The module passes the server's source on; the fixed `source` beside it, if any, is the usual one.
    return [{ source: typeof conf.source === 'string' ? conf.source : null, how: 'server' }];
  }
  const found = (GET_SOURCE_DATA[key] ?? [{}]).map((data) => conf.getSource(data));
  return [...new Set(found)].map((source) => ({ source, how: 'getSource' }));
}

/** Every (module, id key, source) the package's user-id modules send, sorted; modules without `eids` too. */
export async function prebidSources() {
  const window = new Window({ url: 'https://publisher.example/' });
  const globals = ['window', 'document', 'navigator', 'location', 'localStorage', 'sessionStorage'];
  for (const k of globals) {
    Object.defineProperty(globalThis, k, { value: k === 'window' ? window : window[k], configurable: true });
  }
  const { version } = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'));
  const rows = [];
  const withoutEids = [];
  try {
    const files = readdirSync(modulesDir)
      .filter((f) => /IdSystem\.js$/.test(f))
      .sort();
    for (const file of files) {
      const module = file.slice(0, -3);
      const mod = await import(pathToFileURL(join(modulesDir, IMPLEMENTATION[module] ?? file)).href);
      const subs = Object.values(mod).filter((v) => typeof v?.eids === 'object' && v.eids !== null);
      if (!subs.length) withoutEids.push(module);
      for (const sub of subs) {
        for (const [key, conf] of Object.entries(sub.eids)) {
          for (const s of sourcesOf(key, conf)) rows.push({ module, key, ...s });
        }
      }
    }
  } finally {
    await window.happyDOM.close();
    for (const k of globals) delete globalThis[k];
  }
  const order = (r) => `${r.module} ${r.key} ${r.source}`;
  rows.sort((a, b) => order(a).localeCompare(order(b)));
  return { version, rows, withoutEids };
}

/** The checked-in evidence table: the package version, each row with the provider our registry gave it. */
export function readTable() {
  return JSON.parse(readFileSync(TABLE, 'utf8'));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const found = await prebidSources();
  if (process.argv.includes('--write')) {
    const { providerForSource } = await import(pathToFileURL(join(here, '../../dist/node/core/index.js')).href);
    const rows = found.rows.map((r) => {
      const p = r.source === null ? undefined : providerForSource(r.source);
      return p ? { ...r, provider: p.id, name: p.name } : r;
    });
    // One row a line, so a diff of the table reads as a list of changed mappings.
    const lines = rows.map((r) => `    ${JSON.stringify(r)}`).join(',\n');
    const head = [`"prebid": ${JSON.stringify(found.version)}`, `"withoutEids": ${JSON.stringify(found.withoutEids)}`];
    writeFileSync(TABLE, `{\n  ${head.join(',\n  ')},\n  "rows": [\n${lines}\n  ]\n}\n`);
    process.stdout.write(`wrote ${TABLE}: ${rows.length} sources of prebid.js ${found.version}\n`);
  } else {
    process.stdout.write(JSON.stringify(found) + '\n');
  }
}
