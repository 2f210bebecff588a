// fast-check arbitraries of hostile input for the fuzz suite: bit-level consent strings, random and structured
// bytes, huge and deep JSON, odd encodings, huge headers and cookies. Every value is plain JSON (strings, numbers,
// objects), so a failing case can be saved to test/fuzz/corpus and replayed as it was.
import fc from 'fast-check';
import { GppModel } from '@iabgpp/cmpapi';
import { gppHeader, tcString, tcWith } from './bits.js';
import type { GppIdEntry, IdRange, Restriction, TcFields, VendorSection } from './bits.js';
import { invisibleChunk, wideDeepExtBody } from './shapes.js';

/**
 * A request as the entry points receive it; `body` is text, bytes (`{ base64 }`) or an already parsed object
 * (`{ json }`).
 */
export interface RequestInput {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string | { base64: string } | { json: unknown };
  /** Size of the chunks a streamed body arrives in (parseIncomingMessage, parseAdCallRequest). */
  chunk?: number;
}

/** Longest GET URL the tag sends: the acceptance budget is stated for URLs up to it. */
export const MAX_GET_URL = 8_000;
/** Longest consent string the parser keeps (`maxTextLength`): longer ones never reach a decoder. */
const MAX_CONSENT = 4_096;

const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const anyUnit = fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c));

/** Characters that break things: controls and escape sequences, lone surrogates, BOM, NUL, bidi, URL syntax. */
export const oddChunk = fc.constantFrom(
  ...['\x00', '\x07', '\x08', '\x1b', '\x1b[31m', '\x1b]0;owned\x07', '\x1b]8;;https://evil.example\x07x\x1b]8;;\x07'],
  ...['\x7f', '\x85', '\x9b', '\x9b2J', '\u2028', '\u202e', '\r\n', '\n', '\r', '\t', '\uD800', '\uDFFF'],
  ...['\uDBFF\uDFFF', '\uFEFF', '\uFFFF', '\uFFFD', 'é', '😀', '%', '+', '&', '=', '#', '?', '/', '\\', '..', '"'],
  ...["'", ';', ',', ' '],
  ...['__proto__', 'constructor'],
);

/** Percent-escapes that URL parsers and decodeURIComponent choke on: broken, overlong UTF-8, surrogates, NUL, BOM. */
export const badEscape = fc.constantFrom(
  ...['%', '%2', '%G0', '%zz', '%%41', '%u0041', '%00', '%0A', '%0D', '%1B', '%7F', '%C0%AF', '%C0%80', '%E0%80%AF'],
  ...['%F0%80%80%AF', '%ED%A0%80', '%ED%BF%BF', '%EF%BB%BF', '%FF', '%FE', '%C3', '%C3%28', '%E2%82', '%F4%90%80%80'],
  ...['%25', '%2B', '%26', '%3D', '%23', '%2e%2e', '%2F', '%5C'],
);

/** Any text: random UTF-16 units (lone surrogates included), odd chunks, or one chunk repeated to 20,000 characters. */
export const hostileText = fc.oneof(
  fc.string({ unit: anyUnit, maxLength: 40 }),
  fc
    .array(fc.oneof(oddChunk, badEscape, invisibleChunk, fc.string({ maxLength: 6 })), { maxLength: 16 })
    .map((a) => a.join('')),
  fc
    .tuple(fc.oneof(oddChunk, fc.constantFrom('a', 'A1', '%41')), fc.integer({ min: 100, max: 20_000 }))
    .map(([c, n]) => c.repeat(Math.ceil(n / c.length))),
);

/** Short hostile text (no long repeats), for the many fields of wide arrays. */
export const shortText = fc.oneof(
  fc.string({ unit: anyUnit, maxLength: 24 }),
  fc.array(fc.oneof(oddChunk, badEscape), { maxLength: 6 }).map((a) => a.join('')),
);

/** encodeURIComponent for any text (lone surrogates, which it refuses, become U+FFFD). */
export const encode = (s: string) => encodeURIComponent(s.replace(/[\uD800-\uDFFF]/g, '\uFFFD'));

