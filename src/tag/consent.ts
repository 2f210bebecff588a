/**
 * The built-in consent reader (docs/wire-format.md#consent-signals-and-rules). Reads TCF v2.2
 * (`__tcfapi`), GPP (`__gpp`) and US Privacy (`__uspapi`) when the page has them, keeps listening for changes,
 * and puts the signals on every ad call. A tag in an iframe (a player, a SafeFrame, another origin) reaches the
 * top page's consent platform through its locator frame and the IAB postMessage protocol. A missing platform
 * costs nothing; a silent one holds a call at most the bound, and once a wait has run out later calls do not wait
 * again until it answers. A platform that was absent or silent is asked again on every later call, so a consent
 * platform that loads late is heard from then on.
 */
import {
  callBound,
  type CmpApi,
  type CmpCall,
  type ConsentState,
  type TagExtension,
  type TagHost,
} from './extension.js';
import { consentParams, hasLegalBasis } from './consent-rules.js';
import { DEBUG_BUILD } from './log.js';

/**
 * The parts of a window the reader uses: its messages, its frame tree and the consent platforms' names. A page may
 * hold anything under those names: a platform is checked to be a function before a call.
 */
export interface Win {
  addEventListener(type: 'message', listener: (e: MessageEvent<unknown>) => void): void;
  postMessage(message: unknown, targetOrigin: string): void;
  /** The window's child frames, looked up by name (`frames['__tcfapiLocator']`). */
  readonly frames: object;
  readonly parent: Win;
  readonly top: Win | null;
  __tcfapi?: unknown;
  __gpp?: unknown;
  __uspapi?: unknown;
}

/** A window's `frames` as a lookup by name: the frame holding a platform has a child frame named `<api>Locator`. */
type ChildFrames = Record<string, unknown>;

/**
 * A consent platform's function: TCF and US Privacy take (command, version, callback, parameter), GPP 1.1 takes
 * (command, callback, parameter).
 */
type CmpFunction = (command: string, ...args: unknown[]) => void;

/**
 * What a platform's frame posts back: `{ __tcfapiReturn | __gppReturn | __uspapiReturn: CmpReturn }`. Any other
 * message fails the lookup of its `callId` (it throws inside the listener's `try`).
 */
interface CmpReturn {
  returnValue: unknown;
  success: boolean;
  callId: number;
}

/** TCF's TCData, as far as the reader uses it (a platform may send less: each field is checked before use). */
interface TcfData {
  eventStatus: string;
  gdprApplies?: boolean;
  tcString?: string;
  purpose?: TcfConsents;
  vendor?: TcfConsents;
}

/** TCF consents and legitimate interests by purpose or vendor id: `{ 45: true }`. */
interface TcfConsents {
  consents?: Record<string, boolean>;
  legitimateInterests?: Record<string, boolean>;
}

/** GPP's event data, as far as the reader uses it (GPP 1.1 `pingData`; a 1.0 platform sends less). */
interface GppEvent {
  pingData?: {
    signalStatus?: string;
    gppString: string;
    applicableSections: number | number[];
    sectionList?: number[];
    parsedSections?: { tcfeuv2?: GppTcfSection | GppTcfSection[] };
  };
}

/** GPP's decoded EU TCF section: purposes as booleans for purposes 1, 2, …; vendors as lists of ids. */
interface GppTcfSection {
  PurposeConsents?: boolean[];
  PurposeLegitimateInterests?: boolean[];
  VendorConsents?: number[];
  VendorLegitimateInterests?: number[];
}

/**
 * A callback for one platform's answers. Its parameter declares the shape it reads (any shape fits `never`);
 * the platform's answer may not have that shape, so the callback checks each field before use.
 */
type PlatformCallback = (d: never, ok: boolean) => void;

/** US Privacy's `getUSPData` answer. */
interface UspData {
  uspString?: string;
}

/** A live view of the page's consent: `read(boundMs)` resolves once every platform answered, or at the bound. */
export interface ConsentReader {
  read(boundMs: number): Promise<ConsentState>;
  /** Calls a consent platform wherever it is (see {@link createCmpCaller}). */
  call: CmpCall;
}

/**
 * A {@link CmpCall} over `w`: the platform's function on `w` itself, else the nearest ancestor frame holding its
 * `<api>Locator` frame, spoken to with `<api>Call` / `<api>Return` messages (IAB TCF, GPP and US Privacy
 * postMessage protocol; works across origins). Falsy when neither is there, asked anew each time: a platform
 * may load later. Never throws out of the frame walk (a sandboxed frame may refuse access to its ancestors).
 */
export function createCmpCaller(w: Win): CmpCall {
  const waiting: Record<string, (v: unknown, ok: boolean, from: unknown) => void> = {};
  w.addEventListener('message', (e: MessageEvent) => {
    try {
      // `{ __tcfapiReturn | __gppReturn | __uspapiReturn: { returnValue, success, callId } }`: the IAB stubs answer
      // an object call with an object (JSON strings only to string calls, which this caller never sends).
      const r = Object.values(e.data as Record<string, CmpReturn>)[0];
      waiting[r.callId](r.returnValue, r.success, e.source);
    } catch {
      /* not an answer to us */
    }
  });
  return (api, command, version, cb, param) => {
    // TCF and US Privacy take (command, version, callback, parameter); GPP 1.1 takes (command, callback, parameter).
    if (typeof w[api] == 'function') {
      if (api == '__gpp') (w[api] as CmpFunction)(command, cb, param);
      else (w[api] as CmpFunction)(command, version, cb, param);
      return true;
    }
    let f = w;
    let to: Win | undefined;
    try {
      for (; !((f.frames as ChildFrames)[api + 'Locator'] && (to = f)) && f != w.top; f = f.parent);
    } catch {
      /* an ancestor we may not look at: no platform reachable */
    }
    if (to) {
      const id = Math.random();
      // Only the frame we asked may answer (a callId is not a secret on a page with other frames).
      waiting[id] = (v, ok, from) => from == to && cb(v, ok);
      to.postMessage({ [api + 'Call']: { command, version, parameter: param, callId: id } }, '*');
    }
    return to;
  };
}

