/**
 * The `window.sas` tag: command queue, setup, page eids, and ad calls (issue #2; extended-ids.md §2.1, §4).
 * `installTag` builds it on a given window so unit tests run it in happy-dom; `index.ts` is the only file that
 * runs it for real.
 */
import { decodeBase64Json, overlayEids, providerById, providerIdForSource, validateEids, type Eid, type Issue } from '../core/index.js';
import type { CallType, SetupOptions, TagExtension } from './extension.js';
import { createExtensionHost, drainRegistrations } from './host.js';
import { createLogger, debugRequested, DEBUG_BUILD } from './log.js';
import { drainQueue } from './queue.js';
import { buildRequest, type CallOptions } from './request.js';

/** Replaced at build time with the package version. */
declare const __SAS_VERSION__: string;

/** The version this tag reports as `sas.version`. */
export const VERSION: string = typeof __SAS_VERSION__ !== 'undefined' ? __SAS_VERSION__ : 'dev';

/** How one ad call went. `sas.call` always resolves to one of these, never rejects. */
export interface CallResult {
  /** True when the ad server answered with a 2xx status. */
  ok: boolean;
  /** HTTP status; 0 when the call was not sent or the network failed. */
  status: number;
  /** The URL called ('' when not sent). */
  url: string;
  /** The eids the call carried. */
  eids: Eid[];
  /** The response text. */
  response?: string;
  /** Why the call failed or was not sent. */
  error?: string;
}

/** The public `window.sas` object. */
export interface SasApi {
  /** The command queue: `sas.cmd.push(() => { ... })`. */
  cmd: unknown[];
  /** The tag version. */
  version: string;
  /** Sets `networkid`, `domain` (ad server origin), `uid`, `debug`, `eidsTimeout`, `modules`; later calls merge. */
  setup(options: SetupOptions): void;
  /** Replaces the page's eids: an array of OpenRTB EIDs, or the Base64 of such a JSON array. */
  setEids(eids: unknown): void;
  /** The eids the next ad call sends (a copy). */
  getEids(): Eid[];
  /** Sends an ad call: `std`, `video` (GET `/ac`), `generic` (POST `/genericpost`), `onecall` (POST `/call`). */
  call(type: CallType, options?: CallOptions): Promise<CallResult>;
}

/** The parts of `window` the tag uses. */
export interface TagWindow {
  sas?: unknown;
  __sasx?: unknown;
  console?: Console;
  location?: { search?: string };
  fetch?: typeof fetch;
}

/** Default wait for extensions before an ad call (ms). */
const DEFAULT_TIMEOUT = 300;
/** Cap on `eidsTimeout`: no setting may hold an ad call for long. */
const MAX_TIMEOUT = 3000;
/** Problems printed per input: 10,000 bad entries must not flood the console. */
const MAX_ISSUES_SHOWN = 20;

