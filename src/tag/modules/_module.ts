/**
 * What every provider module shares: the switches (operator + window flag + `modules.<name>: false`),
 * consent gating, and registration as a tag extension. A module that is switched off does nothing at all: no
 * storage, no listeners, no requests; it deletes what it stored before (its `keys`), as it does when consent no
 * longer allows it. What it reads is checked before it goes on a call (_values.ts).
 */
import type { Eid } from '../../core/index.js';
import type {
  CallType,
  CmpCall,
  ConsentState,
  ExtensionRegistration,
  OperatorSwitches,
  TagExtension,
  TagHost,
} from '../extension.js';
import { mayRunModule } from '../consent-rules.js';
import { registrableDomain, stampProvenance } from './_provenance.js';
import { usDenial, usSectionName } from '../../core/us-privacy.js';
import type { UsFields } from '../../core/us-privacy.js';
import { refuseUnsafe } from './_values.js';

/** A running module: gives its eids for a call, and can be stopped when consent is withdrawn. */
export interface ModuleRun {
  eids(call: { type: CallType }, consent: ConsentState): Eid[] | undefined | Promise<Eid[] | undefined>;
  stop?(): void;
}

/** What a module gets when it starts. */
export interface ModuleContext {
  host: TagHost;
  /** The module's settings, `setup({ modules: { <name>: settings } })`; `{}` when absent. */
  settings: Record<string, unknown>;
  /** The consent it started under (it allows the module). */
  consent: ConsentState;
  /**
   * Asks again, now: true while consent (and the switches) still allow the module. A module that writes storage
   * outside an ad call checks it first: consent withdrawn between two calls must stop the write, not only the next
   * call.
   */
  allowed(): Promise<boolean>;
}

/** One provider module. */
export interface ModuleDefinition {
  /** Key under `setup({ modules })`, the operator switch name and the window flag suffix (`sas_disable_<name>`). */
  name: string;
  /** TCF Global Vendor List id whose consent the module needs where GDPR applies. */
  gvl: number;
  /** Starts the module once consent allows it; undefined when its settings do not let it run (it says why in debug). */
  start(ctx: ModuleContext): ModuleRun | undefined;
  /**
   * Provenance of its eids: `inserter` is the page's (`setup({ inserter })`, else its registrable domain) and
   * `mm` comes from this function (undefined: left unset). `false` leaves the eids exactly as the module gives
   * them (the Prebid bridge passes on eids other parties already stamped).
   */
  mm?: false | ((eid: Eid) => number | undefined);
  /** The keys it stores (core/module-keys.ts), for the record; `forget` deletes them. */
  keys?: readonly string[];
  /**
   * Deletes what it stored (`storing(keys)` of _storage.ts): called when the module is switched off or consent does
   * not allow it, also for what an earlier page view stored. A module that stores nothing has none, and carries no
   * code for it.
   */
  forget?: () => void;
}

/**
 * The globals of `window` the modules share: the operator's switches, the modules' status and registrations,
 * and the page's `sas_disable_<name>` flags (any value; a truthy one turns the module off).
 */
interface Win {
  [flag: string]: unknown;
  /** Served by the ad server, but a page may overwrite it: `modules` is checked to be an array. */
  __sasop?: OperatorSwitches;
  __sasms?: Record<string, ModuleStatus>;
  __sasm?: Record<string, 1>;
  __sasx?: ExtensionRegistration[];
}

/**
 * Why the applicable GPP US sections forbid sharing ids with a third party (`usnat MspaServiceProviderMode=1`), or
 * `''` when they allow it: each section is asked with `__gpp('getSection')` through `call`, the host's consent
 * platform caller (so a tag in an iframe asks the top page's platform), and judged by the rules the ad server uses
 * (core/us-privacy.ts). A section the platform cannot give, an unknown section id, or a GPP API that throws refuses;
 * one that never answers keeps the promise pending, and the host's bound then drops the module's contribution: both
 * fail closed. The EU (2) and Canadian (5) TCF sections are read elsewhere.
 */
export function gppDenial(c: ConsentState, call?: CmpCall): Promise<string> {
  const sids = (c.gppSid || []).filter((sid) => sid != 2 && sid != 5);
  const ask = (sid: number) =>
    new Promise<string>((resolve) => {
      const name = usSectionName(sid);
      if (!name) return resolve(`section ${sid} unknown`);
      try {
        const asked =
          call &&
          call(
            '__gpp',
            'getSection',
            1,
            (v: unknown, ok: boolean) =>
              resolve(
                ok && v && typeof v == 'object'
                  ? usDenial(name, Object.assign({}, ...([] as object[]).concat(v)) as UsFields)
                  : 'unreadable',
              ),
            name,
          );
        if (!asked) resolve('no GPP API');
      } catch {
        resolve('GPP API failed');
      }
    }).then((why) => why && `gpp ${usSectionName(sid) || sid} ${why}`);
  return Promise.all(sids.map(ask)).then((r) => r.find(Boolean) || '');
}

/**
 * The host's consent with `usDenial` filled in: the GPP US sections' verdict, else the browser's Global Privacy
 * Control where no applicable GPP US section speaks for the user.
 */
export const consentOf = (h: TagHost): Promise<ConsentState> =>
  h.consent!().then((c) =>
    gppDenial(c, h.cmp).then((why) => ({
      ...c,
      usDenial: c.usDenial || why || (c.gpc && !(c.gppSid || []).some((sid) => sid != 2 && sid != 5) ? 'gpc' : ''),
    })),
  );

