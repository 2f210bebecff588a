/**
 * Page URLs without raw emails on the receiving side (docs/ad-server.md#page-urls-without-emails): the page URL of
 * every call (the `Referer` header, a Prebid body's `page`, an OpenRTB body's `site.page`) loses its emails when
 * it is parsed, whoever sent the call, and again where a bid request is built from it. The detection is the core's
 * (core/pii.ts), the one the tag and the Prebid adapter use; linear time on any URL.
 */
import { createHash } from 'node:crypto';
import { findEmail, normaliseEmail, scrubUrl, unescapeAny } from '../../core/index.js';
import { given, OptionsError } from '../common/index.js';

/** How page URLs lose their emails. */
export interface PageUrlOptions {
  /**
   * What takes the place of an email: `'strip'` (default) empties the piece of the URL that holds it (a path
   * segment, a query value, the fragment); `'hash'` puts the SHA-256 (hex) of the normalised email there instead,
   * the form identity providers match on.
   */
  emails?: 'strip' | 'hash';
  /**
   * Query and fragment parameters whose values go whatever they hold (a Base64 email looks like no email), by name,
   * any case. Default `['email']`; `[]` for none.
   */
  emailParams?: readonly string[];
}

/** {@link PageUrlOptions} checked, with their defaults (from {@link pageUrlRules}). */
export interface PageUrlRules {
  /** The email parameters' names, lower case. */
  params: ReadonlySet<string>;
  /** Finds one of them as a key (`?email=`, `&e=`, any case) in a decoded URL; undefined when there are none. */
  keys?: RegExp;
  replace: (piece: string) => string;
}

/** The test for `names` as keys of a query or a fragment. */
const keysOf = (names: readonly string[]): RegExp | undefined =>
  names.length
    ? new RegExp(`[?&;#](?:${names.map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})=`, 'i')
    : undefined;

const strip = () => '';
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** The hash of what a piece holds: its email, normalised; for a named parameter without one, its text. */
function hashPiece(piece: string): string {
  const email = findEmail(piece);
  const text = email === undefined ? unescapeAny(piece).trim() : (normaliseEmail(email) ?? email);
  return sha256(text.toLowerCase());
}

const NO_PARAMS: ReadonlySet<string> = new Set();
const DEFAULT_RULES: PageUrlRules = { params: new Set(['email']), keys: keysOf(['email']), replace: strip };
/** The rules of a page URL parsed already: emails only (the named parameters were handled then). */
const EMAILS_ONLY: Record<'strip' | 'hash', PageUrlRules> = {
  strip: { params: NO_PARAMS, replace: strip },
  hash: { params: NO_PARAMS, replace: hashPiece },
};
const resolved = new WeakMap<object, PageUrlRules>();

function checkObject(options: unknown, field: string): asserts options is PageUrlOptions {
  if (options === null || typeof options !== 'object')
    throw new OptionsError(field, `must be an object such as { emails: 'hash' } (got ${given(options)})`);
}

function checkEmails(emails: unknown, field: string): 'strip' | 'hash' {
  if (emails !== 'strip' && emails !== 'hash')
    throw new OptionsError(`${field}.emails`, `must be 'strip' or 'hash' (got ${given(emails)})`);
  return emails;
}

/**
 * The rules of `options` (the defaults when absent); a value that is not one throws an {@link OptionsError}
 * naming it (`pageUrl.emails`). Checked once per options object.
 */
export function pageUrlRules(options: PageUrlOptions | undefined, field = 'pageUrl'): PageUrlRules {
  if (options === undefined) return DEFAULT_RULES;
  checkObject(options, field);
  const known = resolved.get(options);
  if (known) return known;
  const { emails = 'strip', emailParams = ['email'] } = options;
  checkEmails(emails, field);
  const names: unknown = emailParams;
  if (!Array.isArray(names) || !names.every((p): p is string => typeof p === 'string' && p !== ''))
    throw new OptionsError(`${field}.emailParams`, `must be an array of parameter names (got ${given(emailParams)})`);
  const lower = names.map((p) => p.toLowerCase());
  const rules: PageUrlRules = {
    params: lower.length ? new Set(lower) : NO_PARAMS,
    keys: keysOf(lower),
    replace: emails === 'hash' ? hashPiece : strip,
  };
  resolved.set(options, rules);
  return rules;
}

/**
 * The rules for a page URL where a bid request is built: only its emails (`emails` of `options`, stripped by
 * default), since the named parameters were handled when the call was parsed, and a hash of one would be hashed
 * again.
 */
export function emailOnlyRules(options: Pick<PageUrlOptions, 'emails'> | undefined, field: string): PageUrlRules {
  if (options === undefined) return EMAILS_ONLY.strip;
  checkObject(options, field);
  return EMAILS_ONLY[checkEmails(options.emails ?? 'strip', field)];
}

// `scheme://user:password@` of an absolute URL: a page URL carries no credentials, so the user part goes whole.
const USERINFO = /^([a-z][a-z\d+.-]*:\/\/)[^/?#]*@/i;
// One `key=value` of the query or the fragment. The key holds none of the delimiters that can start a pair, so a
// failed match gives back only its own run: linear time.
const PARAM = /([?#&;])([^=&;#?]*)=([^&;#]*)/g;

let lastUrl = '';
let lastRules: PageUrlRules | undefined;
let lastOut = '';

/**
 * `url` without raw emails under `rules` (from {@link pageUrlRules} or {@link emailOnlyRules}): no user part, the
 * values of the named parameters stripped or hashed, then every piece that holds an email (core `scrubUrl`: as it
 * is or percent-encoded, any depth, any case). A URL with nothing of the kind comes back as it is. The last answer
 * is kept: the calls of one page, and the bid requests of one call, ask for the same URL in a row.
 */
export function scrubWith(url: string, rules: PageUrlRules): string {
  if (url === lastUrl && rules === lastRules) return lastOut;
  // Our own last answer holds no email that either mode would find again.
  if (url === lastOut && rules.params === NO_PARAMS) return url;
  let out = url;
  // One decoding of the whole URL says whether there is anything to do: an `@` (an email, or a user part), or an
  // email parameter as a key. A page URL with neither, the rule, is read once and kept as it is.
  const flat = unescapeAny(url);
  const named = rules.keys?.test(flat) === true;
  if (named || flat.includes('@')) {
    if (url.includes('@')) out = out.replace(USERINFO, '$1');
    if (named)
      out = out.replace(PARAM, (pair: string, lead: string, key: string, value: string) =>
        value && rules.params.has(unescapeAny(key.replace(/\+/g, ' ')).toLowerCase())
          ? `${lead}${key}=${rules.replace(value)}`
          : pair,
      );
    out = scrubUrl(out, rules.replace);
  }
  lastUrl = url;
  lastRules = rules;
  lastOut = out;
  return out;
}

/**
 * A page URL without raw emails, as the parser leaves `AdCall.referer` (docs/ad-server.md#page-urls-without-emails):
 * for a URL your own code forwards or keeps. Throws an {@link OptionsError} on options that are not
 * {@link PageUrlOptions}.
 * @example scrubPageUrl('https://news.example/p?email=jane%40example.com&id=7') // 'https://news.example/p?email=&id=7'
 */
export function scrubPageUrl(url: string, options?: PageUrlOptions): string {
  return scrubWith(url, pageUrlRules(options));
}
