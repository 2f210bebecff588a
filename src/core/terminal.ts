/**
 * The one escaping of characters a terminal would act on or hide: every human-readable output of the CLI goes
 * through it (docs/deals.md, "The CLI"), and so do the parts' own text renderings (a deals plan); `--json` on a
 * terminal escapes the same characters the JSON way ({@link jsonTerminalSafe}). Pure: no DOM, no `node:*`.
 */

// Every control (Cc: C0, DEL, C1, so every ESC / CSI / OSC sequence), every format character (Cf: bidi marks,
// embeddings, overrides and isolates, zero-width spaces and joiners, the soft hyphen, the byte-order mark, TAG
// characters, interlinear annotation marks), every default-ignorable code point (variation selectors, the combining
// grapheme joiner, Hangul fillers: characters a terminal draws as nothing, so a whole sentence can hide in them),
// the line and paragraph separators, and lone surrogates (no character at all).
const UNSAFE = '\\p{Cc}\\p{Cf}\\p{Default_Ignorable_Code_Point}\\p{Zl}\\p{Zp}\\p{Cs}';
const UNSAFE_ALL = new RegExp(`[${UNSAFE}]`, 'gu');
const UNSAFE_BUT_NEWLINE = new RegExp(`(?!\\n)[${UNSAFE}]`, 'gu');
// In JSON text, C0 controls are already escaped inside strings and a line break outside them is layout.
const UNSAFE_IN_JSON = new RegExp(`(?![\\x00-\\x1f])[${UNSAFE}]`, 'gu');

const hex = (code: number, width: number) => code.toString(16).padStart(width, '0');

/** `\x1b` for a code point below 256, `\u202e` up to U+FFFF, `\u{e0041}` above. */
function escapeChar(ch: string): string {
  const code = ch.codePointAt(0)!;
  return code < 0x100 ? `\\x${hex(code, 2)}` : code < 0x10000 ? `\\u${hex(code, 4)}` : `\\u{${hex(code, 1)}}`;
}

/** The JSON escape of a character: `\u202e`, or the surrogate pair `\udb40\udc41` above U+FFFF. */
function jsonEscape(ch: string): string {
  let out = '';
  for (let i = 0; i < ch.length; i++) out += `\\u${hex(ch.charCodeAt(i), 4)}`;
  return out;
}

/**
 * Text that reaches a terminal as text: controls (C0, DEL, C1, so every ESC / CSI / OSC sequence), format
 * characters, default-ignorable code points, line and paragraph separators and lone surrogates are shown escaped
 * (`\x1b`, `\x0a`, `\u202e`, `\u{e0041}`). With `keepNewlines`, `\n` stays a line break (for whole outputs whose
 * lines the CLI built; fields are escaped on their own first).
 * @example terminalSafe('a\x1b]0;title\x07b') // 'a\\x1b]0;title\\x07b'
 */
export function terminalSafe(text: string, options: { keepNewlines?: boolean } = {}): string {
  return text.replace(options.keepNewlines ? UNSAFE_BUT_NEWLINE : UNSAFE_ALL, escapeChar);
}

/**
 * JSON text (as `JSON.stringify` writes it) for a terminal: the characters {@link terminalSafe} escapes are written
 * as `\u` escapes, which JSON reads back as the same characters, so the text is still valid JSON of the same value.
 * `JSON.stringify` already escapes C0 controls inside strings; its line breaks outside them are kept.
 * @example jsonTerminalSafe(JSON.stringify({ name: 'a\u202eb' })) // '{"name":"a\\u202eb"}'
 */
export function jsonTerminalSafe(json: string): string {
  return json.replace(UNSAFE_IN_JSON, jsonEscape);
}
