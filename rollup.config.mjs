// Builds the browser tag:
// - dist/sas.js        the core tag (minified IIFE, `/*! eidkit vX */` banner) — what a network with no modules gets
// - dist/sas.debug.js  the same, readable
// - dist/modules/<name>.js  one add-on IIFE per provider module (src/tag/modules/<name>.ts, issue #5),
//                      concatenated after the core in the per-network script when the operator enables it
// - dist/sas.full.js   the core with every module (src/tag/full.ts, when present), for the full-tag size budget
import typescript from '@rollup/plugin-typescript';
import terser from '@rollup/plugin-terser';
import { nodeResolve } from '@rollup/plugin-node-resolve';
import { existsSync, readdirSync, readFileSync } from 'node:fs';

const { version } = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8'));
const banner = `/*! eidkit v${version} */`;

const plugins = () => [
  nodeResolve({ browser: true }),
  typescript({
    tsconfig: 'src/tag/tsconfig.json',
    compilerOptions: { noEmit: false, declaration: false, outDir: 'dist', rootDir: 'src' },
    include: ['src/tag/**/*.ts', 'src/core/**/*.ts'],
  }),
];
const minify = () => terser({ format: { comments: /^!/ }, compress: { passes: 2 } });

const builds = [
  {
    input: 'src/tag/index.ts',
    output: [
      { file: 'dist/sas.js', format: 'iife', banner, plugins: [minify()] },
      { file: 'dist/sas.debug.js', format: 'iife', banner },
    ],
    plugins: plugins(),
  },
];

// Provider modules: every src/tag/modules/*.ts except types/helpers (files starting with `_` or ending in `.d.ts`).
const moduleDir = 'src/tag/modules';
if (existsSync(moduleDir)) {
  for (const file of readdirSync(moduleDir).filter((f) => f.endsWith('.ts') && !f.startsWith('_') && !f.endsWith('.d.ts'))) {
    const name = file.slice(0, -3);
    builds.push({
      input: `${moduleDir}/${file}`,
      output: [
        { file: `dist/modules/${name}.js`, format: 'iife', plugins: [minify()] },
        { file: `dist/modules/${name}.debug.js`, format: 'iife' },
      ],
      plugins: plugins(),
    });
  }
}

if (existsSync('src/tag/full.ts')) {
  builds.push({
    input: 'src/tag/full.ts',
    output: [
      { file: 'dist/sas.full.js', format: 'iife', banner, plugins: [minify()] },
      { file: 'dist/sas.full.debug.js', format: 'iife', banner },
    ],
    plugins: plugins(),
  });
}

export default builds;
