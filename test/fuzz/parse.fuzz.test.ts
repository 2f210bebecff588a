// Fuzz: hostile ad calls (odd encodings, huge headers and cookies, JSON bombs, random bytes) into the three parse
// entry points. Each case is timed; each keeps the caps of the parsed call and never throws.
import { afterAll, describe, test } from 'vitest';
import { hostileAdCall, hostileGet, hostilePost } from './arbitraries.js';
import { fuzz, worstSummary } from './harness.js';

afterAll(() => console.log(worstSummary()));

describe('the parse entry points never throw, keep every cap and stay within their CPU budget', () => {
  test(
    'parseAdCall on hostile GET calls (URLs up to 8,000 characters)',
    () => fuzz('parseAdCall', 'get', hostileGet(), 150),
    60_000,
  );
  test(
    "parseAdCall on hostile GET URLs far over the tag's 8,000 characters",
    () => fuzz('parseAdCall', 'get-huge', hostileGet(300_000), 15),
    60_000,
  );
  test(
    'parseAdCall on hostile POST bodies (text, bytes, parsed objects, JSON bombs)',
    () => fuzz('parseAdCall', 'post', hostilePost, 80),
    60_000,
  );
  test(
    'parseIncomingMessage on hostile requests, bodies streamed in any chunk size',
    () => fuzz('parseIncomingMessage', 'any', hostileAdCall, 80),
    60_000,
  );
  test(
    'parseAdCallRequest on hostile WHATWG requests',
    () => fuzz('parseAdCallRequest', 'any', hostileAdCall, 60),
    60_000,
  );
});
