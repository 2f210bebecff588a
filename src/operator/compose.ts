/**
 * Composing the per-network tag script: the operator switches (`window.__sasop`), the core,
 * then the add-on script of every module enabled for that network: one response, no extra request.
 * See docs/wire-format.md#loading-the-tag-the-network-id-in-the-script-path.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { enabledModules, MODULES, networkExperiments, type ModuleName, type NetworksConfig } from './config.js';
import { MODULE_KEYS, XID_KEY } from '../core/index.js';
import type { Experiment } from '../core/experiments.js';

/** The built files a tag is composed from, read once (minified and debug builds). */
export interface TagFiles {
  /** The tag version, from the core's `/*! eidkit vX *\/` banner. */
  version: string;
  core: string;
  coreDebug: string;
  full: string;
  fullDebug: string;
  modules: Record<ModuleName, string>;
  modulesDebug: Record<ModuleName, string>;
  /** The experiments add-on (`modules/experiments.js`) and its readable build. */
  experiments: string;
  experimentsDebug: string;
}

/**
 * The package's `dist/` folder: this file is dist/node/operator/compose.js once built, and src/operator/compose.ts
 * when run from the sources (tests), where the built tag sits in dist/ at the repository root.
 */
export function defaultDistDir(): string {
  const up2 = fileURLToPath(new URL('../../', import.meta.url));
  return existsSync(join(up2, 'sas.js')) ? up2 : join(up2, 'dist');
}

/** Reads the built tag files from `distDir` (default: the package's own); throws naming a missing file. */
export function loadTagFiles(distDir = defaultDistDir()): TagFiles {
  const read = (file: string) => {
    try {
      return readFileSync(join(distDir, file), 'utf8');
    } catch (e) {
      throw new Error(`tag file ${join(distDir, file)} is missing: build the tag first (npm run build)`, { cause: e });
    }
  };
  const core = read('sas.js');
  const byModule = (ext: string) =>
    Object.fromEntries(MODULES.map((m) => [m, read(`modules/${m}${ext}`)])) as Record<ModuleName, string>;
  return {
    version: /^\/\*! eidkit v(\S+) \*\//.exec(core)?.[1] ?? 'unknown',
    core,
    coreDebug: read('sas.debug.js'),
    full: read('sas.full.js'),
    fullDebug: read('sas.full.debug.js'),
    modules: byModule('.js'),
    modulesDebug: byModule('.debug.js'),
    experiments: read('modules/experiments.js'),
    experimentsDebug: read('modules/experiments.debug.js'),
  };
}

let packageFiles: TagFiles | undefined;

/** Options of {@link composeTag}. */
export interface ComposeOptions {
  /** The readable build (`sas.debug.js`). */
  debug?: boolean;
  /** Built files to compose from; default: the package's dist/, read once. */
  files?: TagFiles;
  /**
   * The network's holdout experiments (config.ts `networkExperiments`): served on the switch line with the
   * experiments add-on; `[]` serves the add-on alone (the pages' own experiments); undefined serves neither.
   */
  experiments?: readonly Experiment[];
}

/**
 * A statement that deletes `keys`, each as a localStorage entry and, when there is one, as a cookie (path `/`; a
 * negative max-age expires it at once), guarded (a sandboxed frame or blocked storage throws): what the modules a
 * script leaves out stored on earlier page views.
 */
export function forgetStatement(keys: readonly string[]): string {
  const cookie = 'document.cookie.includes(n+"=")&&(document.cookie=n+"=;path=/;max-age=-1")';
  return `for(const n of${JSON.stringify(keys)})try{localStorage.removeItem(n);${cookie}}catch(e){}`;
}

/**
 * The keys stored by the modules `modules` leaves out (core/module-keys.ts), in tag order, and the experiments' id
 * when the script leaves the experiments add-on out (`experiments` false).
 */
export function keysLeftOut(modules: readonly ModuleName[], experiments = false): string[] {
  const keys = MODULES.filter((m) => !modules.includes(m)).flatMap((m) => MODULE_KEYS[m] ?? []);
  return experiments ? keys : [...keys, XID_KEY];
}

/**
 * V8's compile hint, the line the build puts under the banner of the core and the full build: the functions below it
 * are compiled while the script streams in rather than on the main thread at their first call. V8 reads it only
 * before the script's first statement, so a composition puts it first (docs/tag.md#what-the-tag-costs-a-slow-phone).
 */
export const COMPILE_HINT = '//# allFunctionsCalledOnLoad';

/** `script` with the compile hint line it holds (if any) moved before `lead`, the statement served before it. */
function withHintFirst(lead: string, script: string): string {
  const at = script.indexOf(COMPILE_HINT + '\n');
  if (at < 0) return lead + '\n' + script;
  return COMPILE_HINT + '\n' + lead + '\n' + script.slice(0, at) + script.slice(at + COMPILE_HINT.length + 1);
}

/**
 * The script for a module list (in tag order) and the network's experiments: what {@link composeTag} serves once
 * the network's modules are known.
 */
export function composeModules(
  modules: readonly ModuleName[],
  { debug = false, files, experiments }: ComposeOptions = {},
): string {
  const f = files ?? (packageFiles ??= loadTagFiles());
  const core = debug ? f.coreDebug : f.core;
  const all = modules.length === MODULES.length;
  // A module the operator switched off is not served, so the script itself deletes what the module stored while it
  // was on (docs/operator.md#a-module-switched-off-leaves-nothing-behind); last, where it costs the fewest bytes. The
  // full build carries the experiments add-on, so it keeps the experiments' id.
  const left = keysLeftOut(modules, all || !!experiments);
  const forget = left.length ? ['\n' + forgetStatement(left)] : [];
  // No module and no experiment: no switch line either (a module that finds no `window.__sasop` counts as not
  // enabled).
  const switches = experiments?.length ? { modules, experiments } : { modules };
  if (!modules.length && !experiments) return [core, ...forget].join('');
  const prelude = `window.__sasop=${JSON.stringify(switches)};`;
  // Every module on: the full build shares its helpers between modules, so it is smaller than core + add-ons.
  // The switch line is the first statement: the compile hint goes before it.
  if (all) return withHintFirst(prelude, debug ? f.fullDebug : f.full);
  const addOns = modules.map((m) => (debug ? f.modulesDebug : f.modules)[m]);
  if (experiments) addOns.push(debug ? f.experimentsDebug : f.experiments);
  return withHintFirst(prelude, [core, ...addOns].join('\n')) + forget.join('');
}

/**
 * The tag script served at `/tag/<networkId>/sas.js` (`debug: true`: `sas.debug.js`): the core alone for a network
 * with no module enabled (or not configured), the full build when every module is on.
 * @example composeTag('4321', loadNetworksConfig('networks.json'))
 */
export function composeTag(networkId: string | number, config: NetworksConfig, options: ComposeOptions = {}): string {
  return composeModules(enabledModules(config, networkId), {
    ...options,
    experiments: networkExperiments(config, networkId),
  });
}
