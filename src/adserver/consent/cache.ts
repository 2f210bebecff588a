/**
 * The cache of decoded consent strings: bounded in entries and in (estimated) bytes, whatever the strings. Two
 * generations instead of a strict LRU, so a hit is one Map lookup: entries used since the last turnover survive
 * it, the others are dropped. Each generation holds at most half the entries and half the bytes. Keys are
 * copies: a key cut from a request would keep the whole request text alive, unseen by the byte count.
 */
import { ownString } from '../common/index.js';

/** How many entries and bytes a cache holds now. */
export interface CacheStats {
  entries: number;
  /** The estimated size of the keys and values held, in bytes. */
  bytes: number;
}

/** A two-generation cache holding at most `maxEntries` entries and `maxBytes` estimated bytes. */
export class BoundedCache<V> {
  private young = new Map<string, V>();
  private old = new Map<string, V>();
  private youngBytes = 0;
  private oldBytes = 0;
  private readonly halfEntries: number;
  private readonly halfBytes: number;

  /** `sizeOf` estimates what an entry holds in memory (key and value), in bytes. */
  constructor(
    maxEntries: number,
    maxBytes: number,
    private readonly sizeOf: (key: string, value: V) => number,
  ) {
    this.halfEntries = Math.max(1, Math.floor(maxEntries / 2));
    this.halfBytes = Math.max(1, Math.floor(maxBytes / 2));
  }

  /** The value for `key`, made with `make` on a miss and kept (unless it alone is over half the bytes). */
  get(key: string, make: (key: string) => V): V {
    let v = this.young.get(key);
    if (v !== undefined) return v;
    v = this.old.get(key) ?? make(key);
    const size = this.sizeOf(key, v);
    if (size > this.halfBytes) return v;
    if (this.young.size >= this.halfEntries || this.youngBytes + size > this.halfBytes) {
      this.old = this.young;
      this.oldBytes = this.youngBytes;
      this.young = new Map();
      this.youngBytes = 0;
    }
    // The key outlives the call it came in: a copy of its own, never a slice of a request's URL (see ownString).
    this.young.set(ownString(key), v);
    this.youngBytes += size;
    return v;
  }

  /** Entries and estimated bytes held (an entry used in both generations counts twice). */
  stats(): CacheStats {
    return { entries: this.young.size + this.old.size, bytes: this.youngBytes + this.oldBytes };
  }
}
