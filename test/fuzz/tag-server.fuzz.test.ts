// Fuzz: the tag server's routes (`createTagApp`) on hostile paths (traversal, escapes, leading zeros, overlong ids)
// and headers (huge Accept-Encoding and If-None-Match lists, odd q-values): only 200, 304 or 404, never a crash, a
// 200 is the script of the network the path names, and each request's CPU is bounded.
import { afterAll, describe, test } from 'vitest';
import fc from 'fast-check';
import { badEscape, encode, headerSafe, hostileText } from './arbitraries.js';
import type { TagInput } from './entry-points.js';
import { fuzz, worstSummary } from './harness.js';

afterAll(() => console.log(worstSummary()));

// Mostly well-formed paths, so that the routes themselves are reached, with the odd ones beside them.
const network = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('4321', '2345', '04321', '0004321', '000000004321', '0', '00', 'default') },
  fc.constantFrom(...['DEFAULT', '1234567890123', '99999999999', '-1', '4321.0', '4321%00', '%34321', '']),
  fc.integer({ min: 0, max: 2 ** 40 }).map(String),
  hostileText.map(encode),
  badEscape,
);
const file = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('sas.js', 'sas.debug.js') },
  fc.constantFrom(...['SAS.JS', 'sas.js/', 'sas.js%00', 'sas.full.js', '..%2fpackage.json', '%2e%2e/sas.js']),
  fc.constantFrom('sas.js?x=1', 'sas.js#f', ''),
);
const prefix = fc.constantFrom('/tag', '/tag/', '//tag', '/TAG', '/tag/./', '/tag/../tag');
const segment = fc.oneof(hostileText.map(encode), badEscape, fc.constantFrom('..', '.', 'tag', '4321', 'sas.js'));
const path = fc.oneof(
  { weight: 4, arbitrary: fc.tuple(network, file).map(([n, f]) => `/tag/${n}/${f}`) },
  fc.tuple(prefix, network, file).map(([p, n, f]) => `${p}/${n}/${f}`),
  fc.array(segment, { maxLength: 8 }).map((s) => `/${s.join('/')}`),
  fc.integer({ min: 10, max: 20_000 }).map((n) => `/tag/${'1'.repeat(n)}/sas.js`),
);
const encodings = fc.oneof(
  fc.constantFrom(...['br', 'gzip', 'gzip, deflate, br', 'br;q=0, gzip;q=0', '*', '*;q=0', 'br;q=1e999', 'gzip;q=NaN']),
  fc.constantFrom('identity', 'br;q=0.5;q=1', ''),
  fc.integer({ min: 1, max: 4_000 }).map((n) => Array<string>(n).fill('x;q=0.1').join(', ') + ', br'),
  hostileText.map(headerSafe),
);
const etags = fc.oneof(
  fc.constantFrom('*', '"x"', 'W/"x"', '"x", W/"y"', ',,,', ''),
  fc.integer({ min: 1, max: 4_000 }).map((n) => Array<string>(n).fill('W/"abc"').join(',')),
  hostileText.map(headerSafe),
);
const request: fc.Arbitrary<TagInput> = fc
  .record({
    method: fc.constantFrom('GET', 'GET', 'HEAD', 'POST', 'OPTIONS', 'PUT'),
    path,
    enc: fc.option(encodings, { nil: undefined }),
    etag: fc.option(etags, { nil: undefined }),
  })
  .map(({ method, path, enc, etag }) => {
    const headers: Record<string, string> = {};
    if (enc !== undefined) headers['accept-encoding'] = enc;
    if (etag !== undefined) headers['if-none-match'] = etag;
    return { method, path, headers };
  });

describe('the tag server on hostile requests', () => {
  test(
    "answers 200, 304 or 404 only, a 200 being the named network's script, with bounded CPU",
    () => fuzz('tagServer', 'any', request, 200),
    60_000,
  );
});
