import { describe, expect, test } from 'vitest';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, statSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { buildTags, composeTag, MODULES, parseNetworksConfig, type Manifest } from '../../src/operator/index.js';

const out = () => mkdtempSync(join(tmpdir(), 'eidkit-cdn-'));
const config = parseNetworksConfig({
  networks: { '1234': { modules: [] }, '4321': { modules: [...MODULES] }, '2345': { modules: ['prebid'] } },
});

describe('buildTags', () => {
  test("writes every network's scripts, a default, precompressed siblings and a manifest whose SRI hashes match the files", async () => {
    const dir = out();
    const r = await buildTags({ config, outDir: dir });
    expect(r.networks).toBe(4);
    const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as Manifest;
    expect(manifest.tagVersion).toMatch(/^\d+\.\d+\.\d+/);
    expect(manifest.files.map((f) => f.file).sort()).toEqual(
      ['default', '1234', '4321', '2345'].flatMap((n) => [`tag/${n}/sas.js`, `tag/${n}/sas.debug.js`]).sort(),
    );
    for (const f of manifest.files) {
      const raw = readFileSync(join(dir, f.file));
      // The hash goes only with the versioned copy, never beside the unversioned file pages must not pin.
      expect(Object.keys(f).sort()).toEqual(['bytes', 'file', 'modules', 'network', 'versioned']);
      expect(Object.keys(f.versioned).sort()).toEqual(['file', 'integrity']);
      expect(f.versioned.integrity).toBe('sha384-' + createHash('sha384').update(raw).digest('base64'));
      expect(f.versioned.file).toMatch(new RegExp(`^${f.file.replace(/\.js$/, '')}\\.[0-9a-f]{16}\\.js$`));
      expect(readFileSync(join(dir, f.versioned.file)).equals(raw)).toBe(true);
      expect(gunzipSync(readFileSync(join(dir, f.file + '.gz'))).equals(raw)).toBe(true);
      expect(brotliDecompressSync(readFileSync(join(dir, f.file + '.br'))).equals(raw)).toBe(true);
      expect(f.bytes).toEqual({
        raw: raw.length,
        gzip: statSync(join(dir, f.file + '.gz')).size,
        brotli: statSync(join(dir, f.file + '.br')).size,
      });
    }
    expect(readFileSync(join(dir, 'tag/2345/sas.js'), 'utf8')).toBe(composeTag(2345, config));
    expect(readFileSync(join(dir, 'tag/default/sas.js'), 'utf8')).toBe(composeTag('default', config));
    expect(manifest.files.find((f) => f.file === 'tag/4321/sas.js')!.modules).toEqual([...MODULES]);
  });

  test("a network's experiments: in its scripts and, by id, in the manifest", async () => {
    const dir = out();
    const xp = parseNetworksConfig({
      networks: { '77': { modules: ['uid2'], experiments: [{ id: 'u2', modules: ['uid2'], share: 5 }] } },
    });
    const { manifest } = await buildTags({ config: xp, outDir: dir });
    expect(readFileSync(join(dir, 'tag/77/sas.js'), 'utf8')).toBe(composeTag(77, xp));
    expect(manifest.files.filter((f) => f.network === '77').map((f) => f.experiments)).toEqual([['u2'], ['u2']]);
    expect(manifest.files.find((f) => f.network === 'default')!.experiments).toBeUndefined();
  });

  test('rewrites only the files that changed, and removes networks no longer configured', async () => {
    const dir = out();
    await buildTags({ config, outDir: dir });
    const old = new Date(2000, 0, 1);
    const files = ['tag/1234/sas.js', 'tag/2345/sas.js', 'tag/2345/sas.js.br', 'manifest.json'];
    for (const f of files) utimesSync(join(dir, f), old, old);
    const again = await buildTags({ config, outDir: dir });
    expect(again.written).toBe(0);
    for (const f of files) expect(statSync(join(dir, f)).mtimeMs).toBe(old.getTime());

    const changed = parseNetworksConfig({ networks: { '1234': { modules: [] }, '2345': { modules: ['uid2'] } } });
    const r = await buildTags({ config: changed, outDir: dir });
    expect(statSync(join(dir, 'tag/1234/sas.js')).mtimeMs).toBe(old.getTime());
    expect(statSync(join(dir, 'tag/2345/sas.js')).mtimeMs).toBeGreaterThan(old.getTime());
    // 2345's two scripts × 3 forms, their two new versioned copies × 3 forms, and the manifest.
    expect(r.written).toBe(13);
    expect(r.removed).toBe(1);
    expect(existsSync(join(dir, 'tag/4321'))).toBe(false);
  });

  test("a page pinned with the manifest's integrity keeps loading the same bytes after the operator enables a module", async () => {
    const dir = out();
    const before = (await buildTags({ config, outDir: dir })).manifest.files.find((f) => f.file === 'tag/2345/sas.js')!;
    const changed = parseNetworksConfig({ networks: { ...config.networks, '2345': { modules: ['prebid', 'uid2'] } } });
    const after = (await buildTags({ config: changed, outDir: dir })).manifest.files.find(
      (f) => f.file === 'tag/2345/sas.js',
    )!;
    // The unversioned URL moved on (so integrity on it would now fail): that is why only the versioned one is pinned.
    const current = readFileSync(join(dir, 'tag/2345/sas.js'));
    expect('sha384-' + createHash('sha384').update(current).digest('base64')).not.toBe(before.versioned.integrity);
    expect(after.versioned.file).not.toBe(before.versioned.file);
    const pinned = readFileSync(join(dir, before.versioned.file));
    expect('sha384-' + createHash('sha384').update(pinned).digest('base64')).toBe(before.versioned.integrity);
    expect(gunzipSync(readFileSync(join(dir, before.versioned.file + '.gz'))).equals(pinned)).toBe(true);
  });

  // Held to CPU time, which the machine's load does not stretch (the wall clock tripled at load 16 on 2 cores): the
  // whole process's, so compression on libuv's threads counts too. Under 10 s of CPU is under 10 s of wall clock on
  // an idle core.
  test('builds 1,000 networks with under 10 seconds of CPU, reporting progress', async () => {
    const networks: Record<string, { modules: string[] }> = {};
    for (let i = 1; i <= 1000; i++) networks[String(100000 + i)] = { modules: MODULES.filter((_, b) => (i >> b) & 1) };
    const big = parseNetworksConfig({ networks });
    const seen: number[] = [];
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    const r = await buildTags({ config: big, outDir: out(), onProgress: (done) => seen.push(done) });
    const { user, system } = process.cpuUsage(cpu0);
    const cpuMs = (user + system) / 1000;
    const wallMs = performance.now() - t0;
    console.log(
      `tags build: 1,000 networks (+ default), ${r.written} files, ${Math.round(cpuMs)} ms CPU, ${Math.round(wallMs)} ms wall`,
    );
    // Per network: sas.js and sas.debug.js, each with its versioned copy, in three forms; and the manifest.
    expect(r.written).toBe(1001 * 12 + 1);
    expect(seen.at(-1)).toBe(1001);
    expect(cpuMs).toBeLessThan(10_000);
  }, 120_000);
});
