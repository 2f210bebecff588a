/**
 * `eidkit tags build`: the static files an operator puts on a CDN or object store. For every configured network
 * and for `default` (what a network that is not configured should get: the core alone):
 *
 *     tag/<network_id>/sas.js                  sas.js.gz        sas.js.br
 *     tag/<network_id>/sas.debug.js            sas.debug.js.gz  sas.debug.js.br
 *     tag/<network_id>/sas.<version>.js        (and .gz, .br; the same for sas.debug.js): immutable copies
 *     manifest.json                            network, modules, bytes raw / gzip / brotli, SRI hash, tag version
 *
 * The versioned files are named after their content and never change: they are the only URLs a page may pin with
 * Subresource Integrity, since `sas.js` changes whenever the operator switches a module (docs/operator.md,
 * "Subresource Integrity"). Versions of earlier builds are kept, so pages pinned to them keep loading.
 *
 * A file whose bytes did not change is not rewritten (its mtime stays, so a sync to the CDN uploads nothing);
 * files of networks no longer configured are removed.
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { enabledModules, networkExperiments, type ModuleName, type NetworksConfig } from './config.js';
import { composeModules, loadTagFiles, type TagFiles } from './compose.js';
import { createEncoder, versionedFileName } from './encode.js';

/** The folder name of the script for networks that are not configured. */
export const DEFAULT_NETWORK = 'default';

/** The script files built per network. */
export const TAG_FILES = ['sas.js', 'sas.debug.js'] as const;

/**
 * One built script in manifest.json. The Subresource Integrity hash sits only with the versioned copy: paired with
 * `file`, whose content changes at every switch or release, it would break the pages that pinned it.
 */
export interface ManifestEntry {
  /** Network id, or `default`. */
  network: string;
  /** Path under the output folder, e.g. `tag/4321/sas.js`: the URL publishers paste, whose content may change. */
  file: string;
  modules: ModuleName[];
  /** The ids of the network's holdout experiments, when the script serves the experiments add-on. */
  experiments?: string[];
  bytes: { raw: number; gzip: number; brotli: number };
  /** The immutable copy of today's `file` and its hash: the only pair to pin with `<script integrity=…>`. */
  versioned: {
    /** E.g. `tag/4321/sas.1f2e3d4c5b6a7980.js`; never changes, never removed while the network is configured. */
    file: string;
    /** `sha384-…` of its raw bytes. */
    integrity: string;
  };
}

/** manifest.json. */
export interface Manifest {
  /** The tag version the files were built from. */
  tagVersion: string;
  /** Globally disabled modules (the config's `disabledModules`). */
  disabledModules: ModuleName[];
  files: ManifestEntry[];
}

/** Options of {@link buildTags}. */
export interface BuildOptions {
  config: NetworksConfig;
  outDir: string;
  /** Built tag files (default: the package's dist/). */
  files?: TagFiles;
  /** Called after each network with the count done and the total. */
  onProgress?: (done: number, total: number) => void;
}

/** What {@link buildTags} did. */
export interface BuildResult {
  manifest: Manifest;
  networks: number;
  written: number;
  unchanged: number;
  removed: number;
}

/** Writes `data` to `path` unless the file already holds exactly those bytes; true when written. */
async function writeIfChanged(path: string, data: Buffer): Promise<boolean> {
  const old = await readFile(path).catch(() => undefined);
  if (old?.equals(data)) return false;
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, data);
  return true;
}

/** Builds every network's scripts into `outDir` (see the file comment). */
export async function buildTags({
  config,
  outDir,
  files = loadTagFiles(),
  onProgress,
}: BuildOptions): Promise<BuildResult> {
  const encode = createEncoder();
  const ids = [DEFAULT_NETWORK, ...Object.keys(config.networks)];
  const entries: ManifestEntry[] = [];
  let written = 0;
  let unchanged = 0;
  const oldManifest = await readFile(join(outDir, 'manifest.json'), 'utf8')
    .then((t) => JSON.parse(t) as Manifest)
    .catch(() => undefined);

  for (let n = 0; n < ids.length; n++) {
    const network = ids[n];
    const modules = network === DEFAULT_NETWORK ? [] : enabledModules(config, network);
    const experiments = network === DEFAULT_NETWORK ? undefined : networkExperiments(config, network);
    const writes: Promise<boolean>[] = [];
    for (const name of TAG_FILES) {
      const debug = name === 'sas.debug.js';
      const e = encode(composeModules(modules, { files, debug, experiments }), debug);
      const file = `tag/${network}/${name}`;
      const versionedFile = `tag/${network}/${versionedFileName(name, e.version)}`;
      for (const path of [join(outDir, file), join(outDir, versionedFile)]) {
        writes.push(
          writeIfChanged(path, e.raw),
          writeIfChanged(path + '.gz', e.gzip),
          writeIfChanged(path + '.br', e.br),
        );
      }
      const bytes = { raw: e.raw.length, gzip: e.gzip.length, brotli: e.br.length };
      entries.push({
        network,
        file,
        modules,
        experiments: experiments?.map((x) => x.id),
        bytes,
        versioned: { file: versionedFile, integrity: e.integrity },
      });
    }
    for (const w of await Promise.all(writes)) {
      if (w) written++;
      else unchanged++;
    }
    onProgress?.(n + 1, ids.length);
  }

  // Networks dropped from the config: their files go too, so the CDN stops serving a stale module set.
  const keep = new Set(ids);
  const gone = [...new Set((oldManifest?.files ?? []).map((f) => f.network))].filter(
    (id) => !keep.has(id) && /^\d+$/.test(id),
  );
  await Promise.all(gone.map((id) => rm(join(outDir, 'tag', id), { recursive: true, force: true })));

  const manifest: Manifest = { tagVersion: files.version, disabledModules: config.disabledModules, files: entries };
  if (await writeIfChanged(join(outDir, 'manifest.json'), Buffer.from(JSON.stringify(manifest, null, 2) + '\n')))
    written++;
  else unchanged++;
  return { manifest, networks: ids.length, written, unchanged, removed: gone.length };
}