/** Text as it can appear in a query value: percent-encoded, raw, or broken escapes. */
const queryText = fc.oneof(
  hostileText.map(encode),
  hostileText,
  fc.array(fc.oneof(badEscape, fc.string({ maxLength: 4 })), { maxLength: 30 }).map((a) => a.join('')),
);

// --- Consent strings, bit by bit ---------------------------------------------------------------------------

const vendorId = fc.oneof(fc.integer({ min: 0, max: 65_535 }), fc.constantFrom(0, 1, 2, 45, 755, 65_534, 65_535));
const fullRange = (): IdRange => ({ start: 1, end: 65_535 });
const idRange: fc.Arbitrary<IdRange> = fc.oneof(
  vendorId.map((start) => ({ start })),
  fc.tuple(vendorId, vendorId).map(([start, end]) => ({ start, end })),
  fc.constant(fullRange()),
);
/** Up to 700 ranges: ~3,900 characters, the most a consent string within the parser's caps can carry. */
const rangeList = fc.oneof(
  fc.array(idRange, { maxLength: 8 }),
  fc.array(idRange, { minLength: 100, maxLength: 700 }),
  fc.integer({ min: 1, max: 700 }).map((n) => Array.from({ length: n }, fullRange)),
);
const bits = (n: number) => fc.array(fc.boolean(), { minLength: n, maxLength: n });
const vendorSection: fc.Arbitrary<VendorSection> = fc.oneof(
  fc.record({ maxId: vendorId, ranges: rangeList }),
  fc.integer({ min: 0, max: 2_000 }).chain((maxId) => fc.record({ maxId: fc.constant(maxId), bits: bits(maxId) })),
  // A bit field shorter than the max id it claims.
  fc.record({ maxId: vendorId, bits: fc.array(fc.boolean(), { maxLength: 64 }) }),
);
const restriction: fc.Arbitrary<Restriction> = fc.record({
  purpose: fc.integer({ min: 0, max: 63 }),
  type: fc.integer({ min: 0, max: 3 }),
  ranges: fc.oneof(fc.array(idRange, { maxLength: 4 }), rangeList),
});
const base64urlText = (max: number) => fc.string({ unit: fc.constantFrom(...B64URL), maxLength: max });

/** The fields of a TC string, any value each field can hold: max vendor ids, thousands of ranges, restrictions. */
export const tcFields: fc.Arbitrary<TcFields> = fc.record({
  version: fc.oneof(fc.constant(2), fc.integer({ min: 0, max: 63 })),
  created: fc.oneof(fc.constant(17_000_000_000), fc.integer({ min: 0, max: 2 ** 36 - 1 })),
  cmpId: fc.integer({ min: 0, max: 4095 }),
  cmpVersion: fc.integer({ min: 0, max: 4095 }),
  vendorListVersion: fc.integer({ min: 0, max: 4095 }),
  policyVersion: fc.integer({ min: 0, max: 63 }),
  serviceSpecific: fc.boolean(),
  specialFeatures: bits(12),
  purposeConsents: bits(24),
  purposeLI: bits(24),
  vendorConsents: vendorSection,
  vendorLI: vendorSection,
  restrictions: fc.oneof(
    fc.array(restriction, { maxLength: 3 }),
    fc.array(restriction, { minLength: 20, maxLength: 200 }),
  ),
  segments: fc.array(base64urlText(40), { maxLength: 3 }),
});

const tcSuffix = fc.constantFrom('=', '==', '.', '..', '+', '/', ' ', '%3D');

/** TC strings: built field by field, valid heads with random tails, or random Base64url; within the parser's cap. */
export const tcStringArb: fc.Arbitrary<string> = fc
  .oneof(
    { weight: 4, arbitrary: tcFields.map(tcString) },
    { weight: 1, arbitrary: fc.tuple(tcFields, base64urlText(200)).map(([f, t]) => tcString(f).slice(0, 20) + t) },
    { weight: 1, arbitrary: base64urlText(300) },
    { weight: 1, arbitrary: fc.tuple(tcFields.map(tcString), tcSuffix).map(([t, s]) => t + s) },
  )
  .map((s) => s.slice(0, MAX_CONSENT));

