// Builds demo/modules/cmp-entry.mjs (a real TCF CMP from @iabtcf/core + @iabtcf/cmpapi) into one browser
// script with rollup, once per process.
import { rollup } from 'rollup';
import { nodeResolve } from '@rollup/plugin-node-resolve';
import { fileURLToPath } from 'node:url';

let built;

/** The CMP script's source (an IIFE). */
export function cmpBundle() {
  built ||= (async () => {
    const bundle = await rollup({
      input: fileURLToPath(new URL('./cmp-entry.mjs', import.meta.url)),
      plugins: [nodeResolve({ browser: true })],
      onwarn: () => {},
    });
    const { output } = await bundle.generate({ format: 'iife' });
    return output[0].code;
  })();
  return built;
}
