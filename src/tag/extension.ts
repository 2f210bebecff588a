/**
 * The contract between the tag core (the host) and its extensions: consent readers and provider modules.
 * Extensions arrive either built into the bundle (see builtins.ts) or as add-on scripts concatenated after
 * the core in the per-network script; add-ons register themselves by pushing a function onto
 * `window.__sasx` (an array the host drains on load, and whose later pushes it runs at once).
 */
import type { Eid, ExperimentDeclaration } from '../core/index.js';

/** The ad-call types of `sas.call(type, options)`. */
export type CallType = 'std' | 'video' | 'generic' | 'onecall';

/** What an extension contributes to one ad call. */
export interface CallContribution {
  /** Module eids; merged under the page's own eids (page eids win by source). */
  eids?: Eid[];
  /**
   * Fields carried on the call: GET query parameters and POST body fields (e.g. gdpr, gdpr_consent). A string or
   * number goes on every call; an array (the experiments' `xp` entries) only in a POST body, as JSON (a GET call
   * carries strings: give an array only to `generic` and `onecall` calls).
   */
  params?: Record<string, string | number | unknown[]>;
  /** True when no eids at all may go on this call (no legal basis to send them). */
  blockEids?: boolean;
}

/** One extension: a consent reader or a provider module. */
export interface TagExtension {
  /** Stable name, used in debug messages (and, for modules, the key under `setup({ modules })`). */
  name: string;
  /**
   * Runs once, at the first `sas.setup()` (or at once if setup already ran); read later settings through
   * `host.options()`. Errors are guarded by the host.
   */
  setup?(host: TagHost): void;
  /**
   * Runs before each ad call. The host waits for all extensions together at most `setup({ eidsTimeout })`
   * milliseconds (default 300); a contribution that arrives later is dropped for this call.
   */
  beforeCall?(call: { type: CallType }): CallContribution | Promise<CallContribution> | undefined;
}

/** The setup options the page passes to `sas.setup()`. */
export interface SetupOptions {
  networkid?: number;
  /** Ad server origin, e.g. `https://ads.example.com`. */
  domain?: string;
  /** The publisher's own user id, sent as `uid`. */
  uid?: string;
  debug?: boolean;
  /** Longest wait, in ms, for extensions before an ad call goes out. Default 300, at most {@link MAX_TIMEOUT}. */
  eidsTimeout?: number;
  /** Provider module settings, by module name. */
  modules?: Record<string, unknown>;
  /**
   * The `inserter` of module eids (OpenRTB 2.6): the publisher's domain as in ads.txt. Default: the page's registrable
   * domain.
   */
  inserter?: string;
  /** Holdout experiments of this page (modules/experiments.ts, in the full build and the scripts that serve it). */
  experiments?: ExperimentDeclaration[];
  [key: string]: unknown;
}

/** What the host gives extensions. */
export interface TagHost {
  /** The options of the last `sas.setup()` call. */
  options: () => SetupOptions;
  /** The network id read from the tag's script path (`/tag/<network_id>/sas.js`), if any. */
  networkId: () => number | undefined;
  /** Debug log with the `[sas]` prefix; silent unless debug mode is on. */
  log: (...args: unknown[]) => void;
  /** Debug warning with the `[sas]` prefix; silent unless debug mode is on. */
  warn: (...args: unknown[]) => void;
  /** Runs `fn` and swallows (and reports in debug) anything it throws; the page never sees it. */
  guard: <T>(fn: () => T, label?: string) => T | undefined;
  /**
   * The page's consent signals as read by the built-in consent reader. Resolves within the
   * consent bound and never rejects. Hosts wire it to `readConsent(host)` from builtins.ts; a host without
   * it leaves every provider module off (modules fail closed rather than run without knowing consent).
   */
  consent?: () => Promise<ConsentState>;
  /** Calls a consent platform on this page or, through its locator frame, in an ancestor frame (consent.ts). */
  cmp?: CmpCall;
  /**
   * Eid sources (lowercase) no ad call carries, whoever set them (the page's `setEids`, modules): the sources an
   * experiment holds out for this browser (modules/experiments.ts keeps it). Read when a call leaves and by
   * `sas.getEids()`.
   */
  withhold?: string[];
}

/** The consent platforms' API names: TCF v2.2, GPP, US Privacy. */
export type CmpApi = '__tcfapi' | '__gpp' | '__uspapi';

/**
 * Calls consent platform `api` (`__tcfapi`, `__gpp`, `__uspapi`) with `command`, `version` and `parameter`;
 * `cb(returnValue, success)` gets the answer, of whatever shape the platform gave (the callback checks it). Falsy
 * when the platform is nowhere to be found.
 */
export type CmpCall = (
  api: CmpApi,
  command: string,
  version: number,
  cb: (value: unknown, ok: boolean) => void,
  param?: unknown,
) => unknown;

/** What the page's consent platforms said (TCF v2.2 `__tcfapi`, GPP `__gpp`, US Privacy `__uspapi`). */
export interface ConsentState {
  /** False while a consent platform that is on the page has not answered yet (then nothing may be read or sent). */
  ready: boolean;
  /** Whether GDPR applies: from TCF, or true when GPP lists the EU TCF section; undefined when nobody says. */
  gdprApplies?: boolean;
  /** The TCF consent string. */
  tcString?: string;
  /**
   * TCF purpose consents / legitimate interests and vendor consents / legitimate interests, by id (`{ 45: true }`);
   * read from GPP's EU section, vendors are a list of ids and purposes an array indexed by purpose id.
   */
  purposes?: Record<string, boolean> | boolean[];
  purposeLI?: Record<string, boolean> | boolean[];
  vendors?: Record<string, boolean> | number[];
  vendorLI?: Record<string, boolean> | number[];
  /** The GPP string and its applicable section ids. */
  gppString?: string;
  gppSid?: number[];
  /** The 4-character US Privacy string, e.g. `1YNN`. */
  usPrivacy?: string;
  /** True when the browser signals Global Privacy Control (`navigator.globalPrivacyControl`). */
  gpc?: boolean;
  /**
   * Why US privacy forbids sharing ids with a third party (`gpp usnat Gpc=1`, `gpc`), `''` or absent when it
   * allows it. Filled in by the provider modules (only they act on it: docs/wire-format.md#us-state-privacy); the
   * US Privacy opt-out is read from `usPrivacy` (consent-rules.ts).
   */
  usDenial?: string;
}

/**
 * Operator switches served with the per-network script (`/tag/<network_id>/sas.js`): the server prepends
 * `window.__sasop = { modules: ['idLinking', ...] }` so they arrive with no extra request. A provider module runs
 * only when its name is listed here (and the page has not set its window flag).
 */
export interface OperatorSwitches {
  modules?: string[];
  /** The network's holdout experiments, modules already translated to sources (modules/experiments.ts). */
  experiments?: ExperimentDeclaration[];
}

/** What add-on scripts push onto `window.__sasx`. */
export type ExtensionRegistration = (register: (ext: TagExtension) => void) => void;

/** Ceiling of `eidsTimeout`, in ms: no page setting can hold an ad call longer than this. */
export const MAX_TIMEOUT = 3000;

/**
 * How long an ad call waits for the extensions, in ms: `eidsTimeout` when it is a number ≥ 0, at most
 * {@link MAX_TIMEOUT}; otherwise 300. The host and the extensions that bound their own waits below it read it here.
 */
export const callBound = (o?: SetupOptions): number => {
  const t = o?.eidsTimeout;
  return typeof t == 'number' && t >= 0 ? Math.min(t, MAX_TIMEOUT) : 300;
};
