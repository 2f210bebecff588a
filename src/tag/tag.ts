/**
 * The `window.sas` tag: command queue, setup, page eids, and ad calls (docs/wire-format.md).
 * `installTag` builds it on a given window so unit tests run it in happy-dom; `index.ts` is the only file that
 * runs it for real.
 */
import { callBound, type CallType, type SetupOptions, type TagExtension, type TagHost } from './extension.js';
import { createLogger, debugRequested, DEBUG_BUILD, type Logger } from './log.js';
import { drainQueue } from './queue.js';
import { collect, drainRegistrations } from './host.js';
import { buildRequest, CALL_PATHS, targetString, type CallOptions } from './request.js';
import {
  decodeBase64Loose,
  overlayEids,
  providerById,
  providerIdForSource,
  hasEmail,
  validateEids,
  type Eid,
} from '../core/index.js';

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
  /** The page URL: its `search` for `?sas_debug=1`, and its string form (a `Location`'s is the whole URL). */
  location?: { search?: string; toString(): string };
  fetch?: typeof fetch;
}

/** Problems printed per input: 10,000 bad entries must not flood the console. */
const MAX_ISSUES_SHOWN = 20;

/** The network id in a tag URL path `/tag/<network_id>/<file>`, if any. */
export function networkIdFromSrc(src: unknown): number | undefined {
  const m = /\/tag\/(\d{1,12})\/[^/?#]+([?#].*)?$/.exec(String(src));
  return m ? +m[1] : undefined;
}

/** The URL of the running tag script (`document.currentScript`, which async scripts have while they run). */
export const findScriptSrc = (doc: Document): string | undefined =>
  (doc.currentScript as HTMLScriptElement | null)?.src;

/** `setup({ domain })` checked: an http(s) URL or `//host`, trailing slashes cut; else undefined, with a warning. */
function checkedDomain(value: unknown, warn: Logger['warn']): string | undefined {
  const d = String(value).trim().replace(/\/+$/, '');
  // A host, then an optional path (the host part stops at the first `/`).
  if (/^(https?:)?\/\/[^/?#\s]+[^?#\s]*$/i.test(d)) return d;
  warn(DEBUG_BUILD ? 'setup: domain must be an http(s) URL' : 'domain must be an http(s) URL', value);
}

/** `setup({ uid })` checked: a string or a number, trimmed (an object would be sent as "[object Object]"). */
function checkedUid(value: unknown, warn: Logger['warn']): string | undefined {
  const uid = typeof value === 'string' || typeof value === 'number' ? String(value).trim() || undefined : undefined;
  if (DEBUG_BUILD && uid && hasEmail(uid))
    warn('setup: uid holds an email address: left out of every call (send a hash)');
  return uid;
}

/**
 * The page's eids from what it gave `setEids`: an array, or the Base64 of its JSON (standard or URL-safe, padded or
 * not: the core codec's forgiving decode). Bad entries are dropped, each with a warning; input that is not Base64 or
 * not JSON gives none, and the page is told why.
 */
function pageEidsFrom(input: unknown, warn: Logger['warn']): Eid[] {
  if (typeof input === 'string') {
    let json: string | undefined;
    try {
      json = decodeBase64Loose(input);
      input = JSON.parse(json);
    } catch {
      const why = json === undefined ? 'eids: not valid Base64' : 'eids: Base64 does not hold valid JSON';
      warn(DEBUG_BUILD ? why : 'eids: not valid Base64 JSON');
      input = [];
    }
  }
  const { value, issues } = validateEids(input ?? []);
  // 10,000 bad entries must not flood the console.
  issues.slice(0, MAX_ISSUES_SHOWN).forEach((i) => warn(`${i.path}: ${i.message}; dropped`));
  if (DEBUG_BUILD && issues.length > MAX_ISSUES_SHOWN) warn(issues.length - MAX_ISSUES_SHOWN + ' more problems');
  return value;
}

/** Eids as the debug log shows them: each source with its provider id (and name, in the debug build). */
const describe = (eids: Eid[]) =>
  eids
    .map((e) => {
      const id = providerIdForSource(e.source);
      // Provider names only in the debug build: the minified tag carries the sources, not the names.
      return `${e.source} (${id} ${DEBUG_BUILD ? providerById(id).name : id ? '' : 'Unknown'})`;
    })
    .join(', ');

/**
 * Installs the tag on `win` (normally `window`): unless a tag is already there, defines the `sas` methods,
 * registers the built-in and add-on extensions, and runs the command queue. Never throws.
 * @example installTag(window, findScriptSrc(document), builtinExtensions)
 */
export function installTag(win: TagWindow, scriptSrc?: string, builtins: TagExtension[] = []): SasApi | undefined {
  const urlDebug = debugRequested(win.location?.search);
  const logger = createLogger(win.console, urlDebug);
  const { log, warn, guard } = logger;

  return guard(
    () => {
      if (!win.sas || typeof win.sas !== 'object') win.sas = {};
      const sas = win.sas as SasApi;
      // A second copy of the script changes nothing (a page may include the snippet twice); `version` marks a loaded
      // tag.
      if (sas.version) {
        if (DEBUG_BUILD) log('tag already loaded');
        return sas;
      }

      const options: SetupOptions = {};
      let domain: string | undefined;
      let uid: string | undefined;
      let pageEids: Eid[] = [];
      // The last module contribution: getEids() returns what the next call sends.
      let moduleEids: Eid[] = [];
      let blocked: boolean | undefined;

      // setup({ networkid }) wins over the id in the script path: the page knows best.
      const networkId = () => {
        const n = +options.networkid!;
        return n > 0 ? Math.floor(n) : networkIdFromSrc(scriptSrc);
      };
      // The host side of the extension contract (extension.ts): the API extensions get, the registered extensions,
      // and whether setup ran (each extension's setup runs once, at the first sas.setup() or at once after it).
      const host: TagHost = { options: () => ({ ...options }), networkId, log, warn, guard };
      const extensions: TagExtension[] = [];
      let setupDone = false;
      const runSetup = (ext: TagExtension) => ext.setup && guard(() => ext.setup!(host), ext.name + '.setup');
      /** Adds an extension; a second one with the same name is ignored (a second copy of an add-on script). */
      const register = (ext: unknown) => {
        const e = ext as TagExtension;
        if (!e || typeof e.name !== 'string' || extensions.some((x) => x.name === e.name)) {
          if (DEBUG_BUILD) warn('extension ignored', e);
          return;
        }
        extensions.push(e);
        if (setupDone) runSetup(e);
      };
      /**
       * The page's eids laid over the modules', without the sources an extension withholds (`host.withhold`); none
       * when consent blocks eids.
       */
      const merged = (page: Eid[]) =>
        blocked ? [] : overlayEids(page, moduleEids).filter((e) => !host.withhold?.includes(e.source.toLowerCase()));
      /** A copy of an object's own keys (a getter that throws fails that one command, inside its guard). */
      const copyKeys = (from: unknown, to: Record<string, unknown>) =>
        Object.assign(to, typeof from === 'object' && from);

      function setup(opts: unknown) {
        copyKeys(opts, options);
        if ('debug' in options) logger.on = DEBUG_BUILD || options.debug === true || urlDebug;
        domain = checkedDomain(options.domain, warn);
        uid = checkedUid(options.uid, warn);
        if (DEBUG_BUILD) log('setup', { networkid: networkId(), domain, uid });
        if (!setupDone) extensions.forEach(runSetup);
        setupDone = true;
      }

      function setEids(input: unknown) {
        // A later setEids replaces what the page set before; null or undefined clear it.
        pageEids = pageEidsFrom(input, warn);
        log('page eids', DEBUG_BUILD ? describe(pageEids) : pageEids);
      }

      /**
       * One ad call. Never rejects: whatever goes wrong (bad arguments, the request, the network) becomes `error`.
       * The request leaves once every extension answered (a microtask later when they answer at once, as the consent
       * reader does without a waiting platform), or at the bound.
       */
      async function call(type: CallType, opts?: unknown): Promise<CallResult> {
        const r: CallResult = { ok: false, status: 0, url: '', eids: [] };
        try {
          // Everything the call carries is taken now, not when it leaves after the extensions answered: a page that
          // changes its options, its eids or its user in the same tick (a logout and login) changes the next call.
          const snapshot = copyKeys(opts, {});
          if (DEBUG_BUILD && hasEmail(String(targetString(snapshot.target))))
            warn(`${type}: target holds an email address: left out of the call`);
          // (`domain` is checked below, inside the try.)
          const ctx = { domain: domain!, networkId: networkId(), uid, eids: pageEids };
          // eslint-disable-next-line no-prototype-builtins -- our own literal; Object.hasOwn needs Safari 15.4
          if (!CALL_PATHS.hasOwnProperty(type))
            throw Error(
              `unknown call type: ${type as string}` + (DEBUG_BUILD ? '; use std, video, generic or onecall' : ''),
            );
          if (!ctx.domain)
            throw Error(DEBUG_BUILD ? 'no ad server domain: call sas.setup({ domain }) first' : 'no domain set');
          const res = await new Promise<Response>((resolve) =>
            collect(extensions, host, type, callBound(options), (c) =>
              // The executor runs at once (so does the fetch) and turns a throw into a rejection of this call.
              resolve(
                new Promise((sent) => {
                  moduleEids = c.eids;
                  blocked = c.blockEids;
                  const req = buildRequest(type, snapshot, {
                    ...ctx,
                    eids: merged(ctx.eids),
                    params: c.params,
                    now: Date.now(),
                  });
                  if (req.dropped.length)
                    warn(
                      'left out eids of',
                      req.dropped,
                      DEBUG_BUILD ? 'to keep the URL under 8000 characters' : '(URL > 8000)',
                    );
                  log(type, (r.url = req.url), DEBUG_BUILD ? describe((r.eids = req.eids)) : (r.eids = req.eids));
                  // Cookies go with the call: the ad server keeps its own `pid` user id there.
                  // A string body goes as text/plain, a CORS "simple" request: no preflight round trip before the ad
                  // call. No keepalive: its 64 KiB body cap would fail large POST bodies, and the page wants the
                  // response. Where the page URL holds an email, the Referer is the page's origin alone; elsewhere
                  // the page's own referrer policy applies (docs/wire-format.md#no-raw-email-in-urls).
                  sent(
                    win.fetch!(req.url, {
                      method: req.method,
                      body: req.body,
                      credentials: 'include',
                      referrerPolicy: hasEmail(String(win.location)) ? 'origin' : '',
                    }),
                  );
                }),
              ),
            ),
          );
          r.response = await res.text();
          r.status = res.status;
          r.ok = res.ok;
        } catch (e) {
          r.error = String(e && (e as Error).message);
        }
        if (!r.ok) {
          warn('call failed:', r.error || r.status);
          // A fetch that fails without a status is most often refused by the browser, not by the network.
          if (DEBUG_BUILD && !r.status && r.url) {
            warn(
              'no answer could be read: likely causes are CORS (the ad server must answer this page origin, not *, with ' +
                'Access-Control-Allow-Credentials: true), mixed content (an http: ad server on an https: page), or the ' +
                'ad server being unreachable',
            );
          }
        }
        return r;
      }

      Object.assign(sas, {
        version: VERSION,
        setup: (o: unknown) => guard(() => setup(o), 'setup'),
        setEids: (e: unknown) => guard(() => setEids(e), 'setEids'),
        // A JSON copy: the page can never change the tag's state through what it is given.
        getEids: () =>
          guard(() => JSON.parse(JSON.stringify(merged(pageEids))) as Eid[], DEBUG_BUILD ? 'getEids' : '') ?? [],
        call,
      });
      if (!Array.isArray(sas.cmd)) sas.cmd = [];
      builtins.forEach(register);
      drainRegistrations(win, register, guard);
      // Run the queue in a task of its own, once this script is over: add-ons concatenated after the core have
      // registered before the first queued ad call consults them, and the page's commands (setup, the first call)
      // are not added to the task that evaluated the script. A message to ourselves, not a timer: background tabs
      // throttle timers to one a second, which would hold the first ad call.
      const next = new MessageChannel();
      next.port2.postMessage(0);
      next.port1.onmessage = () =>
        guard(
          () => {
            drainQueue(sas.cmd, (cmd) =>
              typeof cmd === 'function'
                ? guard(cmd as () => unknown, 'command')
                : warn(DEBUG_BUILD ? 'ignored a queued entry that is not a function' : 'not a function', cmd),
            );
            if (DEBUG_BUILD)
              log(
                `v${VERSION} ready`,
                extensions.map((e) => e.name),
              );
          },
          DEBUG_BUILD ? 'queue' : '',
        );
      return sas;
    },
    DEBUG_BUILD ? 'install' : '',
  );
}
