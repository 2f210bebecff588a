// Fuzz: `eidkit decode` (run in this process through the CLI's own runner) on hostile URLs, POST bodies, Base64
// and JSON eids, with and without `--json` and `--partners`: it ends with a documented exit code, its human output
// is terminal-safe (no raw control character, so no escape sequence), its JSON output parses, its CPU is bounded.
import { afterAll, describe, test } from 'vitest';
import fc from 'fast-check';
import { hostileEids, hostileGet, hostilePost, hostileText, jsonBombText } from './arbitraries.js';
import { fuzz, worstSummary } from './harness.js';

afterAll(() => console.log(worstSummary()));

const decodeText = fc.oneof(
  hostileGet().map((r) => `https://ads.example${r.url.startsWith('/') ? '' : '/'}${r.url}`),
  hostileGet().map((r) => (r.url.startsWith('/') ? r.url : `/${r.url}`)),
  hostilePost.map((r) => (typeof r.body === 'string' ? r.body : JSON.stringify(r.body ?? null))),
  hostileEids.map((e) => Buffer.from(JSON.stringify(e) ?? 'null').toString('base64')),
  hostileEids.map((e) => JSON.stringify(e) ?? 'null'),
  jsonBombText,
  hostileText,
);
// `-` alone reads stdin.
const decodeInput = fc.record({
  text: decodeText.filter((t) => t !== '-'),
  json: fc.boolean(),
  partners: fc.boolean(),
});

describe('eidkit decode on hostile input', () => {
  test(
    'ends with a documented exit code, terminal-safe text, parseable JSON, bounded CPU',
    () => fuzz('decode', 'any', decodeInput, 80),
    60_000,
  );
});
