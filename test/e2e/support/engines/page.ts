/**
 * The engine-neutral page a spec drives (support/engines/fixture.ts gives it as `web`): the same spec code runs
 * in Chromium (Playwright), Firefox (WebDriver BiDi through puppeteer-core) and WebKit (classic WebDriver through
 * webdriverio). Everything beyond a driver's few primitives (waiting, clicking, typing, reading text) is built
 * here from `evaluate`, so it behaves the same in every engine.
 */

/** The three engines of the suite. */
export type EngineName = 'chromium' | 'firefox' | 'webkit';

/** A function run in the page: its argument and result cross the wire as JSON. */
export type PageFunction<A, R> = (arg: A) => R | Promise<R>;

/** What each engine's driver provides: one document tree, run in a browser profile of its own. */
export interface Driver {
  goto(url: string): Promise<void>;
  /** Runs `fn` in the top document (`frame` undefined) or in the frame of that handle. */
  evaluate<A, R>(fn: PageFunction<A, R>, arg: A, frame?: unknown): Promise<R>;
  /** The frames below the top document with their URLs (handles for `evaluate`). */
  frames(): Promise<{ url: string; handle: unknown }[]>;
  /**
   * Uncaught errors of the documents shown so far as the engine reports them, or undefined when the driver cannot
   * observe them (then the probe's record is used, see {@link EnginePage.errors}).
   */
  errors(): Promise<string[] | undefined>;
  screenshot(path: string): Promise<void>;
  close(): Promise<void>;
}

/** A document the spec can run code in: the top page or one of its frames. */
export class EngineFrame {
  constructor(
    protected readonly driver: Driver,
    protected readonly handle?: unknown,
  ) {}

  /** Runs `fn(arg)` in the document and resolves with its (awaited) result. */
  evaluate<R, A = undefined>(fn: PageFunction<A, R>, arg?: A): Promise<R> {
    return this.driver.evaluate(fn, arg as A, this.handle);
  }

  /** The document's URL. */
  url(): Promise<string> {
    return this.evaluate(() => location.href);
  }

  /** Polls `fn(arg)` until it returns a truthy value, and resolves with it; rejects after `timeout` ms. */
  async waitForFunction<R, A = undefined>(fn: PageFunction<A, R>, arg?: A, { timeout = 10_000 } = {}): Promise<R> {
    const end = Date.now() + timeout;
    let last: unknown;
    for (;;) {
      try {
        const v = await this.evaluate(fn, arg);
        if (v) return v;
      } catch (e) {
        last = e; // a navigation in progress, a global not there yet
      }
      if (Date.now() > end) {
        throw new Error(`waitForFunction timed out after ${timeout} ms: ${String(fn)}${last ? ` (${last})` : ''}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Clicks the first element matching `selector` (an element's own click, as a button press dispatches). */
  async click(selector: string): Promise<void> {
    await this.waitForFunction((s) => !!document.querySelector(s), selector);
    await this.evaluate((s) => document.querySelector(s)!.click(), selector);
  }

  /** Types `value` into the field `selector` (input events), then leaves it (change and blur events). */
  async fill(selector: string, value: string): Promise<void> {
    await this.waitForFunction((s) => !!document.querySelector(s), selector);
    await this.evaluate(
      ([s, v]) => {
        const el = document.querySelector(s)!;
        el.focus();
        el.value = v;
        el.dispatchEvent(new Event('input', { bubbles: true }));
        el.dispatchEvent(new Event('change', { bubbles: true }));
        // A window without focus (a headless or background one) never focused the field: leave it by hand.
        if (document.activeElement === el) el.blur();
        else {
          el.dispatchEvent(new FocusEvent('blur'));
          el.dispatchEvent(new FocusEvent('focusout', { bubbles: true }));
        }
      },
      [selector, value] as const,
    );
  }

  /** The text of the first element matching `selector`, or null when there is none. */
  text(selector: string): Promise<string | null> {
    return this.evaluate((s) => document.querySelector(s)?.textContent ?? null, selector);
  }

  /** How many elements match `selector`. */
  count(selector: string): Promise<number> {
    return this.evaluate((s) => document.querySelectorAll(s).length, selector);
  }
}

interface ProbeLog {
  console: string[];
  errors: string[];
}

/**
 * The top page of a test, in whichever engine the test's project runs. Console lines come from the probe the test
 * servers put first in every HTML page (server.ts `PROBE`), the same way in every engine: top document only, and
 * kept across navigations made with {@link goto}.
 */
export class EnginePage extends EngineFrame {
  private readonly past: ProbeLog = { console: [], errors: [] };

  constructor(
    readonly engine: EngineName,
    driver: Driver,
  ) {
    super(driver);
  }

  private probe(): Promise<ProbeLog | null> {
    return this.evaluate(() => (window as unknown as { __e2e?: ProbeLog }).__e2e ?? null).catch(() => null);
  }

  /** Loads `url` and resolves once its load event fired. */
  async goto(url: string): Promise<void> {
    const log = await this.probe();
    this.past.console.push(...(log?.console ?? []));
    this.past.errors.push(...(log?.errors ?? []));
    await this.driver.goto(url);
  }

  /** The first frame (below the top document) whose URL passes `match`, once it has one; rejects after `timeout`. */
  async frame(match: (url: string) => boolean, { timeout = 10_000 } = {}): Promise<EngineFrame> {
    const end = Date.now() + timeout;
    for (;;) {
      const hit = (await this.driver.frames()).find((f) => match(f.url));
      if (hit) return new EngineFrame(this.driver, hit.handle);
      if (Date.now() > end) throw new Error(`no frame matched within ${timeout} ms`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Console lines (`console.*` calls, arguments joined by spaces, objects as JSON) of the pages shown so far. */
  async consoleLines(): Promise<string[]> {
    return [...this.past.console, ...((await this.probe())?.console ?? [])];
  }

  /** Uncaught exceptions and unhandled rejections of the pages shown so far. */
  async errors(): Promise<string[]> {
    return (await this.driver.errors()) ?? [...this.past.errors, ...((await this.probe())?.errors ?? [])];
  }

  /** Saves a PNG of the page. */
  screenshot(path: string): Promise<void> {
    return this.driver.screenshot(path);
  }

  /** Ends the page and its profile. */
  close(): Promise<void> {
    return this.driver.close();
  }
}