// Valid US sections, encoded once by the IAB library: an opt-out, and one without.
const usnat = [1, 2].map((saleOptOut) => {
  const model = new GppModel();
  model.setFieldValue('usnat', 'SaleOptOut', saleOptOut);
  return model.encode().split('~')[1];
});

const fibValue = fc.oneof(
  fc.integer({ min: 1, max: 12 }),
  fc.integer({ min: 1, max: 1_000_000_000 }),
  fc.constantFrom(2 ** 31, 10 ** 12),
);
const gppEntry: fc.Arbitrary<GppIdEntry> = fc.oneof(
  fibValue.map((offset) => ({ offset })),
  fc.tuple(fibValue, fibValue).map(([offset, span]) => ({ offset, span })),
);
const gppSection = fc.oneof(tcFields.map(tcString), fc.constantFrom(...usnat, 'BVVVVVVVVWA.QA', ''), base64urlText(60));

/** GPP strings: a bit-level header (huge Fibonacci ranges, thousands of entries, a wrong count) and any sections. */
export const gppStringArb: fc.Arbitrary<string> = fc
  .tuple(
    fc.oneof(fc.array(gppEntry, { maxLength: 6 }), fc.array(gppEntry, { minLength: 50, maxLength: 400 })),
    fc.option(fc.integer({ min: 0, max: 4095 }), { nil: undefined }),
    fc.array(gppSection, { maxLength: 6 }),
  )
  .map(([entries, count, sections]) => [gppHeader(entries, count ?? entries.length), ...sections].join('~'))
  .map((s) => s.slice(0, MAX_CONSENT));

/** The known bombs of each format: a GPP header range to 10^9 (and 10^7), TC strings of 65,535-wide ranges. */
export const KNOWN_BOMBS = {
  gppSectionRange: 'DBAB4oogqhIW~BAAAAAAA',
  gppRangeTo1e7: gppHeader([{ offset: 1, span: 10_000_000 }]) + '~BAAAAAAA',
  tcVendorRanges: tcWith({
    vendorConsents: { maxId: 65_535, ranges: Array.from({ length: 700 }, fullRange) },
    vendorLI: { maxId: 65_535, ranges: Array.from({ length: 10 }, fullRange) },
  }),
  tcRestrictions: tcWith({
    vendorConsents: { maxId: 65_535, ranges: [fullRange()] },
    restrictions: Array.from({ length: 120 }, (_, i) => ({
      purpose: 1 + (i % 24),
      type: i % 3,
      ranges: [fullRange(), { start: 65_535, end: 1 }],
    })),
  }),
};

/** A TC string of some 60 characters that blocked the event loop for seconds: one 65,535-wide range per section. */
export const SHORT_TC_BOMB = tcWith({
  vendorConsents: { maxId: 65_535, ranges: [fullRange()] },
  vendorLI: { maxId: 65_535, ranges: [fullRange()] },
  restrictions: [{ purpose: 2, type: 1, ranges: [fullRange()] }],
});

/** Privacy signals as an ad call carries them (GET names). */
export const consentParams = fc.record(
  {
    gdpr: fc.constantFrom('0', '1', '', 'true', '2'),
    gdpr_consent: fc.oneof(
      tcStringArb,
      fc.constantFrom(KNOWN_BOMBS.tcVendorRanges, KNOWN_BOMBS.tcRestrictions, SHORT_TC_BOMB),
    ),
    gpp: fc.oneof(gppStringArb, fc.constantFrom(KNOWN_BOMBS.gppSectionRange, KNOWN_BOMBS.gppRangeTo1e7)),
    gpp_sid: fc.oneof(
      fc.constantFrom('2', '7', '2,7', '6,7,8', ''),
      fc.array(fc.integer({ min: 0, max: 99_999 }), { maxLength: 80 }).map((a) => a.join(',')),
    ),
    us_privacy: fc.constantFrom('1YYN', '1YNN', '1---', 'Y', '', '1yyn'),
  },
  { requiredKeys: [] },
);

// --- Eids and JSON --------------------------------------------------------------------------------------------

