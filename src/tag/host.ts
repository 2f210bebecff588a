/**
 * The host side of the extension contract (extension.ts): registers extensions (built in, or pushed onto
 * `window.__sasx` by add-on scripts), runs their `setup` once after `sas.setup()`, and before each ad call
 * collects their contributions with one bounded wait for all of them together.
 */
import { mergeEids, validateEids, type Eid } from '../core/index.js';
import type { CallContribution, CallType, ExtensionRegistration, TagExtension, TagHost } from './extension.js';

/** What all extensions together contribute to one ad call. */
export interface Contributions {
  /** Module eids, validated and merged by source. */
  eids: Eid[];
  /** Query parameters / body fields (consent signals). */
  params: Record<string, string>;
  /** True when some extension forbids eids on this call. */
  blockEids: boolean;
}

/** The registry of extensions one tag instance runs. */
export interface ExtensionHost {
  /** Adds an extension; a second one with the same name is ignored (a second copy of an add-on script). */
  register(ext: unknown): void;
  /** Marks setup as done and runs `setup(host)` of every extension that has not run it yet (once each). */
  setup(): void;
  /**
   * Calls every `beforeCall` and hands the combined contributions to `done`: synchronously when no extension
   * returns a promise, otherwise when all have settled or after `timeoutMs`, whichever comes first.
   */
  collect(type: CallType, timeoutMs: number, done: (c: Contributions) => void): void;
  /** The registered extensions, in registration order. */
  list: TagExtension[];
}

/** Creates the host; `host` is the API extensions receive (its `guard` isolates every extension call). */
export function createExtensionHost(host: TagHost): ExtensionHost {
  const list: TagExtension[] = [];
  let setupDone = false;
  const runSetup = (ext: TagExtension) => ext.setup && host.guard(() => ext.setup!(host), ext.name + '.setup');

  function combine(results: Array<[string, CallContribution | undefined]>): Contributions {
    const c: Contributions = { eids: [], params: {}, blockEids: false };
    for (const [name, r] of results) {
      host.guard(() => {
        if (!r) return;
        if (r.blockEids === true) c.blockEids = true;
        if (r.eids) {
          // Module output is input like any other: validated, bad entries dropped with a message.
          const { value, issues } = validateEids(r.eids);
          issues.forEach((i) => host.warn(name, i.path, i.message));
          c.eids.push(...value);
        }
        const p = r.params || {};
        for (const k of Object.keys(p)) if (p[k] != null && typeof p[k] !== 'object') c.params[k] = String(p[k]);
      }, name);
    }
    c.eids = mergeEids(c.eids);
    return c;
  }

  return {
    list,
    register(ext) {
      const e = ext as TagExtension;
      if (!e || typeof e.name !== 'string' || list.some((x) => x.name === e.name)) return host.warn('extension ignored', e);
      list.push(e);
      if (setupDone) runSetup(e);
    },
    setup() {
      if (!setupDone) list.forEach(runSetup);
      setupDone = true;
    },
    collect(type, timeoutMs, done) {
      const results: Array<[string, CallContribution | undefined]> = [];
      const waiting = new Set<string>();
      let timer: ReturnType<typeof setTimeout> | undefined;
      let open = true;
      const finish = () => {
        if (!open) return;
        open = false;
        clearTimeout(timer);
        // Why a bounded wait: a missing or slow module or consent platform must never hold an ad call.
        if (waiting.size) host.warn(`no answer in ${timeoutMs} ms from`, [...waiting]);
        done(combine(results));
      };
      for (const ext of list) {
        const r = ext.beforeCall && host.guard(() => ext.beforeCall!({ type }), ext.name);
        if (!r || typeof (r as PromiseLike<unknown>).then !== 'function') {
          results.push([ext.name, r as CallContribution | undefined]);
          continue;
        }
        waiting.add(ext.name);
        // Rejections are reported by the guard; here they only end the wait for this extension.
        const settle = (v?: unknown) => {
          if (!open) return;
          waiting.delete(ext.name);
          results.push([ext.name, v as CallContribution | undefined]);
          if (!waiting.size) finish();
        };
        (r as PromiseLike<unknown>).then(settle, () => settle());
      }
      if (waiting.size) timer = setTimeout(finish, timeoutMs);
      else finish();
    },
  };
}

/**
 * Drains `win.__sasx` (registrations pushed by add-on scripts that loaded before the core) and replaces its
 * `push` so registrations pushed later (add-ons concatenated after the core) run at once.
 */
export function drainRegistrations(win: { __sasx?: unknown }, register: (ext: unknown) => void, guard: TagHost['guard']): void {
  const queue: unknown[] = Array.isArray(win.__sasx) ? win.__sasx : [];
  const run = (fn: unknown) => typeof fn === 'function' && guard(() => (fn as ExtensionRegistration)(register), 'extension');
  queue.forEach(run);
  queue.length = 0;
  queue.push = (...fns: unknown[]) => (fns.forEach(run), 0);
  win.__sasx = queue;
}
