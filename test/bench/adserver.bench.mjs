#!/usr/bin/env node
// Parsing a GET ad call with 10 eids vs a bare Base64 decode + JSON.parse of the same `eids` parameter,
// measured side by side in one run (interleaved rounds after a warm-up). Budget: at most 2x. Exit 1 when over.
import { decodeBase64Json } from '../../dist/node/core/index.js';
import { parseAdCall } from '../../dist/node/adserver/index.js';
import { eids } from './eids.mjs';
import { interleavedRounds } from './rounds.mjs';

const BUDGET = 2;
// Many short rounds, each timing every case back to back, so a busy machine slows both sides of a ratio alike.
const ROUNDS = 41;
const ITERATIONS = 2_000;
const WARMUP = 10_000;

const param = Buffer.from(JSON.stringify(eids)).toString('base64url');
const url = `https://ads.example/ac?nwid=1234&siteid=56789&pgid=1234567&fmtid=12345&tgt=sport%3Dfootball&tmstp=1700000000000&eids=${param}`;
const headers = {
  cookie: 'pid=3f2a9c4e-1b2d-4e6f-8a9b-0c1d2e3f4a5b',
  'user-agent': 'Mozilla/5.0 (X11; Linux x86_64)',
  referer: 'https://news.example/article',
};

let sink = 0;
const cases = {
  'Buffer base64 + JSON.parse (baseline)': () => {
    sink += JSON.parse(Buffer.from(param, 'base64url').toString('utf8')).length;
  },
  "core's portable decodeBase64Json (atob)": () => {
    sink += decodeBase64Json(param).value.length;
  },
  'parseAdCall (GET /ac, 10 eids)': () => {
    sink += parseAdCall({ url, headers }).eids.length;
  },
};

// The parse must be real: 10 eids kept, no issues.
const check = parseAdCall({ url, headers });
if (check.eids.length !== 10 || check.issues.length)
  throw new Error(`bench input did not parse cleanly: ${JSON.stringify(check.issues)}`);

const names = Object.keys(cases);
const BASE = names[0];
const { perOp, ratios } = interleavedRounds(cases, { rounds: ROUNDS, iterations: ITERATIONS, warmup: WARMUP });
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(
  `eids parameter: ${param.length} characters; ${ROUNDS} interleaved rounds of ${ITERATIONS} after a warm-up of ${WARMUP}`,
);
// The machine's speed drifts between rounds (other processes), so each ratio is taken within a round, then
// the median over rounds is reported; the ns/op column is only a rough scale.
console.log(`  ${'case'.padEnd(40)} ${'ns/op'.padStart(7)}   ratio to baseline (median of per-round ratios)`);
for (const name of names) {
  console.log(
    `  ${name.padEnd(40)} ${median(perOp[name]).toFixed(0).padStart(7)}   ${median(ratios[name]).toFixed(2)}x`,
  );
}
const PARSE = 'parseAdCall (GET /ac, 10 eids)';
const quantile = (xs, q) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) * q)];
console.log(
  `  per-round ratios of the parse: quartiles ${quantile(ratios[PARSE], 0.25).toFixed(2)}x – ${quantile(ratios[PARSE], 0.75).toFixed(2)}x`,
);
if (process.env.BENCH_DEBUG)
  for (let r = 0; r < ROUNDS; r++)
    console.log(r, perOp[BASE][r].toFixed(0), perOp[PARSE][r].toFixed(0), ratios[PARSE][r].toFixed(2));
const ratio = median(ratios[PARSE]);
console.log(
  `parse GET ad call / bare Base64 decode + JSON.parse = ${ratio.toFixed(2)}x (budget ${BUDGET}x): ${ratio <= BUDGET ? 'OK' : 'OVER BUDGET'}`,
);
if (sink < 0) console.log(sink);
process.exit(ratio <= BUDGET ? 0 : 1);