/** The page's flag that disables a module: `window.sas_disable_<name> = true`. */
export const flagName = (name: string): string => 'sas_disable_' + name;

/** Why a module is off (operator switch, window flag, `modules.<name>: false`), or undefined when it may run. */
export function whyOff(name: string, host: TagHost, w: Win = window as unknown as Win): string | undefined {
  const ops = w.__sasop?.modules;
  if (!Array.isArray(ops) || !ops.includes(name)) return 'not enabled by the operator';
  if (w[flagName(name)]) return 'window.' + flagName(name);
  if (host.options().modules?.[name] === false) return 'setup modules.' + name + ' false';
  return undefined;
}

/** How a module did at its last call, as it reports it on `window.__sasms[<name>]` (for a page's debug view). */
export interface ModuleStatus {
  /** `off: <why>` (see {@link whyOff}), `no consent`, `no id` (nothing found yet) or `found`. */
  state: string;
  /** The eid sources it gave for that call, when `found`. */
  sources?: string[];
}

/**
 * `v`, a task later (a message to ourselves: not throttled like a timer in a background tab, and before any timer):
 * each module starts and answers in a task of its own, so that no one task of the page runs every module's work.
 */
export const later = <T>(v: T): Promise<T> =>
  new Promise<T>((resolve) => {
    const m = new MessageChannel();
    m.port1.onmessage = () => resolve(v);
    m.port2.postMessage(0);
  });

/** Records a module's status on `window.__sasms` (read-only information: nothing in the tag reads it back). */
const report = (name: string, state: string, eids?: Eid[]) =>
  (((window as unknown as Win).__sasms ||= {})[name] = {
    state,
    sources: eids && eids.map((e) => e.source),
  } as ModuleStatus);

/** Turns a module definition into a tag extension that starts, stops and gates the module by consent. */
export function defineModule(def: ModuleDefinition): TagExtension {
  let host: TagHost | undefined;
  let run: ModuleRun | undefined;
  let off = true;
  let started = false;
  let inserter = '';
  const tag = `${def.name}:`;
  const forget = () => def.forget?.();

  // Starts the module when consent allows it, stops it when consent is withdrawn; returns the run or undefined.
  const sync = (c: ConsentState): ModuleRun | undefined => {
    if (off || !host) return undefined;
    if (!mayRunModule(c, def.gvl)) {
      // Withdrawn now, or refused since an earlier page view stored something: what it stored goes too.
      if (run || c.ready) forget();
      if (run) {
        host.log(tag, 'stopped: consent withdrawn');
        run.stop?.();
        run = undefined;
        started = false;
      }
      return undefined;
    }
    if (!started) {
      started = true;
      const settings = host.options().modules?.[def.name];
      const h = host;
      // Still allowed when a fresh read of consent keeps this very run going (sync stops it when withdrawn).
      const allowed = (): Promise<boolean> =>
        whyOff(def.name, h)
          ? Promise.resolve(false)
          : consentOf(h).then(
              (now) => !!mine && h.guard(() => sync(now)) === mine,
              () => false,
            );
      let mine: ModuleRun | undefined;
      run = mine = def.start({
        host,
        consent: c,
        allowed,
        settings: settings && typeof settings === 'object' ? (settings as Record<string, unknown>) : {},
      });
      if (run) host.log(tag, 'started');
    }
    return run;
  };

  return {
    name: def.name,
    setup(h) {
      host = h;
      if (started) return;
      const why = whyOff(def.name, h);
      off = !!why;
      if (why) {
        report(def.name, 'off: ' + why);
        h.log(tag, 'off:', why);
        forget();
        return;
      }
      if (!h.consent) return h.warn(tag, 'off: no consent reader');
      void consentOf(h)
        .then(later)
        .then((c) => h.guard(() => sync(c), def.name));
    },
    async beforeCall(call) {
      if (off || !host?.consent) return {};
      const h = host;
      // A window flag set after setup still stops the module.
      const why = whyOff(def.name, h);
      if (why) {
        report(def.name, 'off: ' + why);
        run?.stop?.();
        run = undefined;
        started = false;
        forget();
        return {};
      }
      const c = await consentOf(h).then(later);
      const r = h.guard(() => sync(c), def.name);
      if (!r) {
        report(def.name, mayRunModule(c, def.gvl) ? 'no id' : 'no consent');
        return {};
      }
      let eids = refuseUnsafe((await r.eids(call, c)) || [], (...a: unknown[]) => h.warn(tag, ...a));
      if (eids.length && def.mm !== false) {
        const configured = h.options().inserter;
        eids = stampProvenance(
          eids,
          () => (typeof configured === 'string' && configured ? configured : (inserter ||= registrableDomain())),
          def.mm,
        );
      }
      report(def.name, eids.length ? 'found' : 'no id', eids);
      if (eids.length) h.log(tag, 'eids', eids);
      return { eids };
    },
  };
}

/**
 * Registers an extension with the tag core through `window.__sasx` (the core drains it on load and runs later
 * pushes at once). A second copy of the same module script on the page registers nothing.
 */
export function registerExtension(ext: TagExtension, w: Win = window as unknown as Win): void {
  const seen = (w.__sasm ||= {});
  if (seen[ext.name]) return;
  seen[ext.name] = 1;
  (w.__sasx ||= []).push((register) => register(ext));
}
