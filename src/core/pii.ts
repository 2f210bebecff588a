/**
 * Raw personal data in values and URLs: the one email detector of the tag, its modules, the Prebid adapter and
 * the ad server (docs/wire-format.md#no-raw-email-in-urls). Every pattern here runs in time linear in its input:
 * none can backtrack catastrophically (test/fuzz/pii.fuzz.test.ts holds them to that on hostile input).
 */

/**
 * Longest id value the tag takes from the page (cookies, storage, globals, envelopes), in characters; the ad
 * server's default cap of a UID's `id` (docs/ad-server.md "Caps") is the same number.
 */
export const MAX_ID_LENGTH = 2048;

// Deliberately simple: one @, no spaces, a dot in the domain, a 2+ letter TLD. Each quantifier is followed by a
// character it cannot match, so a failed match gives back at most its own run: linear time.
/** A whole value that is one email address (lower case: normalise first). */
export const EMAIL = /^[^\s@<>()",;:]+@[a-z\d-]+(\.[a-z\d-]+)*\.[a-z]{2,}$/;
/**
 * An email address anywhere in a text: a character, `@`, a domain label, a dot. Looser than {@link EMAIL} on
 * purpose: what it finds is removed, never used, and every byte counts in the tag. Linear time: a match can start
 * only right before an `@` (a leading `[…]+` would retry from every position of a long run: quadratic), and the
 * label's class holds neither the `@` before it nor the dot after it.
 */
export const EMAIL_IN = /[^\s@]@[^\s@.]+\./;

/**
 * `text` with two levels of escapes decoded (`%40`, `%2540`, `%25%34%30`, `%u0040` are all `@`): an email
 * encoded twice, the usual accident, still reads as one. Each `%XX` becomes one character (Latin-1, never
 * UTF-8): for detection only. Never throws, where `decodeURIComponent` does on a broken escape.
 */
export const unescapeAll = (text: string): string =>
  // eslint-disable-next-line @typescript-eslint/no-deprecated -- a decoder that never throws, in 8 bytes of the tag
  unescape(unescape(text));

/**
 * True when `text` holds an email address, as it is or percent-encoded up to two levels, in any case.
 * @example hasEmail('/u/John.Doe%2540Example.COM/') // true
 */
export const hasEmail = (text: string): boolean => EMAIL_IN.test(unescapeAll(text));

// An international phone number as a whole value: `+`, a digit, the usual separators, a last digit.
const PHONE = /^\+\d[\d\s().-]{5,20}\d$/;

/**
 * `text` decoded as {@link unescapeAll} does, after any depth of `%25` re-encoding is collapsed to one level
 * (`%252540` is `@`): what the ad server's rules read.
 */
export const unescapeAny = (text: string): string => unescapeAll(text.replace(/%(25)+/g, '%'));
// A character of a domain when an email is cut out of its surroundings.
const DOMAIN = /[\w.-]/;
// A character of a local part when an email is cut out of its surroundings: the usual ones, not the URL
// delimiters (`/`, `?`, `&`, `=`) that the detection patterns let through.
const LOCAL = /[\w.!#$%'*+^`{|}~-]/;

/**
 * The first email address in `text`, percent-decoded as {@link hasEmail} reads it, or undefined. The match found
 * by EMAIL_IN starts at the local part's last character: the rest of the local part is walked back once, and the
 * domain read on from the `@` (letters, digits, dots, hyphens).
 * @example findEmail('next=%2Fu%2FJane.Doe%2540Example.com') // 'Jane.Doe@Example.com'
 */
export function findEmail(text: string): string | undefined {
  const t = unescapeAny(text);
  const m = EMAIL_IN.exec(t);
  if (!m) return undefined;
  const at = m.index + 1;
  let start = at;
  while (start > 0 && LOCAL.test(t[start - 1])) start--;
  let end = at + 1;
  while (end < t.length && DOMAIN.test(t[end])) end++;
  return t.slice(start, end).replace(/\.+$/, '');
}

/**
 * True when a value read from the page looks like raw personal data: it holds an email address (see
 * {@link hasEmail}) or is a phone number in international form (`+33 6 12 34 56 78`). Such a value is never
 * sent or stored; ids, tokens and hashes never look like either.
 */
export const looksPersonal = (value: string): boolean => hasEmail(value) || PHONE.test(value.trim());

/**
 * `url` with every piece that holds an email emptied, or replaced by `replace(piece)`. Pieces are the runs between
 * `/ ? # & ; =`: a path segment, a query key or value, the fragment; a value whose own delimiters are encoded
 * (`?next=%2Fu%3Fe%3Dj%40x.io`) goes whole. Any depth of `%25` re-encoding reads as one level here (`%252540` is
 * `@`). Linear in the URL's length; a URL with no `@` however decoded (most) is read once and given back as it is.
 * @example scrubUrl('https://news.example/a?email=j%40x.io&b=1#top') // 'https://news.example/a?email=&b=1#top'
 */
export function scrubUrl(url: string, replace: (piece: string) => string = () => ''): string {
  // Decoding works piece by piece (no escape holds a delimiter), so a piece holds an `@` only if the whole URL does.
  if (!unescapeAny(url).includes('@')) return url;
  return url.replace(/[^/?#&;=]+/g, (piece) => (EMAIL_IN.test(unescapeAny(piece)) ? replace(piece) : piece));
}

/**
 * The normalised form of an email address, or undefined when `raw` is not one: trimmed, lower case, and for
 * gmail.com / googlemail.com without the dots and any `+tag` of the local part.
 * @example normaliseEmail(' John.Doe+news@GoogleMail.com ') // 'johndoe@googlemail.com'
 */
export function normaliseEmail(raw: unknown): string | undefined {
  if (typeof raw !== 'string' || raw.length > 254) return undefined;
  const email = raw.trim().toLowerCase();
  if (!EMAIL.test(email)) return undefined;
  const at = email.lastIndexOf('@');
  let local = email.slice(0, at);
  const domain = email.slice(at + 1);
  if (domain === 'gmail.com' || domain === 'googlemail.com') {
    local = local.split('+')[0].replace(/\./g, '');
    if (!local) return undefined;
  }
  return local + '@' + domain;
}
