// The shapes of hostile input that cost more than their size says, as arbitraries: an ext within the depth cap but
// far over the length cap (walked several times before it was dropped), strings cut from a long request (kept
// alive whole by V8's sliced strings), network ids V8 hashes alike, user keys of 2 KB, and characters a terminal
// draws as nothing. test/fuzz/shapes.fuzz.test.ts runs a property per shape; acceptance-shapes.test.ts measures
// the budgets at their worst.
import fc from 'fast-check';
import type { AdCall } from '../../src/adserver/index.js';

/** The largest POST body the parser reads (DEFAULT_LIMITS.maxBodyBytes), less room for the body around the ext. */
const BODY_ROOM = 262_144 - 2_000;

/** One item of a wide ext, as JSON text. */
const WIDE_ITEMS = {
  'flat-object': (i: number) => `"k${i}":"vvvvvvvvvv"`,
  objects: (i: number) => `{"k${i}":"vvvvvvvvvv"}`,
  strings: (i: number) => `"v${i}vvvvvvv"`,
  numbers: (i: number) => String(i * 7.5),
  arrays: () => '[[],[1],{}]',
} as const;

/** An ext of `depth` levels whose innermost level holds `width` items, as JSON text (at most BODY_ROOM). */
function wideDeepExt(depth: number, width: number, kind: keyof typeof WIDE_ITEMS): string {
  const item = WIDE_ITEMS[kind];
  const size = item(width).length + 1;
  const n = Math.max(1, Math.min(width, Math.floor((BODY_ROOM - 6 * depth) / size)));
  const items = Array.from({ length: n }, (_, i) => item(i)).join(',');
  const wide = kind === 'flat-object' ? `{${items}}` : `{"w":[${items}]}`;
  return '{"a":'.repeat(Math.max(0, depth - 1)) + wide + '}'.repeat(Math.max(0, depth - 1));
}

/**
 * The worst of the wide-and-deep exts, each in a 256 KB body: 9,000-odd small objects at the depth cap in an eid's
 * ext and in a uid's, a flat object of 12,000 keys, and an array of numbers (they cost 3–10× a bare
 * JSON.parse before the ext was measured in one walk that stops at the cap). With `unread`, the same bodies with
 * the ext in a field the parser does not read: their floor, JSON.parse alone.
 */
export function wideDeepBombs(unread = false): string[] {
  const eids = (ext: string, inUid: boolean) =>
    unread
      ? `{"x":${ext},"eids":[{"source":"id5-sync.com","uids":[{"id":"x"}]}]}`
      : inUid
        ? `{"eids":[{"source":"id5-sync.com","uids":[{"id":"x","ext":${ext}}]}]}`
        : `{"eids":[{"source":"id5-sync.com","uids":[{"id":"x"}],"ext":${ext}}]}`;
  return [
    eids(wideDeepExt(16, 25_000, 'objects'), false),
    eids(wideDeepExt(16, 25_000, 'objects'), true),
    eids(wideDeepExt(1, 25_000, 'flat-object'), false),
    eids(wideDeepExt(15, 25_000, 'numbers'), true),
  ];
}

/**
 * A POST body (JSON text, up to 256 KB) whose eid or uid ext nests 1 to 20 levels (the cap is 16) and is wide far
 * past `maxExtLength` (4,096 characters of JSON), in every body shape that carries eids.
 */
