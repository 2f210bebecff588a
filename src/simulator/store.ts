/**
 * The simulator's state (deals, id counters, daily quotas) and its persistence: in memory, or with a data file
 * written atomically (temp file, fsync, rename) on every change, so a restart or a crash mid-write loses nothing
 * already acknowledged.
 */
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { dirname, basename, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { CompleteDealWrite } from '../deals/rules/index.js';

/** The stored part of a deal: the write fields plus the service-side fields that do not change on read. */
export interface StoredDeal {
  /** Owning company; never returned to callers. */
  companyId: number;
  id: number;
  dealId: string;
  createdAt: string;
  updatedAt: string;
  /** The history id of the last change (X-HistoryId). */
  historyId: number;
  write: CompleteDealWrite;
}

/** Per-company usage of the daily quotas, for one UTC day. */
export interface QuotaUsage {
  day: string;
  creations: number;
  updates: number;
}

interface PersistedState {
  format: 'eidkit-simulator/1';
  nextId: number;
  nextHistoryId: number;
  deals: StoredDeal[];
  quotas: Record<string, QuotaUsage>;
}

const FORMAT = 'eidkit-simulator/1';

/** The simulator's mutable state. Changes go through `commit`, which persists them before they are acknowledged. */
export class SimulatorStore {
  /** Deals by id. */
  readonly deals = new Map<number, StoredDeal>();
  /** Quota usage by company id. */
  readonly quotas = new Map<number, QuotaUsage>();
  nextId = 100_001;
  nextHistoryId = 900_001;

  constructor(private readonly dataFile?: string) {
    if (dataFile && existsSync(dataFile)) this.load(dataFile);
  }

  private load(file: string): void {
    let state: PersistedState;
    try {
      state = JSON.parse(readFileSync(file, 'utf8')) as PersistedState;
    } catch (err) {
      // Never overwrite a file we cannot read: it may hold acknowledged deals.
      throw new Error(`data file ${file} is not valid JSON; refusing to start over it (${(err as Error).message})`, {
        cause: err,
      });
    }
    if (state?.format !== FORMAT || !Array.isArray(state.deals)) {
      throw new Error(
        `data file ${file} is not an eidkit simulator data file (format ${JSON.stringify(state?.format)}); refusing to start over it`,
      );
    }
    for (const d of state.deals) this.deals.set(d.id, d);
    for (const [company, usage] of Object.entries(state.quotas ?? {})) this.quotas.set(Number(company), usage);
    this.nextId = Math.max(state.nextId, ...state.deals.map((d) => d.id + 1), 100_001);
    this.nextHistoryId = Math.max(state.nextHistoryId, ...state.deals.map((d) => d.historyId + 1), 900_001);
  }

  /**
   * Applies a change and persists it; when persisting fails the change is undone and the error rethrown, so
   * memory and disk never disagree about what was acknowledged.
   */
  commit<T>(apply: () => T, undo: () => void): T {
    const result = apply();
    try {
      this.persist();
    } catch (err) {
      undo();
      throw err;
    }
    return result;
  }

  /** Writes the whole state to the data file atomically (no-op in memory mode). */
  persist(): void {
    if (!this.dataFile) return;
    const state: PersistedState = {
      format: FORMAT,
      nextId: this.nextId,
      nextHistoryId: this.nextHistoryId,
      deals: [...this.deals.values()],
      quotas: Object.fromEntries(this.quotas),
    };
    writeAtomically(this.dataFile, JSON.stringify(state));
  }
}

/** Writes `text` to `file` via a temp file in the same directory, fsync, then rename (atomic on POSIX). */
export function writeAtomically(file: string, text: string): void {
  const tmp = join(dirname(file), `.${basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const fd = openSync(tmp, 'w', 0o600);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } catch (err) {
    closeSync(fd);
    try {
      unlinkSync(tmp);
    } catch {
      /* already gone */
    }
    throw err;
  }
  closeSync(fd);
  try {
    renameSync(tmp, file);
  } catch (err) {
    try {
      unlinkSync(tmp);
    } catch {
      /* already gone */
    }
    throw err;
  }
  try {
    // Make the rename itself durable.
    const dirFd = openSync(dirname(file), 'r');
    try {
      fsyncSync(dirFd);
    } finally {
      closeSync(dirFd);
    }
  } catch {
    // Some platforms cannot fsync a directory; the rename is still atomic.
  }
}
