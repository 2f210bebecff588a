// Bundles npm-entry.mjs (Prebid.js from its npm modules + the `eidkit/prebid` adapter) into one browser script
// with rollup, once per process (about 4 s).
import { rollup } from 'rollup';
import { nodeResolve } from '@rollup/plugin-node-resolve';
import commonjs from '@rollup/plugin-commonjs';
import { fileURLToPath } from 'node:url';

let built;

/** The bundle's source (an IIFE). */
export function prebidNpmBundle() {
  built ||= (async () => {
    const bundle = await rollup({
      input: fileURLToPath(new URL('./npm-entry.mjs', import.meta.url)),
      // Prebid's npm package depends on a CommonJS library (fun-hooks).
      plugins: [nodeResolve({ browser: true }), commonjs()],
      onwarn: (w, warn) => w.code !== 'CIRCULAR_DEPENDENCY' && warn(w),
    });
    const { output } = await bundle.generate({ format: 'iife' });
    return output[0].code;
  })();
  return built;
}
