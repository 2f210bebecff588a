/** One browser per Playwright worker, a fresh profile (cookies, storage) per test. */
import type { EnginePage } from './page';

/** What a test may ask of its page's profile. */
export interface PageOptions {
  /**
   * Chromium only: a regular profile allowing third-party storage, as Chrome does by default (Playwright's own
   * contexts block it). Firefox and WebKit always run with their default privacy settings.
   */
  thirdPartyStorage: boolean;
}

/** A running browser of one engine. */
export interface Launcher {
  /** A page in a fresh profile. */
  newPage(options: PageOptions): Promise<EnginePage>;
  close(): Promise<void>;
}
