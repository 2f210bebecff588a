/**
 * The Global Vendor Lists a loader holds in memory (gvl-loader.ts), and what it tells of them: at most `maxVersions`,
 * the one asked least recently going first, never the newest; a list never replaces a newer one as the latest.
 */
import type { GlobalVendorList } from './gvl.js';
import type { GvlFetchFailure } from './gvl-fetch.js';

/** What the loader tells `onEvent`. */
export type GvlLoaderEvent =
  | { type: 'loaded'; version: number; from: 'network' | 'disk'; where: string; latest: boolean }
  | { type: 'failed'; where: string; kind: GvlFetchFailure | 'disk'; message: string };

/** Tells a listener an event; a listener's error is its own, never thrown into the loader. */
export function teller(onEvent: ((event: GvlLoaderEvent) => void) | undefined): (event: GvlLoaderEvent) => void {
  return (event) => {
    try {
      onEvent?.(event);
    } catch {
      // A listener's error is its own.
    }
  };
}

/** The lists held, least recently asked first (a Map keeps insertion order; a hit moves the list to the end). */
export class HeldLists {
  private readonly lists = new Map<number, GlobalVendorList>();
  /** The newest list held. */
  newest: GlobalVendorList | undefined;
  /** Changes whenever what `get` or `newest` answer may change. */
  generation = 0;

  constructor(private readonly maxVersions: number) {}

  /** Adds a list; true when it changed what the loader answers. */
  hold(list: GlobalVendorList): boolean {
    const lists = this.lists;
    if (lists.has(list.version)) return false;
    lists.set(list.version, list);
    if (!this.newest || list.version > this.newest.version) this.newest = list;
    // Past the cap, the list asked least recently goes (never the newest).
    for (const [version] of lists) {
      if (lists.size <= this.maxVersions) break;
      if (version !== this.newest.version) lists.delete(version);
    }
    this.generation++;
    return true;
  }

  /** The list of `version` when held, then the most recently asked (evicted last). */
  get(version: number): GlobalVendorList | undefined {
    const list = this.lists.get(version);
    if (list && list !== this.newest) {
      this.lists.delete(version);
      this.lists.set(version, list);
    }
    return list;
  }

  /** Versions held, newest first. */
  versions(): number[] {
    return [...this.lists.keys()].sort((a, b) => b - a);
  }
}
