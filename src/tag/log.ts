/**
 * Debug logging and the one guard function of the tag. The tag lives on other people's pages: nothing it runs
 * may throw into the page or reach `window.onerror`: a broken tag must never break the page it serves.
 */

/** Replaced at build time: `true` in dist/sas.debug.js (readable, logging on), `false` in dist/sas.js. */
declare const __SAS_DEBUG_BUILD__: boolean;

/** True in the readable debug build; folds to `false` (and its branches away) in the minified build. */
export const DEBUG_BUILD: boolean = typeof __SAS_DEBUG_BUILD__ !== 'undefined' && __SAS_DEBUG_BUILD__;

/** Debug output with the `[sas]` prefix, silent unless debug mode is on, plus the guard. */
export interface Logger {
  /** Whether messages are printed (`?sas_debug=1`, `setup({ debug: true })`, or the debug build). */
  on: boolean;
  log: (...args: unknown[]) => void;
  warn: (...args: unknown[]) => void;
  /** Runs `fn`; anything it throws (or a promise it returns rejects with) is reported in debug, never rethrown. */
  guard: <T>(fn: () => T, label?: string) => T | undefined;
}

/** True when the page URL asks for debug output (`?sas_debug=1`). */
export const debugRequested = (search: unknown): boolean => /[?&]sas_debug=(1|true)(&|$)/.test(String(search));

/**
 * One logged value as text, for the debug build: what the guide shows (`[sas] setup {"networkid":1234,…}`), the same
 * in every console, where arrays and objects would otherwise be collapsed (`[Object]`) or need expanding.
 */
function asText(v: unknown): unknown {
  if (typeof v === 'string' || v instanceof Error) return String(v);
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v); // cyclic, or a getter that throws
  }
}

/** Creates the logger; `out` is the console to write to (a missing or broken console is tolerated). */
export function createLogger(out: Console | undefined, on: boolean): Logger {
  const print =
    (level: 'log' | 'warn') =>
    (...args: unknown[]) => {
      try {
        if (logger.on) out![level]('[sas]', ...(DEBUG_BUILD ? args.map(asText) : args));
      } catch {
        // No console, or one replaced by the page that throws: logging is best effort.
      }
    };
  const logger: Logger = {
    on: DEBUG_BUILD || on,
    log: print('log'),
    warn: print('warn'),
    guard(fn, label) {
      const fail = (e: unknown) => logger.warn((label || 'command') + ' failed:', e);
      try {
        const r = fn() as { then?: unknown };
        // An async command that rejects would surface as an unhandled rejection (a `pageerror`): catch it too.
        if (r && typeof r.then === 'function') (r as PromiseLike<unknown>).then(undefined, fail);
        return r as ReturnType<typeof fn>;
      } catch (e) {
        fail(e);
      }
    },
  };
  return logger;
}
