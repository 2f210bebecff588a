/** Keeps secrets (password, client secret, tokens) out of every message and log line the client writes. */

/** Placeholder written where a secret was. */
export const REDACTED = '[REDACTED]';

/** A set of secret strings, and a function that scrubs them (and anything shaped like a bearer token) from text. */
export class Redactor {
  #secrets = new Set<string>();

  /** Remembers a secret; strings shorter than 4 characters are ignored (they would scrub ordinary words). */
  add(secret: string | undefined): void {
    if (typeof secret === 'string' && secret.length >= 4) this.#secrets.add(secret);
  }

  /** Replaces every known secret, and the value of any `Bearer` credential, with `[REDACTED]`. */
  readonly redact = (text: string): string => {
    let out = String(text);
    for (const s of this.#secrets) if (out.includes(s)) out = out.split(s).join(REDACTED);
    return out.replace(/(Bearer\s+)(?!\[REDACTED\])[^\s"',]+/gi, `$1${REDACTED}`);
  };

  toJSON(): string {
    return REDACTED;
  }
}