const bigNumber = fc.constantFrom(
  ...[1e21, 1e308, -1, 0, -0, 0.5, 2 ** 31, 2 ** 31 - 1, 2 ** 53, 2 ** 53 + 2, 571_187, 1, 3, 500],
  ...[Number.MAX_VALUE, Number.MIN_VALUE],
);
const anyJsonValue: fc.Arbitrary<unknown> = fc.oneof(
  bigNumber,
  shortText,
  fc.boolean(),
  fc.constant(null),
  fc.string({ maxLength: 4 }),
);
const source = fc.constantFrom(
  ...['id5-sync.com', 'uidapi.com', 'pubcid.org', 'liveramp.com', 'criteo.com', 'ID5-SYNC.COM', ' id5-sync.com ', ''],
);
const objectKey = fc.oneof(
  fc.string({ maxLength: 6 }),
  fc.constantFrom('__proto__', 'constructor', 'toJSON', 'prototype'),
);
const objectOf = (keys: number) => fc.dictionary(objectKey, anyJsonValue, { maxKeys: keys });
const optional = { requiredKeys: [] as [] };

const uidOf = (text: fc.Arbitrary<string>) =>
  fc.record(
    {
      id: fc.oneof(
        { weight: 4, arbitrary: shortText },
        { weight: 1, arbitrary: text },
        { weight: 1, arbitrary: fc.constant('abc') },
      ),
      atype: fc.oneof(bigNumber, shortText),
      ext: objectOf(4),
    },
    { requiredKeys: ['id'] },
  );
const eidOf = (text: fc.Arbitrary<string>, maxUids: number) =>
  fc.record(
    {
      source: fc.oneof(source, text),
      uids: fc.oneof(fc.array(uidOf(text), { maxLength: maxUids }), anyJsonValue),
      inserter: fc.oneof(fc.constantFrom('pub.example', 'ssp.example'), text),
      matcher: fc.oneof(fc.constantFrom('id5-sync.com'), text),
      mm: fc.oneof(bigNumber, fc.integer({ min: 0, max: 5 }), text),
      ext: objectOf(6),
      extra: anyJsonValue,
    },
    { requiredKeys: ['source'] },
  );
/** One eid-shaped value with hostile fields. */
export const hostileEid = eidOf(hostileText, 20);
/** A few hostile eids, more than the cap of short ones, or not an array at all. */
export const hostileEids = fc.oneof(
  fc.array(hostileEid, { maxLength: 6 }),
  fc.array(eidOf(shortText, 3), { minLength: 60, maxLength: 120 }),
  anyJsonValue,
);

const sized = (min: number, max: number, text: (n: number) => string) => fc.integer({ min, max }).map(text);
const list = (n: number, item: (i: number) => string) => Array.from({ length: n }, (_, i) => item(i)).join(',');
const nested = (n: number, open: string, inner: string, close: string) => open.repeat(n) + inner + close.repeat(n);

/** JSON bombs written as text (JSON.stringify cannot write 10^5 levels): deep nesting, wide arrays, long strings. */
export const jsonBombText: fc.Arbitrary<string> = fc.oneof(
  sized(1_000, 100_000, (n) => nested(n, '[', '', ']')),
  sized(
    1_000,
    60_000,
    (n) => `{"eids":[{"source":"id5-sync.com","uids":[{"id":"x","ext":${nested(n, '{"a":', '1', '}')}}]}]}`,
  ),
  sized(
    1_000,
    60_000,
    (n) => `{"networkId":1,"eids":[{"source":"a.com","uids":[{"id":"x"}],"ext":${nested(n, '[', '', ']')}}]}`,
  ),
  sized(100, 6_000, (n) => `{"eids":[${list(n, (i) => `{"source":"s${i}.com","uids":[{"id":"u${i}","atype":1}]}`)}]}`),
  sized(100, 20_000, (n) => `{"eids":[{"source":"id5-sync.com","uids":[${list(n, (i) => `{"id":"${i}"}`)}]}]}`),
  sized(
    1_000,
    250_000,
    (n) =>
      `{"eids":[{"source":"id5-sync.com","inserter":"${'x'.repeat(n)}","mm":1e21,"uids":[{"id":"1","atype":1e308}]}]}`,
  ),
  sized(100, 10_000, (n) => `{"networkId":1,"formats":[${list(n, () => '{"id":1,"tagId":"t"}')}]}`),
  sized(100, 5_000, (n) => `{"id":"r","imp":[${list(n, () => '{"id":"1","banner":{"format":[{"w":300,"h":250}]}}')}]}`),
  sized(100, 5_000, (n) => `{"units":[${list(n, () => '{"code":"a","bidId":"b","formatId":1,"sizes":[[300,250]]}')}]}`),
  sized(100, 20_000, (n) => `{"issues":1,${list(n, (i) => `"k${i}":${i}`)}}`),
  sized(
    100,
    30_000,
    (n) => `{"networkId":1,"gdprConsent":"${'A'.repeat(n)}","gpp":"${'D'.repeat(n)}","uid":"${'u'.repeat(n)}"}`,
  ),
);