/** Creates a reader over `w`'s consent platforms; it attaches to each platform the first time it hears from it. */
export function createConsentReader(w: Win): ConsentReader {
  const s: ConsentState = { ready: true };
  // The browser's Global Privacy Control (a page or an extension may define it: only `true` counts).
  if ((w as { navigator?: { globalPrivacyControl?: unknown } }).navigator?.globalPrivacyControl === true) s.gpc = true;
  const call = createCmpCaller(w);
  // Per platform API name: 1 while its first answer is awaited, 2 once it has answered.
  const seen: Record<string, number> = {};
  let wakers: (() => void)[] = [];
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
   * Calls platform `name` until it has answered (every time with `again`). A platform that throws counts as one
   * that never answers (fail closed); once it answered, a later failure keeps the last answer.
   */
  const ask = (name: CmpApi, again: boolean, command: string, version: number, cb: PlatformCallback) => {
    try {
      if ((again || seen[name] != 2) && call(name, command, version, cb as (d: unknown, ok: boolean) => void))
        seen[name] ||= 1;
    } catch {
      seen[name] ||= 1;
    }
  };

  return {
    call,
    read(boundMs) {
      // 'cmpuishown' means the user has not decided yet: keep waiting for the decision.
      ask('__tcfapi', false, 'addEventListener', 2, (d: TcfData | undefined, ok) => {
        if (!ok || !d || !/^(tcloaded|useractioncomplete)$/.test(d.eventStatus)) return;
        const p: TcfConsents = d.purpose || {};
        const v: TcfConsents = d.vendor || {};
        answer('__tcfapi', {
          gdprApplies: d.gdprApplies !== false,
          tcString: d.tcString,
          purposes: p.consents,
          purposeLI: p.legitimateInterests,
          vendors: v.consents,
          vendorLI: v.legitimateInterests,
        });
      });
      ask('__gpp', false, 'addEventListener', 1, (evt: GppEvent | undefined, ok) => {
        const p = evt && evt.pingData;
        // GPP 1.1 says `signalStatus: 'ready'`; 1.0 CMPs have no signalStatus and answer with the string.
        if (!ok || !p || (p.signalStatus ? p.signalStatus !== 'ready' : typeof p.gppString !== 'string')) return;
        const sids: number[] = ([] as number[]).concat(p.applicableSections).filter((n: number) => n > 0);
        const f: Partial<ConsentState> = { gppString: p.gppString, gppSid: sids };
        // GDPR signalled only through GPP's EU TCF section (no TCF API anywhere): the same rules, read from that
        // section (GPP 1.1 pingData: `sectionList` orders the string's sections, `parsedSections` decodes them).
        // The US sections' sale opt-out only matters to provider modules: they read it (modules/_module.ts).
        if (sids.includes(2) && !seen.__tcfapi) {
          const t: GppTcfSection = ([] as (GppTcfSection | undefined)[]).concat(p.parsedSections?.tcfeuv2)[0] || {};
          const i = (p.sectionList || []).indexOf(2);
          Object.assign(f, {
            gdprApplies: true,
            // Not listed (i = -1): index -1, no string.
            tcString: p.gppString.split('~')[i + 1 || -1],
            // Purposes come as booleans for purposes 1, 2, …: behind a 0 they index like TCF's map.
            purposes: ([0] as unknown[]).concat(t.PurposeConsents),
            purposeLI: ([0] as unknown[]).concat(t.PurposeLegitimateInterests),
            // Vendors come as a list of ids: consent-rules.ts takes lists as well as TCF's `{ id: true }` maps.
            vendors: t.VendorConsents,
            vendorLI: t.VendorLegitimateInterests,
          });
        }
        answer('__gpp', f);
      });
      // US Privacy has no change events: ask again on every read.
      ask('__uspapi', true, 'getUSPData', 1, (d: UspData | undefined, ok) =>
        answer('__uspapi', ok && d && typeof d.uspString === 'string' ? { usPrivacy: d.uspString } : {}),
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
  reader ||= createConsentReader(window);
  // 40 ms before the host's bound (a negative wait is no wait: setTimeout treats it as 0).
  return reader.read(callBound(host?.options()) - 40);
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
      // Modules read consent (and the GPP fields they need) through the host; installed unless the host has its own.
      h.consent ||= () => readConsent(h);
      void readConsent(h);
      h.cmp ||= reader!.call;
    },
    beforeCall: () =>
      readConsent(host).then((c) => {
        const blockEids = !hasLegalBasis(c);
        if (blockEids)
          host?.log(DEBUG_BUILD ? 'consent: no legal basis to send eids on this call' : 'consent: no legal basis');
        return { params: consentParams(c), blockEids };
      }),
  };
}
