/**
 * Experiments (holdouts): the operator (per network, `window.__sasop.experiments`) and the page
 * (`sas.setup({ experiments })`) hold some eid sources out of a share of browsers, to measure what those ids are
 * worth. A browser's arm is a hash of a first-party random id (`_sas_xid`), stored only where consent allows storage
 * (the modules' rule, for the ad service's vendor id) and then kept across page views; elsewhere the id lives for the
 * page view alone and nothing is stored. In the held-out arm the experiment's sources leave every ad call
 * (`host.withhold`, applied by the core whoever set the eids) and every Prebid adapter request (`window.__sasxp`);
 * every call carries its arms as `xp`. Until the arms are known (consent still being read, declarations just
 * changed) every declared source is held out: a slow consent platform never lets a held-out source through.
 * See docs/tag.md#experiments-holdouts.
 */
import { armOf, checkExperiments, type Experiment, type ExperimentEntry } from '../../core/experiments.js';
import { XID_KEY } from '../../core/module-keys.js';
import { encodeEids } from '../../core/codec.js';
import { AD_SERVICE_GVL, mayRunModule } from '../consent-rules.js';
import type { CallContribution, ConsentState, OperatorSwitches, TagExtension, TagHost } from '../extension.js';
import { consentOf, registerExtension } from './_module.js';
import { forgetKeys, loadItem, saveItem } from './_storage.js';

/** How long the stored id keeps a browser's arms: a year from its first experiment. */
export const XID_TTL = 365 * 864e5;

/** What the module publishes on `window.__sasxp` for the Prebid adapter (and a page's debug view). */
export interface ExperimentState {
  /** Sources (lowercase) no request of this page may carry now. */
  out: string[];
  /** This page's arms; absent while they are not known yet (then `out` holds every declared source). */
  xp?: ExperimentEntry[];
}

/** The globals the module reads and writes. */
interface Win {
  __sasop?: OperatorSwitches;
  __sasxp?: ExperimentState;
}

/** 16 random bytes as 32 hex digits. */
export function randomXid(): string {
  const b = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(b, (x) => (x + 256).toString(16).slice(1)).join('');
}

const sourcesOf = (list: Experiment[]) => [...new Set(list.flatMap((x) => x.sources))];

/** The experiments extension over window `w` (exported for tests, which make fresh instances). */
export function createExperiments(w: Win = window as unknown as Win): TagExtension {
  let host: TagHost | undefined;
  // This page view's id: the arms where nothing may be stored, and the id stored once storage is allowed.
  let pageXid: string | undefined;
  let seen: unknown[] = [];
  let list: Experiment[] = [];
  let said = '';

  /** The declared experiments: re-checked (and reported) only when the operator's or the page's list changes. */
  const declared = (h: TagHost): Experiment[] => {
    const op = w.__sasop?.experiments;
    const page = h.options().experiments;
    if (op === seen[0] && page === seen[1]) return list;
    seen = [op, page];
    const taken: string[] = [];
    const checked = [checkExperiments(op, 'operator experiments', taken), checkExperiments(page, 'experiments', taken)];
    for (const r of checked) for (const i of r.issues) h.warn('experiments:', i.path + ':', i.message);
    list = checked.flatMap((r) => r.value);
    // New declarations: their sources stay out until their arms are known.
    publish(h, [...new Set([...(h.withhold || []), ...sourcesOf(list)])]);
    return list;
  };

  const publish = (h: TagHost, out: string[], xp?: ExperimentEntry[]) => {
    h.withhold = out;
    w.__sasxp = { out, xp };
  };

  /** Decides this page's arms under the consent of now, publishes them and returns them. */
  const decide = async (h: TagHost): Promise<ExperimentEntry[]> => {
    const now = declared(h);
    if (!now.length) {
      publish(h, []);
      return [];
    }
    const c: ConsentState = h.consent ? await consentOf(h) : { ready: false };
    let xid = (pageXid ||= randomXid());
    let sticky = mayRunModule(c, AD_SERVICE_GVL);
    if (sticky) {
      const stored = loadItem('localStorage', XID_KEY);
      if (stored && /^[0-9a-f]{32}$/.test(stored)) xid = stored;
      else {
        saveItem('localStorage', XID_KEY, xid, XID_TTL);
        // Storage that refuses the write (blocked, full) makes the arms this page view's only.
        sticky = loadItem('localStorage', XID_KEY) === xid;
      }
    } else if (c.ready) forgetKeys([XID_KEY]);
    if (now !== list) return decide(h);
    const xp = now.map((x): ExperimentEntry => ({
      id: x.id,
      arm: armOf(xid, x.id, x.share),
      pct: x.share,
      src: x.sources,
      st: sticky ? 1 : 0,
    }));
    publish(h, sourcesOf(now.filter((_, i) => xp[i].arm == 'h')), xp);
    const say = xp.map((e) => `${e.id} ${e.arm == 'h' ? 'held out' : 'control'}`).join(', ');
    if (say + sticky !== said) {
      said = say + sticky;
      h.log('experiments:', say, sticky ? '(kept across page views)' : '(this page view only)');
    }
    return xp;
  };

  return {
    name: 'experiments',
    setup(h) {
      host = h;
      // Decided at once, so the Prebid adapter finds the arms even before the first ad call.
      void h.guard(() => decide(h), 'experiments');
    },
    beforeCall: ({ type }) =>
      host &&
      decide(host).then((xp): CallContribution =>
        xp.length ? { params: { xp: type == 'std' || type == 'video' ? encodeEids(xp) : xp } } : {},
      ),
  };
}

/** The experiments extension of this page. */
export const experiments = createExperiments();

registerExtension(experiments);