const text = fc.oneof(shortText, hostileText);
const eidkitBody = fc.record(
  {
    networkId: fc.oneof(bigNumber, fc.constant(1234), hostileText),
    siteId: fc.oneof(bigNumber, hostileText),
    pageId: fc.oneof(hostileText, bigNumber),
    formatId: fc.oneof(bigNumber, hostileText),
    formats: fc.oneof(
      fc.array(fc.record({ id: fc.oneof(bigNumber, shortText), tagId: shortText }), { maxLength: 40 }),
      anyJsonValue,
    ),
    target: hostileText,
    timestamp: fc.oneof(bigNumber, hostileText),
    uid: hostileText,
    gdpr: fc.oneof(fc.constantFrom(0, 1, '1', true), anyJsonValue),
    gdprConsent: fc.oneof(tcStringArb, anyJsonValue),
    gpp: fc.oneof(gppStringArb, anyJsonValue),
    gppSid: fc.oneof(fc.array(fc.integer({ min: -5, max: 99_999 }), { maxLength: 70 }), anyJsonValue),
    usPrivacy: fc.oneof(fc.constantFrom('1YYN', '1YNN'), hostileText),
    addtl_consent: hostileText,
    page: hostileText,
    eids: fc.oneof(hostileEids, hostileText),
  },
  optional,
);
const prebidUnit = fc.record(
  { code: shortText, bidId: shortText, formatId: fc.oneof(bigNumber, shortText), sizes: anyJsonValue, gpid: text },
  optional,
);
const prebidBody = fc.record(
  {
    units: fc.oneof(fc.array(prebidUnit, { maxLength: 40 }), anyJsonValue),
    eids: hostileEids,
    gdprConsent: tcStringArb,
  },
  optional,
);
const ortbImp = fc.record(
  {
    id: shortText,
    tagid: text,
    bidfloor: bigNumber,
    bidfloorcur: shortText,
    banner: objectOf(3),
    video: objectOf(5),
    ext: objectOf(4),
  },
  optional,
);
const ortbBody = fc.record(
  {
    id: hostileText,
    imp: fc.oneof(fc.array(ortbImp, { maxLength: 40 }), anyJsonValue),
    site: objectOf(4),
    device: fc.record({ ua: hostileText, ip: hostileText }, optional),
    user: fc.record(
      { eids: hostileEids, ext: fc.record({ eids: hostileEids, consent: tcStringArb }, optional), buyeruid: text },
      optional,
    ),
    regs: fc.record(
      { gdpr: anyJsonValue, gpp: gppStringArb, gpp_sid: anyJsonValue, us_privacy: hostileText, ext: objectOf(3) },
      optional,
    ),
  },
  optional,
);
/** A POST body object with hostile fields, of the eidkit, Prebid adapter or OpenRTB shape. */
const postObject: fc.Arbitrary<Record<string, unknown>> = fc.oneof(eidkitBody, prebidBody, ortbBody);

