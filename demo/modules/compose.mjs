// Composes the per-network tag script (extended-ids.md §4: the feature is enabled per network by the operator):
// the operator switches, the core, then the add-on script of every module enabled for that network — one
// response, no extra request. A network with no modules gets the core alone.
import { readFileSync } from 'node:fs';

const root = new URL('../../', import.meta.url);
const networks = JSON.parse(readFileSync(new URL('demo/networks.json', root), 'utf8'));

/** Every provider module (src/tag/modules/*.ts, built to dist/modules). */
export const ALL = ['identityLink', 'idLinking', 'criteo', 'uid2', 'prebid'];

/** The module names the operator enabled for `networkId` (none for an unknown network). */
export function enabledModules(networkId) {
  const m = networks[String(networkId)]?.modules;
  return Array.isArray(m) ? m.filter((x) => typeof x === 'string' && /^[A-Za-z0-9]+$/.test(x)) : [];
}

/** The script for `networkId`, from the built files in dist/ (`debug` picks the readable builds). */
export function composeTag(networkId, { debug = false, core } = {}) {
  const ext = debug ? '.debug.js' : '.js';
  const modules = enabledModules(networkId);
  // No module enabled: no switch line either (a module that finds no `window.__sasop` counts as not enabled), so the
  // network gets the built core byte for byte.
  if (modules.length === 0) return core ?? readFileSync(new URL(`dist/sas${ext}`, root), 'utf8');
  const prelude = `window.__sasop=${JSON.stringify({ modules })};`;
  // Every module on: the full build shares its helpers between modules, so it is smaller than core + add-ons.
  if (!core && ALL.every((m) => modules.includes(m))) return prelude + '\n' + readFileSync(new URL(`dist/sas.full${ext}`, root), 'utf8');
  const parts = [prelude, core ?? readFileSync(new URL(`dist/sas${ext}`, root), 'utf8')];
  for (const name of modules) parts.push(readFileSync(new URL(`dist/modules/${name}${ext}`, root), 'utf8'));
  return parts.join('\n');
}
