/**
 * The one escaping of characters a terminal would act on: every human-readable output of the CLI goes through it
 * (docs/deals.md, "The CLI"), and so do the parts' own text renderings (a deals plan). Pure: no DOM, no `node:*`.
 */

// C0 controls (ESC, BEL, CR, LF, TAB…), DEL and C1 controls (U+009B is a one-character CSI): what a terminal acts
// on. Then what forges text visually: the Arabic letter mark, the Mongolian vowel separator, zero-width spaces and
// joiners, left-to-right / right-to-left marks, line and paragraph separators, bidi embeddings, overrides and
// isolates, invisible operators, the byte-order mark and interlinear annotation marks.
const UNSAFE =
  '\\x00-\\x1f\\x7f-\\x9f\\u061c\\u180e\\u200b-\\u200f\\u2028-\\u202e\\u2060-\\u2064\\u2066-\\u206f\\ufeff\\ufff9-\\ufffb';
const UNSAFE_ALL = new RegExp(`[${UNSAFE}]`, 'g');
const UNSAFE_BUT_NEWLINE = new RegExp(`[${UNSAFE.replace('\\x00-\\x1f', '\\x00-\\x09\\x0b-\\x1f')}]`, 'g');

/** `\x1b` for a code point below 256, `\u202e` above. */
function escapeChar(ch: string): string {
  const code = ch.charCodeAt(0);
  return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/**
 * Text that reaches a terminal as text: control characters (C0, DEL, C1, so every ESC / CSI / OSC sequence),
 * bidi controls and zero-width characters are shown escaped (`\x1b`, `\x0a`, `\u202e`). With `keepNewlines`,
 * `\n` stays a line break (for whole outputs whose lines the CLI built; fields are escaped on their own first).
 * @example terminalSafe('a\x1b]0;title\x07b') // 'a\\x1b]0;title\\x07b'
 */
export function terminalSafe(text: string, options: { keepNewlines?: boolean } = {}): string {
  return text.replace(options.keepNewlines ? UNSAFE_BUT_NEWLINE : UNSAFE_ALL, escapeChar);
}
