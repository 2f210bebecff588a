/**
 * Email detection and normalisation for identity-link: trim, lowercase, and
 * for gmail.com / googlemail.com drop the dots and any `+tag` of the local part. Only the hash of the result
 * ever leaves the browser.
 * See docs/wire-format.md#automatic-transfer-settings.
 */

// Deliberately simple: one @, no spaces, a dot in the domain, a 2+ letter TLD. Inputs holding anything else are
// ignored.
const EMAIL = /^[^\s@<>()",;:]+@[a-z0-9-]+(\.[a-z0-9-]+)*\.[a-z]{2,}$/;

/**
 * The normalised form of an email address, or undefined when `raw` is not one.
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