/** Base64 of a text, in any variant: standard or URL-safe, padded or not, over-padded, spaces, an escaped `=`. */
const base64Variant = (value: string) =>
  fc.constantFrom('std', 'url', 'pad', 'overpad', 'space', 'escaped', 'cut', 'junk').map((v) => {
    const std = Buffer.from(value).toString('base64');
    const url = std.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
    const variants: Record<string, string> = {
      std,
      url,
      pad: url + '='.repeat((4 - (url.length % 4)) % 4),
      overpad: std + '===',
      space: std.replace(/\+/g, ' '),
      escaped: std.replace(/=/g, '%3D'),
      cut: std.slice(0, -3),
      junk: `${std.slice(0, 8)}!*${std.slice(8)}`,
    };
    return variants[v];
  });

/** The `eids` parameter: Base64 (any variant) of hostile eids, of a JSON bomb, of random bytes, or not Base64. */
const eidsParam = fc.oneof(
  hostileEids.chain((e) => base64Variant(JSON.stringify(e) ?? 'null')),
  jsonBombText.filter((t) => t.length < 6_000).chain(base64Variant),
  fc.uint8Array({ maxLength: 400 }).map((b) => Buffer.from(b).toString('base64')),
  queryText,
);

const queryKey = fc.oneof(
  fc.constantFrom(
    ...['nwid', 'siteid', 'pgid', 'fmtid', 'tgt', 'tmstp', 'uid', 'eids', 'gdpr', 'gdpr_consent', 'gpp', 'gpp_sid'],
    'us_privacy',
  ),
  fc.constantFrom('NWID', '%6Ewid', 'e%69ds', 'eids%00', '', '__proto__', 'constructor', 'hasOwnProperty'),
  queryText,
);
const queryPair = fc
  .tuple(queryKey, fc.oneof(queryText, bigNumber.map(String), fc.constantFrom('1', '1234')))
  .map(([k, v]) => `${k}=${v}`);

const oddPath = fc.constantFrom(
  ...['/AC', '/ac/', '/x/../ac', '/a/b/c/ac', 'https://ads.example/ac', 'http://u:p@[::1]:8080/ac', '/%2e%2e/ac'],
  '/ac;x',
  ...['/prebid/v1', '/ac#frag', '//evil.example/ac', 'ac', '', '/', 'http://[::1', '/\\ac', '/./ac/.', '/ac%00'],
);
const getPath = fc.oneof(
  { weight: 6, arbitrary: fc.constant('/ac') },
  { weight: 3, arbitrary: oddPath },
  { weight: 1, arbitrary: hostileText.map((s) => `/${s}/ac`) },
);

/** A cookie header: many cookies, `pid` repeated or quoted or odd, huge values. */
const cookieHeader = fc.oneof(
  fc.constantFrom(...['pid=abc123', 'pid="quoted"', 'pid=', 'pid', 'pid=a;pid=b', ' pid = spaced ', '=pid=x']),
  fc.constantFrom('pid=\x7f', 'pid=é'),
  fc.tuple(fc.integer({ min: 1, max: 2_000 }), hostileText).map(([n, v]) => `${'a=b; '.repeat(n)}pid=${v}`),
  fc.integer({ min: 1, max: 8_000 }).map((n) => `pid=${'x'.repeat(n)}`),
  fc.integer({ min: 1, max: 4_000 }).map((n) => ';='.repeat(n) + 'pid=p'),
);

/** An `X-Forwarded-For` chain: addresses with and without ports, garbage hops, long chains, one huge entry. */
const forwardedFor = fc.oneof(
  fc.constantFrom('203.0.113.9', '203.0.113.9, 10.0.0.1', '[2001:db8::7]:443, 192.0.2.9:80', 'unknown, 10.0.0.1'),
  fc
    .array(fc.oneof(fc.ipV4(), fc.ipV6(), fc.constantFrom('10.1.2.3', '::1', '127.0.0.1'), hostileText), {
      maxLength: 40,
    })
    .map((hops) => hops.join(', ')),
  fc.integer({ min: 1, max: 4_000 }).map((n) => '10.0.0.1,'.repeat(n)),
  fc.integer({ min: 1, max: 8_000 }).map((n) => 'x'.repeat(n)),
);

/** Header values an HTTP parser would let through: printable ASCII, obs-text (0x80-0xFF), tabs; no CR, LF or NUL. */
export const headerSafe = (s: string) => s.replace(/[^\t\x20-\x7e\x80-\xff]/g, '?');

