// Whether dist/ was built from the sources as they are, so `npm run demo` starts in seconds instead of rebuilding
// everything (a minute or two on a busy machine) on every start. `npm run build` ends by stamping dist/ with a digest
// of what the build reads (src/, the build configurations, package.json and the lock file); the demo builds first
// only when that digest differs, or is missing.
//
//   node demo/build-current.mjs --stamp   write the stamp (the last step of `npm run build`)
//   node demo/build-current.mjs           build with `npm run build` unless dist/ is current (`npm run demo`)
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** The files a build reads besides src/. */
const BUILD_FILES = ['package.json', 'package-lock.json', 'rollup.config.mjs', 'tsconfig.json'];
/** The stamp, inside dist/ so a fresh clone or `rm -rf dist` has none. */
export const STAMP = 'dist/.build-inputs';

/** Every file under `dir`, as paths relative to `root`. */
function filesUnder(root, dir) {
  const out = [];
  for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(root, path));
    else if (entry.isFile()) out.push(path);
  }
  return out;
}

/** SHA-256 over the name and bytes of every file the build reads, in a fixed order. */
export function inputsDigest(root = ROOT) {
  const hash = createHash('sha256');
  const files = [...filesUnder(root, 'src'), ...BUILD_FILES.filter((f) => existsSync(join(root, f)))].sort();
  for (const file of files) {
    hash.update(relative(root, join(root, file)).replaceAll('\\', '/') + '\0');
    hash.update(readFileSync(join(root, file)));
    hash.update('\0');
  }
  return hash.digest('hex');
}

/** True when dist/ carries the stamp of the current inputs. */
export function buildIsCurrent(root = ROOT) {
  try {
    return readFileSync(join(root, STAMP), 'utf8').trim() === inputsDigest(root);
  } catch {
    return false;
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  if (process.argv.includes('--stamp')) writeFileSync(join(ROOT, STAMP), inputsDigest() + '\n');
  else if (buildIsCurrent()) console.log('dist/ is current: not rebuilding (npm run build rebuilds it)');
  else {
    console.log('dist/ is missing or older than the sources: npm run build');
    const r = spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit', shell: process.platform === 'win32' });
    process.exit(r.status ?? 1);
  }
}
