// Fuzz: the email detectors of core/pii.ts (the tag's Referer rule, the Prebid adapter, the modules' checks) and the
// ad server's page-URL scrubber on hostile input up to the URL caps. Every case is timed against a budget linear in
// its size (test/fuzz/entry-points.ts): a pattern that backtracks catastrophically on a long run blows it.
import { afterAll, describe, test } from 'vitest';
import { hostileUrl, MAX_GET_URL } from './arbitraries.js';
import { fuzz, worstSummary } from './harness.js';

afterAll(() => console.log(worstSummary()));

describe('the email detectors leave no email in a piece of a URL, in time linear in its length', () => {
  test(
    'hasEmail, findEmail, looksPersonal and scrubUrl on hostile URLs up to 8,000 characters',
    () => fuzz('emailDetection', 'url', hostileUrl(MAX_GET_URL), 300),
    60_000,
  );
  test(
    'the same on hostile page URLs up to 2 MB, the longest a browser keeps',
    () => fuzz('emailDetection', 'url-huge', hostileUrl(2_000_000), 12),
    60_000,
  );
  test(
    'scrubPageUrl (strip and hash) on hostile page URLs up to 8,000 characters, beyond the parser cap of 4,096',
    () => fuzz('pageUrl', 'url', hostileUrl(MAX_GET_URL), 200),
    60_000,
  );
});
