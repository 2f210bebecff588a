// Builds the browser tag: dist/sas.js (minified IIFE with banner) and dist/sas.debug.js (readable).
import typescript from '@rollup/plugin-typescript';
import terser from '@rollup/plugin-terser';
import { nodeResolve } from '@rollup/plugin-node-resolve';
import { readFileSync } from 'node:fs';

const { version } = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8'));
const banner = `/*! eidkit v${version} */`;

const ts = () =>
  typescript({ tsconfig: 'src/tag/tsconfig.json', compilerOptions: { noEmit: false, declaration: false, outDir: 'dist', rootDir: 'src' }, include: ['src/tag/**/*.ts', 'src/core/**/*.ts'] });

export default [
  {
    input: 'src/tag/index.ts',
    output: [
      { file: 'dist/sas.js', format: 'iife', banner, plugins: [terser({ format: { comments: /^!/ }, compress: { passes: 2 } })] },
      { file: 'dist/sas.debug.js', format: 'iife', banner },
    ],
    plugins: [nodeResolve({ browser: true }), ts()],
  },
];
