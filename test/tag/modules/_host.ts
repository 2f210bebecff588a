// Test helpers: a host like the tag core's, with consent under the test's control, and TC strings built with
// the real @iabtcf/core from the demo's small vendor list.
import type { ConsentState, SetupOptions, TagExtension, TagHost } from '../../../src/tag/extension.js';
import { createCmpCaller } from '../../../src/tag/consent.js';
// @ts-expect-error: plain JS helper shared with the demo CMP
import { encodeTcString } from '../../support/tcf/tc-string.mjs';

/** A host with fixed options; `consent` is what `host.consent()` resolves to (change it between calls). */
export function fakeHost(options: SetupOptions = {}, consent: ConsentState | null = { ready: true }) {
  const logs: string[] = [];
  const host = {
    logs,
    state: consent,
    options: () => options,
    networkId: () => 1234,
    log: (...a: unknown[]) => void logs.push(a.map(String).join(' ')),
    warn: (...a: unknown[]) => void logs.push('WARN ' + a.map(String).join(' ')),
    guard<T>(fn: () => T): T | undefined {
      try {
        return fn();
      } catch (e) {
        logs.push('GUARD ' + String(e));
        return undefined;
      }
    },
  } as TagHost & { logs: string[]; state: ConsentState | null };
  if (consent) host.consent = () => Promise.resolve({ ...host.state! });
  // The page's consent platforms, as the consent extension gives them to modules.
  host.cmp = createCmpCaller(window);
  return host;
}

/** Runs setup and one call of an extension, like the host does; resolves to its contribution. */
export async function callOnce(ext: TagExtension, host: TagHost) {
  ext.setup?.(host);
  await new Promise((r) => setTimeout(r, 0));
  return (await ext.beforeCall?.({ type: 'std' })) ?? {};
}

/** An encoded TC string with the given purpose and vendor consents. */
export const tcString: (purposes: number[], vendors: number[], vendorLI?: number[]) => string = encodeTcString;

/** A GDPR consent state as the reader produces it from a CMP. */
export function gdprState(purposes: number[], vendors: number[]): ConsentState {
  const map = (ids: number[]) => Object.fromEntries(ids.map((i) => [String(i), true]));
  return {
    ready: true,
    gdprApplies: true,
    tcString: tcString(purposes, vendors),
    purposes: map(purposes),
    vendors: map(vendors),
  };
}

/** Turns the operator switches on for `names` (what the served script prepends). */
export function operatorEnables(...names: string[]) {
  (window as any).__sasop = { modules: names };
}

/** Everything in cookies and localStorage, for "touches no storage" checks. */
export function storageSnapshot() {
  const local: Record<string, string> = {};
  for (let i = 0; i < localStorage.length; i++)
    local[localStorage.key(i)!] = localStorage.getItem(localStorage.key(i)!)!;
  return { cookie: document.cookie, local };
}

/** Clears cookies, localStorage and the flags between tests. */
export function resetPage() {
  localStorage.clear();
  for (const c of document.cookie.split(';')) {
    const name = c.split('=')[0].trim();
    if (name) document.cookie = `${name}=;expires=Thu, 01 Jan 1970 00:00:00 GMT;path=/`;
  }
  const globals = [
    '__sasop',
    '__sasx',
    '__sasm',
    '__sasms',
    '__tcfapi',
    '__gpp',
    '__uspapi',
    '__uid2',
    '__euid',
    'ats',
    'Criteo',
    'criteo_pubtag',
    'pbjs',
  ];
  for (const k of Object.keys(window)) if (k.startsWith('sas_disable_')) delete (window as any)[k];
  for (const k of globals) delete (window as any)[k];
  document.body.innerHTML = '';
}