/** A URL or text for the email detectors, and the server's mode of replacing what they find. */
export interface UrlInput {
  url: string;
  mode?: 'strip' | 'hash';
}

/** The pieces emails and near-emails are made of, in every encoding the detectors read. */
const emailChunk = fc.constantFrom(
  ...['@', '%40', '%2540', '%252540', '%25%34%30', '%u0040', '.', '%2E', '%2e', '%252E', 'a', 'Z', '9', '-', '_'],
  ...['+', ' ', '%20', '/', '?', '#', '&', '=', ';', '%2F', '%3F', '%26', '%3D', '%', '%25', '%2', 'a@', '@a', 'a.'],
  ...['@.', '.@', 'a@b', 'a@b.', 'jane.doe@example.com', 'JANE%40EXAMPLE.COM', 'https://', 'news.example'],
);

/**
 * Hostile URLs up to `max` characters for the email detectors: chunks of near-emails in every encoding mixed with
 * odd characters and broken escapes, one chunk or pair repeated to the cap (the runs a backtracking pattern would
 * retry from every position), and page URLs with a real email somewhere.
 */
export const hostileUrl = (max: number): fc.Arbitrary<UrlInput> =>
  fc
    .tuple(
      fc.oneof(
        fc.array(fc.oneof(emailChunk, emailChunk, oddChunk, badEscape), { maxLength: 64 }).map((a) => a.join('')),
        fc.tuple(fc.array(emailChunk, { minLength: 1, maxLength: 3 }), fc.integer({ min: 100, max })).map(([c, n]) =>
          c
            .join('')
            .repeat(Math.ceil(n / c.join('').length))
            .slice(0, max),
        ),
        fc
          .tuple(
            fc.constantFrom('https://news.example', 'http://user:jane%40example.com@news.example', ''),
            fc.array(emailChunk, { maxLength: 12 }),
            fc.array(emailChunk, { maxLength: 12 }),
          )
          .map(([origin, path, query]) => `${origin}/${path.join('')}?${query.join('')}#${path.join('')}`),
      ),
      fc.constantFrom('strip' as const, 'hash' as const),
    )
    .map(([url, mode]) => ({ url: url.slice(0, max), mode }));

/** Request headers: huge cookies, user agents and referers, a lying Content-Length. */
export const hostileHeaders = fc
  .record(
    {
      cookie: cookieHeader,
      'user-agent': fc.oneof(fc.constant('Mozilla/5.0'), hostileText),
      // A page URL with emails in every encoding: none may come out of the parse (checkCall).
      referer: fc.oneof(
        fc.constant('https://pub.example/page'),
        hostileText,
        hostileUrl(4_096).map((u) => u.url),
      ),
      'x-forwarded-for': forwardedFor,
      'content-type': fc.constantFrom('application/json', 'text/plain', 'application/json; charset=utf-16', ''),
      'content-length': fc.constantFrom('0', '1', '-1', '99999999999', 'abc', '1e3', '262144'),
    },
    optional,
  )
  .map((h) => Object.fromEntries(Object.entries(h).map(([k, v]) => [k, headerSafe(v)])) as Record<string, string>);

/** A query string of hostile parameters and consent signals, cut at `max` characters. */
export const hostileQuery = (max: number) =>
  fc
    .tuple(
      fc.array(queryPair, { maxLength: 12 }),
      consentParams.map((c) => Object.entries(c).map(([k, v]) => `${k}=${encodeURIComponent(v)}`)),
      fc.option(eidsParam, { nil: undefined }),
      fc.option(fc.tuple(fc.integer({ min: 1, max: 2_000 }), badEscape), { nil: undefined }),
      fc.option(fc.integer({ min: 1, max: 1_500 }), { nil: undefined }),
    )
    .map(([pairs, consent, eids, escapes, repeats]) => {
      const parts = [...pairs, ...consent];
      if (eids !== undefined) parts.push(`eids=${eids}`);
      if (escapes) parts.push(...Array<string>(escapes[0]).fill(`gpp=${escapes[1]}`));
      if (repeats) parts.push(...Array<string>(repeats).fill('eids=%'));
      return parts.join('&').slice(0, max);
    });

