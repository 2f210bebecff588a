// Fuzz: the forwarding policy with consent enforced, on ad calls carrying bit-level TC and GPP strings (huge
// Fibonacci ranges, vendor 65,535, hundreds of ranges and restrictions): parse, then a bid request and an
// explanation per partner. Each case is timed; a bomb must cost what an ordinary string costs.
import { afterAll, describe, test } from 'vitest';
import fc from 'fast-check';
import { consentGet, consentPost, hostileAdCall, hostileGet } from './arbitraries.js';
import { fuzz, worstSummary } from './harness.js';

afterAll(() => console.log(worstSummary()));

describe('the forwarding policy decodes any consent signal in bounded time, never throwing', () => {
  test('bit-level TC and GPP strings on a GET call', () => fuzz('forwarding', 'consent', consentGet, 120), 60_000);
  test('the same signals in a POST body', () => fuzz('forwarding', 'consent-post', consentPost, 60), 60_000);
  test(
    'any hostile ad call through parse, the policy and buildBidRequest',
    () => fuzz('forwarding', 'any', fc.oneof(hostileGet(), hostileAdCall), 80),
    60_000,
  );
});
