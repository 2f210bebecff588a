/**
 * The host side of the extension contract (extension.ts): before each ad call, collects the extensions'
 * contributions with one bounded wait for all of them together; drains the add-on registrations pushed onto
 * `window.__sasx`. Registering extensions and running their setup once is in tag.ts (installTag).
 */
import { validateEids, type Eid } from '../core/index.js';
import { drainQueue } from './queue.js';
import type { CallContribution, CallType, ExtensionRegistration, TagExtension, TagHost } from './extension.js';

/** What all extensions together contribute to one ad call. */
export interface Contributions {
  /** Module eids, validated (the tag merges them by source under the page's eids: overlayEids). */
  eids: Eid[];
  /** Query parameters / body fields (consent signals, the experiments' arms). */
  params: Record<string, unknown>;
  /** True when some extension forbids eids on this call. */
  blockEids: boolean;
}

/**
 * Calls every extension's `beforeCall` and hands the combined contributions to `done`: synchronously when no
 * extension returns a promise, otherwise when all have settled or after `timeoutMs`, whichever comes first.
 * `host` is the API extensions receive (its `guard` isolates every extension call).
 */
export function collect(
  list: TagExtension[],
  host: TagHost,
  type: CallType,
  timeoutMs: number,
  done: (c: Contributions) => void,
): void {
  const { guard, warn } = host;
  // Contributions are added in the order they arrive.
  const c: Contributions = { eids: [], params: {}, blockEids: false };
  const waiting: string[] = [];
  let timer: ReturnType<typeof setTimeout> | undefined;
  let open = true;
  const add = (name: string, r?: CallContribution) =>
    guard(() => {
      if (!r) return;
      c.blockEids ||= r.blockEids === true;
      if (r.eids) {
        // Module output is input like any other: validated, bad entries dropped with a message.
        const { value, issues } = validateEids(r.eids);
        issues.forEach((i) => warn(name, i.path, i.message));
        c.eids.push(...value);
      }
      // Strings and numbers, or arrays (JSON in a POST body); never another object ("[object Object]").
      const p = r.params || {};
      for (const k of Object.keys(p))
        if (p[k] != null && (typeof p[k] !== 'object' || Array.isArray(p[k]))) c.params[k] = p[k];
    }, name);
  const finish = () => {
    if (!open) return;
    open = false;
    clearTimeout(timer);
    // Why a bounded wait: a missing or slow module or consent platform must never hold an ad call.
    if (waiting.length) warn(`no answer in ${timeoutMs} ms from`, waiting);
    done(c);
  };
  for (const ext of list) {
    const name = ext.name;
    const r = guard(() => ext.beforeCall?.({ type }), name);
    if (r && typeof (r as PromiseLike<unknown>).then === 'function') {
      waiting.push(name);
      // Rejections are reported by the guard; here they only end the wait for this extension.
      const settle = (v?: unknown) => {
        if (!open) return;
        waiting.splice(waiting.indexOf(name), 1);
        add(name, v as CallContribution);
        if (!waiting.length) finish();
      };
      (r as PromiseLike<unknown>).then(settle, () => settle());
    } else add(name, r as CallContribution);
  }
  if (waiting.length) timer = setTimeout(finish, timeoutMs);
  else finish();
}

/**
 * Drains `win.__sasx` (registrations pushed by add-on scripts that loaded before the core) and replaces its
 * `push` so registrations pushed later (add-ons concatenated after the core) run at once.
 */
export function drainRegistrations(
  win: { __sasx?: unknown },
  register: (ext: unknown) => void,
  guard: TagHost['guard'],
): void {
  if (!Array.isArray(win.__sasx)) win.__sasx = [];
  drainQueue(
    win.__sasx as unknown[],
    (fn) => typeof fn === 'function' && guard(() => (fn as ExtensionRegistration)(register), 'extension'),
  );
}