export const wideDeepExtBody: fc.Arbitrary<{ url: string; method: 'POST'; body: string }> = fc
  .record({
    depth: fc.integer({ min: 1, max: 20 }),
    width: fc.integer({ min: 50, max: 25_000 }),
    kind: fc.constantFrom(...(Object.keys(WIDE_ITEMS) as (keyof typeof WIDE_ITEMS)[])),
    where: fc.constantFrom('eid', 'uid', 'ortb-2.6', 'ortb-2.5', 'prebid'),
  })
  .map(({ depth, width, kind, where }) => {
    const ext = wideDeepExt(depth, width, kind);
    const uid = where === 'uid' ? `{"id":"x","ext":${ext}}` : '{"id":"x"}';
    const eid = `{"source":"id5-sync.com","uids":[${uid},{"id":"y"}]${where === 'uid' ? '' : `,"ext":${ext}`}}`;
    const eids = `[${eid},{"source":"uidapi.com","uids":[{"id":"z"}]}]`;
    const bodies = {
      eid: ['/genericpost', `{"networkId":1,"eids":${eids}}`],
      uid: ['/genericpost', `{"networkId":1,"eids":${eids}}`],
      'ortb-2.6': ['/call', `{"id":"r","imp":[{"id":"1"}],"user":{"eids":${eids}}}`],
      'ortb-2.5': ['/call', `{"id":"r","imp":[{"id":"1"}],"user":{"ext":{"eids":${eids}}}}`],
      prebid: ['/prebid/v1', `{"networkId":1,"units":[{"formatId":1,"bidId":"b"}],"eids":${eids}}`],
    };
    const [url, body] = bodies[where];
    return { url, method: 'POST' as const, body };
  });

/** Distinct text of `length` characters (one to each index), as a request carries it: letters, digits, `-`. */
export const idOfLength = (i: number, length: number) => {
  const head = `${i.toString(36)}-`;
  return (head + 'x'.repeat(Math.max(0, length - head.length))).slice(0, Math.max(length, head.length));
};

/**
 * A batch of GET ad calls each with its own strings (consent, GPP, uid, page id, target, pid cookie) of 13 to
 * 400 characters, in URLs padded by 4–15 KB: what a server keeps of them must not keep the URL.
 */
export const slicedKeysBatch = fc.array(
  fc.record({
    pad: fc.integer({ min: 4_000, max: 15_000 }),
    lengths: fc.array(fc.integer({ min: 13, max: 400 }), { minLength: 6, maxLength: 6 }),
    pidInCookie: fc.boolean(),
  }),
  { minLength: 200, maxLength: 400 },
);

/** Characters a terminal draws as nothing or acts on, astral ones included (TAG characters, U+E0000–E007F). */
export const invisibleChunk = fc.constantFrom(
  ...['\u{E0041}', '\u{E0020}', '\u{E007F}', '\u{E0001}', '\u{E0100}', '\u{E01EF}', '\uFE0F', '\uFE00', '\u00AD'],
  ...['\u034F', '\u3164', '\u115F', '\u1160', '\uFFA0', '\u180E', '\u180B', '\u2060', '\u2064', '\u200B', '\u200D'],
  ...['\u061C', '\u17B4', '\u17B5', '\u{1D173}', '\u{1BCA0}', '\u0600', '\u06DD', '\u{110BD}', '\u{13430}'],
  ...['\u2028', '\u2029', '\u202E', '\u2066', '\u0085', '\u009B', '\x1b', '\x7f', '\uFEFF', '\uFFF9', '\uDB40'],
);

/** Any code point (lone surrogates included), as one string. */
const anyCodePoint = fc
  .integer({ min: 0, max: 0x10ffff })
  .map((c) => (c >= 0xd800 && c <= 0xdfff ? String.fromCharCode(c) : String.fromCodePoint(c)));

/** Text mixing invisible characters, any code point and plain words: a hidden sentence among visible ones. */
export const invisibleText = fc
  .array(fc.oneof({ weight: 3, arbitrary: invisibleChunk }, anyCodePoint, fc.constantFrom('pay ', 'now', '\n', 'é')), {
    maxLength: 40,
  })
  .map((parts) => parts.join(''));

/** A parsed ad call of a network and nothing else (the report counts it under that network). */
export const networkCall = (networkId: number): AdCall => ({
  endpoint: 'ac',
  networkId,
  formats: [],
  eids: [],
  consent: {},
  issues: [],
  pid: 'p',
});