/** A GET ad call up to `maxUrl` characters (default {@link MAX_GET_URL}): odd paths, hostile query and headers. */
export const hostileGet = (maxUrl = MAX_GET_URL): fc.Arbitrary<RequestInput> =>
  fc
    .tuple(getPath, hostileQuery(maxUrl), fc.option(hostileHeaders, { nil: undefined }))
    .map(([path, query, headers]) => {
      const url = `${path}?${query}`.slice(0, maxUrl);
      return headers ? { url, method: 'GET', headers } : { url, method: 'GET' };
    });

const postPath = fc.constantFrom(
  ...['/genericpost', '/call', '/prebid/v1', '/x/call', '/ac', '/unknown', 'https://ads.example/genericpost'],
);
const base64Of = (bytes: Uint8Array | string) => ({ base64: Buffer.from(bytes).toString('base64') });

/** A POST ad call: hostile objects (as JSON text, bytes or an already parsed object), JSON bombs, random bytes. */
export const hostilePost: fc.Arbitrary<RequestInput> = fc
  .tuple(
    postPath,
    fc.oneof(
      { weight: 4, arbitrary: postObject.map((o) => JSON.stringify(o)) },
      { weight: 1, arbitrary: postObject.map((o) => ({ json: o })) },
      { weight: 3, arbitrary: jsonBombText },
      { weight: 1, arbitrary: wideDeepExtBody.map((b) => b.body) },
      { weight: 1, arbitrary: postObject.map((o) => base64Of('\uFEFF' + JSON.stringify(o))) },
      { weight: 1, arbitrary: fc.uint8Array({ maxLength: 2_000 }).map(base64Of) },
      { weight: 1, arbitrary: hostileText },
      { weight: 1, arbitrary: sized(262_000, 300_000, (n) => `{"eids":"${'A'.repeat(n)}"}`) },
    ),
    fc.option(hostileHeaders, { nil: undefined }),
    // Chunks from one TCP segment (~1.4 KB) up: smaller ones take a packet each from the sender. (Each chunk costs
    // microseconds through parseAdCallRequest's WHATWG stream: a body in 2-byte chunks costs ~10 ms per KB.)
    fc.integer({ min: 1_024, max: 70_000 }),
  )
  .map(([url, body, headers, chunk]) => {
    const h = { ...(headers ?? {}) };
    // A lying Content-Length is kept only when it says less than the body (Node would refuse the other case).
    if (h['content-length'] !== undefined && !(Number(h['content-length']) < 100)) delete h['content-length'];
    return { url, method: 'POST', headers: h, body, chunk };
  });

/** Any ad call: GET or POST. */
export const hostileAdCall: fc.Arbitrary<RequestInput> = fc.oneof(hostileGet(), hostilePost);

const TWO_EIDS = Buffer.from(
  JSON.stringify([
    { source: 'id5-sync.com', uids: [{ id: 'a' }] },
    { source: 'pubcid.org', uids: [{ id: 'b' }] },
  ]),
).toString('base64');

/** A GET ad call with two eids and nothing hostile but its consent signals (bit-level TC and GPP strings, bombs). */
export const consentGet: fc.Arbitrary<RequestInput> = consentParams.map((c) => {
  const consent = Object.entries(c).map(([k, v]) => `${k}=${encodeURIComponent(v)}`);
  return { url: `/ac?nwid=1&eids=${TWO_EIDS}&${consent.join('&')}`.slice(0, MAX_GET_URL), method: 'GET' };
});

/** The same signals in a POST body, GDPR said to apply. */
export const consentPost: fc.Arbitrary<RequestInput> = consentParams.map((c) => ({
  url: '/genericpost',
  method: 'POST',
  body: JSON.stringify({
    networkId: 1,
    eids: [{ source: 'uidapi.com', uids: [{ id: 'x' }] }],
    gdpr: 1,
    gdprConsent: c.gdpr_consent,
    gpp: c.gpp,
    gppSid: c.gpp_sid?.split(',').map(Number),
    usPrivacy: c.us_privacy,
  }),
}));
