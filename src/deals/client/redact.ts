/** Keeps secrets (password, client secret, tokens) out of every message and log line the client writes. */

import { REDACTED } from '../rules/index.js';

/** A set of secret strings, and a function that scrubs them (and anything shaped like a bearer token) from text. */
export class Redactor {
  #secrets = new Set<string>();
  /** The known spellings, longest first. */
  #ordered: string[] = [];

  /**
   * Remembers a secret, in every spelling a service may echo it back: as is, form-encoded (the token request body),
   * percent-encoded and JSON-escaped. Strings shorter than 4 characters are ignored (they would scrub ordinary words).
   */
  add(secret: string | undefined): void {
    if (typeof secret !== 'string' || secret.length < 4) return;
    const spellings = [
      secret,
      new URLSearchParams({ s: secret }).toString().slice(2),
      encodeURIComponent(secret),
      JSON.stringify(secret).slice(1, -1),
    ];
    for (const s of spellings) this.#secrets.add(s);
    // Longest first, so no spelling is half-replaced by a shorter one it contains.
    this.#ordered = [...this.#secrets].sort((a, b) => b.length - a.length);
  }

  /** Replaces every known secret, and the value of any `Bearer` credential, with `[REDACTED]`. */
  readonly redact = (text: string): string => {
    let out = String(text);
    for (const s of this.#ordered) if (out.includes(s)) out = out.split(s).join(REDACTED);
    // The credential ends at a quote, a comma, a space or a backslash: in JSON text (a body, a recorded exchange) the
    // backslash of an escaped quote after it is not part of it, and taking it would break the JSON.
    return out.replace(/(Bearer\s+)(?!\[REDACTED\])[^\s"',\\]+/gi, `$1${REDACTED}`);
  };

  toJSON(): string {
    return REDACTED;
  }
}

/**
 * Shortens text to at most `max` characters (plus `…`) AFTER scrubbing it, so a secret straddling the cut is
 * still recognised whole; the cut never splits a `[REDACTED]` marker.
 * @example clip(body, 200, redactor.redact)
 */
export function clip(text: string, max: number, redact: (text: string) => string): string {
  const scrubbed = redact(text);
  if (scrubbed.length <= max) return scrubbed;
  let cut = max;
  const marker = scrubbed.lastIndexOf(REDACTED, cut);
  if (marker >= 0 && marker < cut && marker + REDACTED.length > cut) cut = marker;
  return `${scrubbed.slice(0, cut)}…`;
}
