// The package as another project gets it: `npm pack`, installed from the tarball (offline, from the npm cache),
// each entry point imported, the types checked and the bin run. Needs the build (`npm test` builds first).
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const dir = mkdtempSync(join(tmpdir(), 'eidkit-pack-'));
const project = join(dir, 'app');
const npm = (args: string[], cwd: string) =>
  execFileSync('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, npm_config_update_notifier: 'false' },
  });
const node = (args: string[]) => execFileSync(process.execPath, args, { cwd: project, encoding: 'utf8' });

/** A lock file for the app: eidkit from the tarball, its runtime dependencies as this repository locks them. */
function lockFor(tarball: string, integrity: string) {
  const repoLock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')).packages as Record<string, any>;
  const packages: Record<string, unknown> = {
    '': { name: 'app', version: '1.0.0', dependencies: { eidkit: tarball } },
    'node_modules/eidkit': {
      version: pkg.version,
      resolved: tarball,
      integrity,
      dependencies: pkg.dependencies,
      bin: pkg.bin,
      engines: pkg.engines,
      license: pkg.license,
    },
  };
  const wanted = Object.keys(pkg.dependencies);
  while (wanted.length) {
    const name = wanted.pop()!;
    const entry = repoLock[`node_modules/${name}`];
    if (!entry || packages[`node_modules/${name}`]) continue;
    packages[`node_modules/${name}`] = entry;
    wanted.push(...Object.keys(entry.dependencies ?? {}), ...Object.keys(entry.peerDependencies ?? {}));
  }
  return { name: 'app', version: '1.0.0', lockfileVersion: 3, requires: true, packages };
}

beforeAll(() => {
  if (!existsSync(join(root, 'dist/node/cli/index.js'))) throw new Error('build first: npm run build');
  // --ignore-scripts: `npm pack` would run `prepare` (a full build) again; the build is already there.
  const [packed] = JSON.parse(npm(['pack', '--ignore-scripts', '--json', '--pack-destination', dir], root));
  mkdirSync(project);
  const tarball = `file:../${packed.filename}`;
  writeFileSync(
    join(project, 'package.json'),
    JSON.stringify({ name: 'app', version: '1.0.0', private: true, type: 'module', dependencies: { eidkit: tarball } }),
  );
  // Offline: a lock file naming the versions this repository locks lets npm take every tarball from the cache its
  // own install filled, by integrity, with no registry request (resolving a range would need the registry).
  writeFileSync(join(project, 'package-lock.json'), JSON.stringify(lockFor(tarball, packed.integrity)));
  npm(['install', '--offline'], project);
}, 180_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the packed package installed into another project', () => {
  test('ships dist and the bin, not the sources or tests', () => {
    const installed = join(project, 'node_modules/eidkit');
    expect(existsSync(join(installed, 'dist/node/deals/index.js'))).toBe(true);
    expect(existsSync(join(installed, 'dist/sas.js'))).toBe(true);
    expect(existsSync(join(installed, 'src'))).toBe(false);
    expect(existsSync(join(installed, 'test'))).toBe(false);
  });

  test('ships every guide the CLI help points at (docs/*.md), so an installed user can follow it', () => {
    const installed = join(project, 'node_modules/eidkit');
    const help = ['deals', 'tags', 'decode', 'simulate', 'gvl']
      .map((c) => node([join(installed, 'dist/node/cli/index.js'), c, '--help']))
      .join('\n');
    const named = [...new Set([...help.matchAll(/docs\/[\w-]+\.md/g)].map((m) => m[0]))];
    expect(named.length).toBeGreaterThan(2);
    for (const f of named) expect(existsSync(join(installed, f)), f).toBe(true);
    expect(existsSync(join(installed, 'docs/api')), 'the generated reference stays out').toBe(false);
  });

  test('every Node entry point imports and exports what the README and the guides show', () => {
    const out = node([
      '--input-type=module',
      '-e',
      `const core = await import('eidkit/core');
       const adserver = await import('eidkit/adserver');
       const deals = await import('eidkit/deals');
       const simulator = await import('eidkit/simulator');
       const operator = await import('eidkit/operator');
       const prebid = await import('eidkit/prebid');
       const { default: p } = await import('eidkit/package.json', { with: { type: 'json' } });
       console.log(JSON.stringify({
         core: typeof core.validateEids, adserver: typeof adserver.parseAdCall, deals: typeof deals.DealApiClient,
         simulator: typeof simulator.createDealApiSimulator, version: p.version, tag: import.meta.resolve('eidkit/tag'),
         operator: typeof operator.composeTag, prebid: typeof prebid.register, adapter: import.meta.resolve('eidkit/prebid/adapter'),
       }));`,
    ]);
    const r = JSON.parse(out);
    expect(r).toMatchObject({
      core: 'function',
      adserver: 'function',
      deals: 'function',
      simulator: 'function',
      operator: 'function',
      prebid: 'function',
      version: pkg.version,
    });
    expect(readFileSync(fileURLToPath(r.tag), 'utf8')).toMatch(/sas/);
    expect(readFileSync(fileURLToPath(r.adapter), 'utf8')).toMatch(/registerBidAdapter/);
  });

  test('the types resolve for a TypeScript project importing eidkit/deals', () => {
    // skipLibCheck: the app does not install @types/node, which the declarations use; a missing or unresolvable
    // declaration file still fails (an implicit any under strict).
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'nodenext',
          moduleResolution: 'nodenext',
          target: 'es2022',
          strict: true,
          noEmit: true,
          types: [],
          skipLibCheck: true,
          lib: ['es2022', 'dom'],
        },
        files: ['main.ts'],
      }),
    );
    writeFileSync(
      join(project, 'main.ts'),
      `import { DealApiClient, type CreatedDeal } from 'eidkit/deals';\nimport { parseAdCall } from 'eidkit/adserver';\nconst c = new DealApiClient({ baseUrl: 'https://api.test/', token: 't' });\nconst id: Promise<CreatedDeal['id']> = c.deals.get(1).then((d) => d.id);\nexport { id, parseAdCall };\n`,
    );
    execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', project], {
      cwd: project,
      encoding: 'utf8',
    });
  });

  test('the eidkit bin runs: --version, and decode', () => {
    expect(node([join(project, 'node_modules/.bin/eidkit'), '--version']).trim()).toBe(pkg.version);
    const eids = Buffer.from(JSON.stringify([{ source: 'id5-sync.com', uids: [{ id: 'ID5*x', atype: 1 }] }])).toString(
      'base64',
    );
    expect(node([join(project, 'node_modules/.bin/eidkit'), 'decode', eids])).toMatch(/id5-sync\.com\s+2\s+ID5/);
  });
});
