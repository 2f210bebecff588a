/**
 * The built-in consent reader (issue #5; extended-ids.md §4; domain-notes.md "Consent"). Reads TCF v2.2
 * (`__tcfapi`), GPP (`__gpp`) and US Privacy (`__uspapi`) when the page has them, keeps listening for changes,
 * and puts the signals on every ad call. A missing platform costs nothing; a silent one holds a call at most
 * the bound, and once a wait has run out later calls do not wait again until it answers.
 */
import type { ConsentState, TagExtension, TagHost } from './extension.js';
import { consentParams, hasLegalBasis } from './consent-rules.js';

type Cmp = (...args: any[]) => unknown;
type Win = Record<string, any>;

/** A live view of the page's consent: `read(boundMs)` resolves once every platform answered, or at the bound. */
export interface ConsentReader {
  read(boundMs: number): Promise<ConsentState>;
}

/** Creates a reader over `w`'s consent platforms; it attaches to each platform the first time it sees it. */
export function createConsentReader(w: Win): ConsentReader {
  const s: ConsentState = { ready: true };
  const started: Record<string, 1> = {};
  const waiting = new Set<string>();
  let wakers: Array<() => void> = [];
  let gaveUp = false;

  const settle = () => {
    s.ready = waiting.size === 0;
    if (s.ready) {
      gaveUp = false;
      wakers.forEach((f) => f());
      wakers = [];
    }
  };
  const answered = (key: string) => {
    waiting.delete(key);
    settle();
  };
  // Each platform call is guarded: a CMP that throws counts as one that never answers (fail closed).
  const call = (key: string, fn: () => void) => {
    waiting.add(key);
    s.ready = false;
    try {
      fn();
    } catch {
      /* stays waiting: no answer, no consent */
    }
  };
  const api = (name: string): Cmp | undefined => (typeof w[name] === 'function' ? w[name] : undefined);

  const attach = () => {
    const tcf = api('__tcfapi');
    if (tcf && !started.t) {
      started.t = 1;
      call('t', () =>
        tcf('addEventListener', 2, (d: any, ok: boolean) => {
          // 'cmpuishown' means the user has not decided yet: keep waiting for the decision.
          if (!ok || !d || (d.eventStatus !== 'tcloaded' && d.eventStatus !== 'useractioncomplete')) return;
          s.gdprApplies = d.gdprApplies !== false;
          s.tcString = typeof d.tcString === 'string' && d.tcString ? d.tcString : undefined;
          s.purposes = d.purpose?.consents;
          s.purposeLI = d.purpose?.legitimateInterests;
          s.vendors = d.vendor?.consents;
          s.vendorLI = d.vendor?.legitimateInterests;
          answered('t');
        }),
      );
    }
    const gpp = api('__gpp');
    if (gpp && !started.g) {
      started.g = 1;
      call('g', () =>
        gpp('addEventListener', (evt: any, ok: boolean) => {
          const p = evt?.pingData;
          // GPP 1.1 says `signalStatus: 'ready'`; 1.0 CMPs have no signalStatus and answer with the string.
          if (ok === false || !p || (p.signalStatus ? p.signalStatus !== 'ready' : typeof p.gppString !== 'string')) return;
          s.gppString = p.gppString || undefined;
          const sids = (Array.isArray(p.applicableSections) ? p.applicableSections : []).filter((n: unknown) => typeof n === 'number' && n > 0);
          s.gppSid = sids.length ? sids : undefined;
          // The EU TCF section applies but no TCF API answers: GDPR applies with no readable consent.
          if (sids.includes(2) && !api('__tcfapi')) s.gdprApplies = true;
          // The US sections' sale opt-out only matters to provider modules: they read it (modules/_module.ts).
          answered('g');
        }),
      );
    }
    const usp = api('__uspapi');
    if (usp) {
      // US Privacy has no change events: ask again on every read.
      const first = !started.u;
      started.u = 1;
      const ask = () =>
        usp('getUSPData', 1, (d: any, ok: boolean) => {
          if (ok !== false && d && typeof d.uspString === 'string') s.usPrivacy = d.uspString;
          answered('u');
        });
      if (first) call('u', ask);
      else
        try {
          ask();
        } catch {
          /* keep the last answer */
        }
    }
  };

  return {
    read(boundMs) {
      attach();
      settle();
      const snapshot = () => ({ ...s });
      if (s.ready || gaveUp) return Promise.resolve(snapshot());
      return new Promise((resolve) => {
        const done = () => {
          clearTimeout(timer);
          resolve(snapshot());
        };
        const timer = setTimeout(() => {
          gaveUp = true;
          wakers = wakers.filter((f) => f !== done);
          resolve(snapshot());
        }, boundMs);
        wakers.push(done);
      });
    },
  };
}

let reader: ConsentReader | undefined;

/**
 * The page's consent, bounded so it always resolves before the host's own `eidsTimeout` bound
 * (a contribution that arrived after that bound would be dropped, and with it the `blockEids` verdict).
 */
export function readConsent(host?: TagHost): Promise<ConsentState> {
  reader ||= createConsentReader(window as unknown as Win);
  const t = Number(host?.options().eidsTimeout);
  return reader.read(Math.max(0, (t >= 0 ? t : 300) - 40));
}

/** Forgets the reader (tests only: each test page gets fresh platforms). */
export function resetConsentReader(): void {
  reader = undefined;
}

/** The built-in consent extension: consent signals on every call, and no eids without a legal basis. */
export function createConsentExtension(): TagExtension {
  let host: TagHost | undefined;
  return {
    name: 'consent',
    setup(h) {
      host = h;
      // Modules read consent through the host; install it when the host does not provide its own.
      if (!h.consent) h.consent = () => readConsent(h);
      readConsent(h);
    },
    beforeCall: () =>
      readConsent(host).then((c) => {
        if (!hasLegalBasis(c)) host?.log('consent: no legal basis to send eids on this call');
        return { params: consentParams(c), blockEids: !hasLegalBasis(c) };
      }),
  };
}
