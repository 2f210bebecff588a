// Builds the browser tag:
// - dist/sas.js        the core tag (minified IIFE, `/*! eidkit vX */` banner) — what a network with no modules gets
// - dist/sas.debug.js  the same, readable
// - dist/modules/<name>.js  one add-on IIFE per provider module (src/tag/modules/<name>.ts),
//                      concatenated after the core in the per-network script when the operator enables it
// - dist/addons/<name>.js  page add-ons outside the core (src/tag/addons/<name>.ts): render.js shows the answer's ads
// - dist/sas.full.js   the core with every module (src/tag/full.ts, when present), for the full-tag size budget
// - dist/prebid/eidkit-adapter.js  the standalone Prebid.js bid adapter (src/prebid/standalone.ts),
//                      and dist/prebid/index.js, the `eidkit/prebid` ES module for publishers who build Prebid from npm
import typescript from '@rollup/plugin-typescript';
import terser from '@rollup/plugin-terser';
import { nodeResolve } from '@rollup/plugin-node-resolve';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const abs = (p) => fileURLToPath(new URL(p, import.meta.url));
const { version } = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8'));
const banner = `/*! eidkit v${version} */`;

// Build-time constants of the tag sources (src/tag/log.ts, src/tag/tag.ts): the minified build folds
// `__SAS_DEBUG_BUILD__` to false and drops the verbose branches; the debug build logs by default.
const define = (debug) => ({
  name: 'eidkit-define',
  transform(code, id) {
    if (!id.includes('/src/')) return null;
    return {
      // `typeof X !== 'undefined'` guards (which keep the sources runnable unbundled, in vitest) fold to true.
      code: code
        .replace(/typeof (__SAS_\w+__) !== 'undefined'/g, 'true')
        .replaceAll('__SAS_DEBUG_BUILD__', String(debug))
        .replaceAll('__SAS_VERSION__', JSON.stringify(version)),
      map: null,
    };
  },
});

// `debug`: true for the readable *.debug.js builds, false for the minified ones.
const plugins = (debug) => [
  nodeResolve({ browser: true }),
  typescript({
    tsconfig: 'src/tag/tsconfig.json',
    // Bundler resolution: rollup resolves the `.js` specifiers of the NodeNext sources to the `.ts` files.
    // Absolute paths: the plugin resolves rootDir against the tsconfig's folder and `include` against rootDir.
    compilerOptions: {
      noEmit: false,
      declaration: false,
      outDir: abs('dist'),
      rootDir: abs('src'),
      module: 'esnext',
      moduleResolution: 'bundler',
    },
    filterRoot: abs('.'),
    include: ['src/tag/**/*.ts', 'src/core/**/*.ts'],
  }),
  define(debug),
];
// Property mangling is limited to names that never cross the bundle's boundary (not the page API, not the
// extension contract, not DOM or consent platform fields): each build is one IIFE, so renaming them is safe.
const INTERNAL_PROPS = /^(maxEids|maxUids|maxIdLength|kept|dropped|register|collect|issues)$/;
const minify = () =>
  terser({
    format: { comments: /^!/ },
    ecma: 2020,
    toplevel: true,
    compress: {
      passes: 4,
      inline: 1,
      sequences: false,
      unsafe: true,
      unsafe_arrows: true,
      unsafe_methods: true,
      pure_getters: true,
    },
    mangle: { properties: { regex: INTERNAL_PROPS } },
  });

/** Two builds of one entry: minified (`file`) and readable with debug logging on (`debugFile`). */
const pair = (input, file, debugFile, extra = {}) => [
  // No "use strict" directive in the minified builds (the sources are strict-mode clean; 13 bytes).
  {
    input,
    onwarn,
    output: { file, format: 'iife', strict: false, plugins: [minify()], ...extra },
    plugins: plugins(false),
  },
  { input, onwarn, output: { file: debugFile, format: 'iife', ...extra }, plugins: plugins(true) },
];

/**
 * Module entries export their pieces for the unit tests; in the IIFE those exports are meant to be dropped (a
 * module registers itself through `window.__sasx`, and an `output.name` would only add a page global).
 */
function onwarn(warning, warn) {
  if (warning.code === 'MISSING_NAME_OPTION_FOR_IIFE_EXPORT') return;
  warn(warning);
}

const builds = [...pair('src/tag/index.ts', 'dist/sas.js', 'dist/sas.debug.js', { banner })];

// Provider modules: every src/tag/modules/*.ts except types/helpers (files starting with `_` or ending in `.d.ts`).
const moduleDir = 'src/tag/modules';
if (existsSync(moduleDir)) {
  for (const file of readdirSync(moduleDir).filter(
    (f) => f.endsWith('.ts') && !f.startsWith('_') && !f.endsWith('.d.ts'),
  )) {
    const name = file.slice(0, -3);
    builds.push(...pair(`${moduleDir}/${file}`, `dist/modules/${name}.js`, `dist/modules/${name}.debug.js`));
  }
}

// Page add-ons that are not provider modules (src/tag/addons/<name>.ts → dist/addons/<name>.js): a publisher adds
// the script tag beside sas.js; none is part of the core or of the per-network script.
const addonDir = 'src/tag/addons';
if (existsSync(addonDir)) {
  for (const file of readdirSync(addonDir).filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))) {
    const name = file.slice(0, -3);
    builds.push(...pair(`${addonDir}/${file}`, `dist/addons/${name}.js`, `dist/addons/${name}.debug.js`, { banner }));
  }
}

if (existsSync('src/tag/full.ts')) {
  builds.push(...pair('src/tag/full.ts', 'dist/sas.full.js', 'dist/sas.full.debug.js', { banner }));
}

// The Prebid.js adapter: its own sources and tsconfig (it shares nothing with the tag, to stay small), plus the
// core's email detector (src/core/pii.ts), the one the tag and the ad server use.
const prebidTs = () =>
  typescript({
    tsconfig: 'src/prebid/tsconfig.json',
    compilerOptions: {
      noEmit: false,
      declaration: false,
      emitDeclarationOnly: false,
      outDir: abs('dist'),
      rootDir: abs('src'),
      module: 'esnext',
      moduleResolution: 'bundler',
    },
    filterRoot: abs('.'),
    include: ['src/prebid/**/*.ts', 'src/core/pii.ts'],
  });
if (existsSync('src/prebid/standalone.ts')) {
  builds.push(
    {
      input: 'src/prebid/standalone.ts',
      onwarn,
      output: { file: 'dist/prebid/eidkit-adapter.js', format: 'iife', strict: false, banner, plugins: [minify()] },
      plugins: [prebidTs()],
    },
    {
      input: 'src/prebid/standalone.ts',
      onwarn,
      output: { file: 'dist/prebid/eidkit-adapter.debug.js', format: 'iife', banner },
      plugins: [prebidTs()],
    },
    {
      input: 'src/prebid/index.ts',
      onwarn,
      output: { file: 'dist/prebid/index.js', format: 'es', banner },
      plugins: [prebidTs()],
    },
  );
}

export default builds;