/** The network id in a tag URL path `/tag/<network_id>/<file>` (extended-ids.md §4), if any. */
export function networkIdFromSrc(src: unknown): number | undefined {
  const m = /\/tag\/(\d{1,12})\/[^/?#]+([?#].*)?$/.exec(String(src));
  return m ? +m[1] : undefined;
}

/** The URL of the running tag script (`document.currentScript`, which async scripts have while they run). */
export const findScriptSrc = (doc: Document): string | undefined => (doc.currentScript as HTMLScriptElement | null)?.src;

/**
 * Installs the tag on `win` (normally `window`): unless a tag is already there, defines the `sas` methods,
 * registers the built-in and add-on extensions, and runs the command queue. Never throws.
 * @example installTag(window, findScriptSrc(document), builtinExtensions)
 */
export function installTag(win: TagWindow, scriptSrc?: string, builtins: TagExtension[] = []): SasApi | undefined {
  const urlDebug = debugRequested(win.location && win.location.search);
  const logger = createLogger(win.console, urlDebug);
  const { log, warn, guard } = logger;

  return guard(() => {
    if (!win.sas || typeof win.sas !== 'object') win.sas = {};
    const sas = win.sas as SasApi;
    // A second copy of the script changes nothing (domain-notes.md, command queue); `version` marks a loaded tag.
    if (sas.version) return log('tag already loaded'), sas;

    const options: SetupOptions = {};
    let domain: string | undefined;
    let uid: string | undefined;
    let pageEids: Eid[] = [];
    // The last module contribution: getEids() returns what the next call sends.
    let moduleEids: Eid[] = [];
    let blocked: boolean | undefined;

    // setup({ networkid }) wins over the id in the script path (extended-ids.md §4).
    const networkId = () => (+(options.networkid as number) > 0 ? Math.floor(+(options.networkid as number)) : networkIdFromSrc(scriptSrc));
    const host = createExtensionHost({ options: () => ({ ...options }), networkId, log, warn, guard });
    const nextEids = () => (blocked ? [] : overlayEids(pageEids, moduleEids));
    const describe = (eids: Eid[]) =>
      eids.map((e) => {
        const id = providerIdForSource(e.source);
        // Provider names only in the debug build: the minified tag carries the sources, not the names.
        return `${e.source} (${id} ${DEBUG_BUILD ? providerById(id).name : id ? '' : 'Unknown'})`;
      });
    const report = (issues: Issue[]) => {
      // 10,000 bad entries must not flood the console.
      issues.slice(0, MAX_ISSUES_SHOWN).forEach((i) => warn(`${i.path}: ${i.message}; dropped`));
      if (issues.length > MAX_ISSUES_SHOWN) warn(issues.length - MAX_ISSUES_SHOWN + ' more problems');
    };
    /** A copy of an object's own keys; a getter that throws loses that key only. */
    const copyKeys = (from: unknown, to: Record<string, unknown>) => {
      if (from && typeof from === 'object') for (const k of Object.keys(from)) guard(() => (to[k] = (from as Record<string, unknown>)[k]), k);
      return to;
    };

    function setup(opts: unknown) {
      copyKeys(opts, options);
      if ('debug' in options) logger.on = options.debug === true || urlDebug || DEBUG_BUILD;
      const d = String(options.domain).trim().replace(/\/+$/, '');
      domain = /^(https?:)?\/\/[^/?#\s]+(\/[^?#\s]*)?$/i.test(d) ? d : undefined;
      if (!domain) warn('setup: domain must be an http(s) URL', options.domain);
      const u = options.uid;
      // Strings and numbers only: an object would be sent as "[object Object]".
      uid = typeof u === 'string' || typeof u === 'number' ? String(u).trim() || undefined : undefined;
      log('setup', { networkid: networkId(), domain, uid });
      host.setup();
    }

    function setEids(input: unknown) {
      if (typeof input === 'string') {
        const decoded = decodeBase64Json(input);
        report(decoded.issues);
        input = decoded.value;
      }
      // A later setEids replaces what the page set before; null or undefined clear it (issue #2).
      const { value, issues } = input == null ? { value: [], issues: [] } : validateEids(input);
      report(issues);
      pageEids = value;
      log('page eids', describe(value));
    }

    function call(type: CallType, opts?: unknown): Promise<CallResult> {
      return new Promise<CallResult>((resolve) => {
        const done = (r: CallResult) => {
          if (!r.ok) warn('call failed:', r.error || r.status);
          resolve(r);
        };
        const fail = (error: string) => done({ ok: false, status: 0, url: '', eids: [], error });
        // Everything inside the guard: whatever goes wrong, the promise resolves (never an unhandled rejection).
        const started = guard(() => {
          const t = options.eidsTimeout;
          // Snapshot now: the page may change its options object while extensions are consulted.
          const snapshot = copyKeys(opts, {});
          if (typeof type !== 'string' || !/^(std|video|generic|onecall)$/.test(type)) return fail('unknown call type; use std, video, generic or onecall'), 1;
          if (!domain) return fail('no ad server domain: call sas.setup({ domain }) first'), 1;
          const base = domain;
          host.collect(type, typeof t === 'number' && t >= 0 ? Math.min(t, MAX_TIMEOUT) : DEFAULT_TIMEOUT, (c) => {
            moduleEids = c.eids;
            blocked = c.blockEids;
            const req = guard(() => buildRequest(type, snapshot, { domain: base, networkId: networkId(), uid, eids: nextEids(), params: c.params, now: Date.now() }), type);
            if (!req) return fail('could not build the request');
            if (req.dropped.length) warn('left out eids of', req.dropped, 'to keep the URL under 8000 characters');
            log(type, req.url, describe(req.eids));
            const result = (r: Partial<CallResult>): CallResult => ({ ok: false, status: 0, url: req.url, eids: req.eids, ...r });
            // Cookies go with the call: the ad server keeps its own `pid` user id there (extended-ids.md §2.3).
            // A string body goes as text/plain, a CORS "simple" request: no preflight round trip before the ad call.
            // No keepalive: its 64 KiB body cap would fail large POST bodies, and the page wants the response.
            new Promise<Response>((r) => r(win.fetch!(req.url, { method: req.method, body: req.body, credentials: 'include' })))
              .then(
                (res) => res.text().then((response) => result({ ok: res.ok, status: res.status, response })),
                (e: Error) => result({ error: String(e && e.message) }),
              )
              .then(done);
          });
          return 1;
        }, 'call');
        if (!started) fail('failed');
      });
    }

    Object.assign(sas, {
      version: VERSION,
      setup: (o: unknown) => void guard(() => setup(o), 'setup'),
      setEids: (e: unknown) => void guard(() => setEids(e), 'setEids'),
      // A JSON copy: the page can never change the tag's state through what it is given.
      getEids: () => guard(() => JSON.parse(JSON.stringify(nextEids())) as Eid[], 'getEids') || [],
      call,
    });
    if (!Array.isArray(sas.cmd)) sas.cmd = [];
    builtins.forEach(host.register);
    drainRegistrations(win, host.register, guard);
    // Run the queue once this script's synchronous part is over, so add-ons concatenated after the core have
    // registered before the first queued ad call consults them.
    Promise.resolve().then(() =>
      guard(() => {
        drainQueue(sas.cmd, (cmd) => (typeof cmd === 'function' ? guard(cmd as () => unknown, 'command') : warn('ignored a queued entry that is not a function', cmd)));
        log(`v${VERSION} ready`, host.list.map((e) => e.name));
      }, 'queue'),
    );
    return sas;
  }, 'install');
}
