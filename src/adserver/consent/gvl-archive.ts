/**
 * The archive versions TC strings name (gvl-loader.ts): a stream of hostile TC strings chooses them, so they are
 * downloaded one at a time, at most `perHour` started per hour (a bucket refilled continuously), at most 16 waiting,
 * and a version is not asked again for `retryMs` after it was tried.
 */

const HOUR = 3_600_000;
/** Versions remembered as tried (then forgotten all at once), and versions waiting at most. */
const MAX_TRIED = 4_096;
const MAX_WAITING = 16;

export class ArchiveQueue {
  private readonly tried = new Map<number, number>();
  private readonly wanted = new Set<number>();
  private tokens: number;
  private tokensAt = performance.now();
  private busy = false;
  private closed = false;

  constructor(
    private readonly perHour: number,
    private readonly retryMs: number,
    /** Downloads one version (it never rejects into the queue: failures are the loader's to tell). */
    private readonly download: (version: number) => Promise<unknown>,
  ) {
    this.tokens = perHour;
  }

  /** Asks for `version`, at `now` (performance.now()); ignored when it was tried within `retryMs`. */
  ask(version: number, now: number): void {
    if ((this.tried.get(version) ?? -Infinity) > now - this.retryMs) return;
    this.tried.set(version, now);
    if (this.tried.size > MAX_TRIED) this.tried.clear();
    if (this.wanted.size < MAX_WAITING) this.wanted.add(version);
    this.pump();
  }

  /** Starts no download after this. */
  close(): void {
    this.closed = true;
  }

  private pump(): void {
    if (this.busy || this.closed) return;
    const now = performance.now();
    this.tokens = Math.min(this.perHour, this.tokens + ((now - this.tokensAt) * this.perHour) / HOUR);
    this.tokensAt = now;
    const next = this.wanted.values().next();
    if (next.done || this.tokens < 1) return;
    const version = next.value;
    this.wanted.delete(version);
    this.tokens -= 1;
    this.busy = true;
    this.download(version)
      .catch(() => undefined)
      .finally(() => {
        this.busy = false;
        this.pump();
      });
  }
}
