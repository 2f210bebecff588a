/**
 * The loader's copy on disk (gvl-loader.ts): one file per list version, `vendor-list-v{N}.json`. The newest readable
 * one is read when the loader is created, so an ad call right after start-up is decided with it; the others when a
 * TC string names them, in the background, one at a time. A downloaded list is saved, one save at a time, and the
 * oldest files past `maxVersions` removed. A disk error is told, never thrown.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseVendorList, parseVendorListSliced } from './gvl.js';
import type { GlobalVendorList } from './gvl.js';
import { errorText, writeFileAtomic } from './gvl-fetch.js';
import type { GvlLoaderEvent, HeldLists } from './gvl-held.js';

const FILE = /^vendor-list-v(\d{1,4})\.json$/;
const fileOf = (version: number) => `vendor-list-v${version}.json`;

/** The lists saved in a folder, read into `held`. */
export class SavedLists {
  /** Versions on disk not read yet (or saved since). */
  private readonly onDisk = new Set<number>();
  private reading = false;
  private saving = Promise.resolve();

  constructor(
    private readonly dir: string,
    private readonly maxVersions: number,
    private readonly held: HeldLists,
    private readonly tell: (event: GvlLoaderEvent) => void,
  ) {
    mkdirSync(dir, { recursive: true });
  }

  /** Versions saved in the folder, newest first. */
  private versions(): number[] {
    return readdirSync(this.dir)
      .map((f) => FILE.exec(f))
      .filter((m) => m !== null)
      .map((m) => Number(m[1]))
      .sort((a, b) => b - a);
  }

  private loaded(version: number, list: GlobalVendorList, where: string): void {
    if (list.version !== version) throw new Error(`holds version ${list.version}`);
    const { held } = this;
    if (held.hold(list)) this.tell({ type: 'loaded', version, from: 'disk', where, latest: list === held.newest });
  }

  private failed(where: string, e: unknown): void {
    this.tell({ type: 'failed', where, kind: 'disk', message: errorText(e) });
  }

  /** Reads the newest readable list now; notes the others, read when asked (`read`). */
  readNewest(): void {
    for (const version of this.versions().slice(0, this.maxVersions)) {
      if (this.held.newest) {
        this.onDisk.add(version);
        continue;
      }
      const where = join(this.dir, fileOf(version));
      try {
        this.loaded(version, parseVendorList(readFileSync(where, 'utf8')), where);
      } catch (e) {
        this.failed(where, e);
      }
    }
  }

  /** Reads a saved version in the background (one at a time); true when it is on disk. */
  read(version: number): boolean {
    if (!this.onDisk.has(version)) return false;
    if (this.reading) return true;
    this.reading = true;
    const where = join(this.dir, fileOf(version));
    readFile(where, 'utf8')
      .then(parseVendorListSliced)
      .then((list) => this.loaded(version, list, where))
      .catch((e: unknown) => {
        this.onDisk.delete(version);
        this.failed(where, e);
      })
      .finally(() => (this.reading = false));
    return true;
  }

  /** Saves a downloaded list, then removes the oldest files past `maxVersions`; one save at a time. */
  save(list: GlobalVendorList, text: string): Promise<void> {
    return (this.saving = this.saving.then(() => this.saveNow(list, text)));
  }

  private async saveNow(list: GlobalVendorList, text: string): Promise<void> {
    try {
      await writeFileAtomic(join(this.dir, fileOf(list.version)), text);
      this.onDisk.add(list.version);
      for (const v of this.versions().slice(this.maxVersions)) {
        rmSync(join(this.dir, fileOf(v)), { force: true });
        this.onDisk.delete(v);
      }
    } catch (e) {
      this.failed(this.dir, e);
    }
  }
}
