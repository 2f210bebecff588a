/**
 * The render add-on (`dist/addons/render.js`, outside the core's size budget): shows the ads of an ad server's
 * answer on the page. `sas.call(...)` resolves with the answer's text in `response`; `sas.render(result)` reads
 * it as the answer contract of docs/tag.md ("What the ad server answers") and writes each ad's creative into a
 * friendly iframe (same origin, no `src`) inside the element whose id is the ad's `tagId`.
 *
 * Like the core, it never throws into the page: a bad answer, a missing element or a creative that throws while it
 * is written becomes an outcome with a reason (and a `[sas]` warning with `?sas_debug=1`).
 */

/** One ad of the answer contract. */
export interface AnswerAd {
  /** Id of the page element the ad goes into (the `tagId` of the call's format). */
  tagId?: string;
  /** The format the ad was chosen for (informative). */
  formatId?: number;
  /** The creative: an HTML document or fragment, written into the iframe as is. */
  html?: string;
  /** Size of the iframe in CSS pixels; absent: 100 % wide, 0 high until the creative says otherwise. */
  width?: number;
  height?: number;
}

/** What happened to one ad. */
export interface RenderOutcome {
  tagId?: string;
  /** True when the creative was written into its iframe. */
  ok: boolean;
  /** Why not, when not. */
  reason?: string;
}

/** Options of `sas.render`. */
export interface RenderOptions {
  /** The element id for ads that name none (a GET call for one format, say). */
  tagId?: string;
}

/** Largest creative written, in characters: a bigger one is refused rather than freezing the page. */
const MAX_HTML = 1_000_000;
/** Largest iframe side, in CSS pixels. */
const MAX_SIDE = 10_000;

const debug = (): boolean => {
  try {
    return /[?&]sas_debug=(1|true)(&|$)/.test(location.search);
  } catch {
    return false;
  }
};

const warn = (...args: unknown[]): void => {
  try {
    if (debug()) console.warn('[sas]', ...args);
  } catch {
    // No console: warnings are best effort.
  }
};

/** A side length for the iframe: a whole number of pixels within bounds, else undefined. */
const side = (v: unknown): number | undefined =>
  typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= MAX_SIDE ? v : undefined;

/** The ads of an answer text: `{ "ads": [...] }`, or one ad object; anything else is no ad. */
export function answerAds(response: unknown): AnswerAd[] {
  if (typeof response !== 'string' || response.trim() === '') return [];
  const body = JSON.parse(response) as { ads?: unknown } | null;
  if (body === null || typeof body !== 'object') return [];
  const ads = Array.isArray(body.ads) ? body.ads : 'html' in body ? [body] : [];
  return ads.filter((a): a is AnswerAd => a !== null && typeof a === 'object');
}

/** Writes one ad into a new friendly iframe in `doc`'s element `tagId`, replacing what was there. */
function renderAd(doc: Document, ad: AnswerAd, fallbackTagId: string | undefined): RenderOutcome {
  const tagId = typeof ad.tagId === 'string' && ad.tagId ? ad.tagId : fallbackTagId;
  if (!tagId) return { ok: false, reason: 'the ad names no tagId and none was given' };
  if (typeof ad.html !== 'string' || ad.html === '') return { tagId, ok: false, reason: 'the ad has no html' };
  if (ad.html.length > MAX_HTML) return { tagId, ok: false, reason: `the creative is over ${MAX_HTML} characters` };
  const slot = doc.getElementById(tagId);
  if (!slot) return { tagId, ok: false, reason: `no element with id "${tagId}" on the page` };
  const frame = doc.createElement('iframe');
  const width = side(ad.width);
  const height = side(ad.height);
  frame.title = 'Advertisement';
  frame.setAttribute('scrolling', 'no');
  frame.setAttribute('frameborder', '0');
  frame.style.cssText = `border:0;display:block;width:${width === undefined ? '100%' : `${width}px`};height:${height ?? 0}px`;
  slot.replaceChildren(frame);
  // A friendly iframe: no src, so it shares the page's origin and the creative's own scripts (document.write
  // included) run as if they were in the page, without its layout or styles.
  const inner = frame.contentDocument;
  if (!inner) return { tagId, ok: false, reason: 'the iframe has no document' };
  inner.open();
  // document.write runs the creative's scripts in order, as ad servers expect.
  // eslint-disable-next-line @typescript-eslint/no-deprecated
  inner.write(
    /<html[\s>]/i.test(ad.html)
      ? ad.html
      : `<!doctype html><html><head><style>body{margin:0}</style></head><body>${ad.html}</body></html>`,
  );
  inner.close();
  return { tagId, ok: true };
}

/**
 * Renders the ads of a call's answer (`sas.call(...).then(sas.render)`); resolves nothing, returns one outcome per
 * ad. Never throws.
 * @example sas.call('onecall', { siteId: 1, pageId: 2, formats: [{ id: 3, tagId: 'banner' }] }).then(sas.render)
 */
export function render(result: unknown, options?: RenderOptions): RenderOutcome[] {
  try {
    const r = result as { ok?: unknown; response?: unknown } | null;
    if (!r || r.ok !== true) {
      warn('render: the call did not succeed; nothing to show');
      return [];
    }
    const ads = answerAds(r.response);
    const outcomes = ads.map((ad) => {
      try {
        return renderAd(document, ad, options?.tagId);
      } catch (e) {
        return { tagId: ad.tagId, ok: false, reason: `the creative failed: ${String(e && (e as Error).message)}` };
      }
    });
    for (const o of outcomes) if (!o.ok) warn('render:', o.tagId ?? '(no tagId)', o.reason);
    return outcomes;
  } catch (e) {
    warn('render: the answer is not the JSON of the answer contract:', e);
    return [];
  }
}

/** Puts `sas.render` on the page's `window.sas` (created when the core has not loaded yet). */
export function installRender(win: Window & { sas?: Record<string, unknown> }): void {
  try {
    const sas = (win.sas = win.sas || {});
    if (typeof sas.render !== 'function') sas.render = render;
  } catch {
    // A page that froze window.sas keeps working; it only misses sas.render.
  }
}

installRender(window);
