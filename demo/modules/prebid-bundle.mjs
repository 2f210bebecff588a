// Assembles a real Prebid.js bundle (core + userId + the SharedID submodule) from the prebuilt chunks the npm
// package ships in dist/chunks — the same concatenation Prebid's own `gulp bundle` does (core, its chunk
// dependencies from dependencies.json, the modules, then `processQueue()`), without running its build offline.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

// The package's exports map hides package.json and dist/chunks, so find it from the project root.
const pkgDir = fileURLToPath(new URL('../../node_modules/prebid.js/', import.meta.url));
const chunks = join(pkgDir, 'dist', 'chunks');
const version = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')).version;

let cached;

/** The bundle's source; `modules` are chunk names (default: userId + sharedIdSystem). */
export function prebidBundle(modules = ['userId', 'sharedIdSystem'], globalName = 'pbjs') {
  if (cached && modules.join() === 'userId,sharedIdSystem' && globalName === 'pbjs') return cached;
  const deps = JSON.parse(readFileSync(join(chunks, 'dependencies.json'), 'utf8'));
  const files = ['prebid-core.js', ...modules.map((m) => m + '.js')];
  const order = [];
  for (const f of files) for (const d of [...(deps[f] || []), f]) if (!order.includes(d)) order.push(d);
  // The core must come first; its dependencies follow it, then the modules (as gulp's bundle() orders them).
  const sorted = [
    'prebid-core.js',
    ...order.filter((f) => f !== 'prebid-core.js' && !files.includes(f)),
    ...files.slice(1),
  ];
  const source = sorted.map((f) => readFileSync(join(chunks, f), 'utf8')).join('\n');
  const out = `/* prebid.js ${version}: ${modules.join(', ')} (assembled from the npm package's dist/chunks) */
if (!window.${globalName} || !window.${globalName}.libLoaded) {
(function(){
${source}
})();
${globalName}.processQueue();
}`;
  if (modules.join() === 'userId,sharedIdSystem' && globalName === 'pbjs') cached = out;
  return out;
}
