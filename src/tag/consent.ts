/**
 * The built-in consent reader (issue #5; extended-ids.md §4; domain-notes.md "Consent"). Reads TCF v2.2
 * (`__tcfapi`), GPP (`__gpp`) and US Privacy (`__uspapi`) when the page has them, keeps listening for changes,
 * and puts the signals on every ad call. A missing platform costs nothing; a silent one holds a call at most
 * the bound, and once a wait has run out later calls do not wait again until it answers.
 */
import { MAX_TIMEOUT, type ConsentState, type TagExtension, type TagHost } from './extension.js';
import { consentParams, hasLegalBasis } from './consent-rules.js';
import { DEBUG_BUILD } from './log.js';

type Cmp = (...args: any[]) => unknown;
type Win = Record<string, any>;

/** A live view of the page's consent: `read(boundMs)` resolves once every platform answered, or at the bound. */
export interface ConsentReader {
  read(boundMs: number): Promise<ConsentState>;
}

/** Creates a reader over `w`'s consent platforms; it attaches to each platform the first time it sees it. */
export function createConsentReader(w: Win): ConsentReader {
  const s: ConsentState = { ready: true };
  // Per platform API name: 1 while its first answer is awaited, 2 once it has answered.
  const seen: Record<string, number> = {};
  let wakers: Array<() => void> = [];
  let gaveUp = false;

  const settle = () => {
    if ((s.ready = !Object.values(seen).includes(1))) {
      gaveUp = false;
      wakers.forEach((f) => f());
      wakers = [];
    }
  };
  const answer = (name: string, fields: Partial<ConsentState>) => {
    Object.assign(s, fields);
    seen[name] = 2;
    settle();
  };
  /**
   * Calls platform `name` with `args` the first time it is on the page (every time with `again`). A platform that
   * throws on its first call counts as one that never answers (fail closed); a later failure keeps the last answer.
   */
  const ask = (name: string, again: boolean, ...args: unknown[]) => {
    if (typeof w[name] === 'function' && (again || !seen[name])) {
      seen[name] ||= 1;
      try {
        (w[name] as Cmp)(...args);
      } catch {
        /* no answer */
      }
    }
  };

  return {
    read(boundMs) {
      // 'cmpuishown' means the user has not decided yet: keep waiting for the decision.
      ask('__tcfapi', false, 'addEventListener', 2, (d: any, ok: boolean) => {
        if (!ok || !d || !/^(tcloaded|useractioncomplete)$/.test(d.eventStatus)) return;
        const p = d.purpose || {};
        const v = d.vendor || {};
        answer('__tcfapi', {
          gdprApplies: d.gdprApplies !== false,
          tcString: d.tcString,
          purposes: p.consents,
          purposeLI: p.legitimateInterests,
          vendors: v.consents,
          vendorLI: v.legitimateInterests,
        });
      });
      ask('__gpp', false, 'addEventListener', (evt: any, ok: boolean) => {
        const p = evt && evt.pingData;
        // GPP 1.1 says `signalStatus: 'ready'`; 1.0 CMPs have no signalStatus and answer with the string.
        if (ok === false || !p || (p.signalStatus ? p.signalStatus !== 'ready' : typeof p.gppString !== 'string')) return;
        const sids: number[] = [].concat(p.applicableSections || []).filter((n: number) => n > 0);
        // The EU TCF section applies but no TCF API answers: GDPR applies with no readable consent.
        // The US sections' sale opt-out only matters to provider modules: they read it (modules/_module.ts).
        if (sids.includes(2) && !w.__tcfapi) s.gdprApplies = true;
        answer('__gpp', { gppString: p.gppString, gppSid: sids });
      });
      // US Privacy has no change events: ask again on every read.
      ask('__uspapi', true, 'getUSPData', 1, (d: any, ok: boolean) =>
        answer('__uspapi', ok !== false && d && typeof d.uspString === 'string' ? { usPrivacy: d.uspString } : {}),
      );
      settle();
      return new Promise((resolve) => {
        let timer: ReturnType<typeof setTimeout> | undefined;
        const done = () => {
          clearTimeout(timer);
          resolve({ ...s });
        };
        if (s.ready || gaveUp) return done();
        // A wait that runs out makes later reads answer at once until every platform has answered.
        timer = setTimeout(() => {
          gaveUp = true;
          done();
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
  const t = +(host?.options().eidsTimeout as number);
  // 40 ms before the host's bound (a negative wait is no wait: setTimeout treats it as 0).
  return reader.read((t >= 0 ? Math.min(t, MAX_TIMEOUT) : 300) - 40);
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
        const blockEids = !hasLegalBasis(c);
        if (blockEids) host?.log(DEBUG_BUILD ? 'consent: no legal basis to send eids on this call' : 'consent: no legal basis for eids');
        return { params: consentParams(c), blockEids };
      }),
  };
}
