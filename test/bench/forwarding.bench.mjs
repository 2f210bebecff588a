#!/usr/bin/env node
// buildBidRequest for 5 partners with a forwarding policy of 50 rules (consent enforced), and the same policy with
// a Global Vendor List, vs the same 5 partners without a policy, side by side in one run (interleaved rounds after
// a warm-up). Budget: at most +25% for each policy. Exit 1 when over. Each iteration handles a fresh copy of the
// call, as each ad call is parsed anew; its consent strings repeat, as a user's calls do, so they come from the
// policy's cache. A third case, every call with a consent string not seen before (a cache of one, four strings in
// turn), is printed for scale, not budgeted.
import { GppModel } from '@iabgpp/cmpapi';
import { readFileSync } from 'node:fs';
import {
  buildBidRequest,
  createForwardingPolicy,
  parseAdCall,
  parseVendorList,
} from '../../dist/node/adserver/index.js';
import { encodeTcString } from '../support/tcf/tc-string.mjs';
import { eids as baseEids } from './eids.mjs';
import { interleavedRounds, quantile } from './rounds.mjs';

const BUDGET = 1.25;
const ROUNDS = 61;
const ITERATIONS = 1_000;
const WARMUP = 4_000;

// Some carry provenance (inserter, mm), so rules on it match.
const PROVENANCE = {
  'id5-sync.com': { inserter: 'news.example', mm: 4 },
  'uidapi.com': { inserter: 'news.example', mm: 3 },
  'liveramp.com': { inserter: 'news.example', mm: 3 },
};
const eids = baseEids.map((e) => ({ ...e, ...PROVENANCE[e.source] }));
const partners = [
  { id: 'dsp-a', gvlVendorId: 45 },
  { id: 'dsp-b', gvlVendorId: 131, openrtb: '2.5' },
  { id: 'dsp-c', gvlVendorId: 97, openrtb: 'both' },
  { id: 'dsp-d', gvlVendorId: 21 },
  { id: 'dsp-e', gvlVendorId: 755 },
];
const vendors = partners.map((p) => p.gvlVendorId);
const tcStrings = [
  encodeTcString([1, 2, 3, 4, 7], vendors),
  encodeTcString([1, 2, 3, 4], vendors.slice(0, 4)),
  encodeTcString([1, 2, 3], vendors),
  encodeTcString([1, 2, 7], vendors),
];
const gppStrings = [2, 0, 1, 2].map((v, i) => {
  const m = new GppModel();
  m.setFieldValue('usnat', 'SaleOptOut', v);
  m.setFieldValue('usnat', 'SharingOptOut', i === 3 ? 1 : 2);
  return m.encode();
});
const callFor = (i) => {
  const q = new URLSearchParams({
    nwid: '1234',
    siteid: '56',
    fmtid: '7',
    gdpr: '1',
    gdpr_consent: tcStrings[i],
    us_privacy: '1YNN',
    gpp: gppStrings[i],
    gpp_sid: '7',
  });
  return parseAdCall({
    url: `https://ads.example/ac?${q}&eids=${Buffer.from(JSON.stringify(eids)).toString('base64url')}`,
    headers: { cookie: 'pid=p1', referer: 'https://news.example/a' },
  });
};
const calls = [0, 1, 2, 3].map(callFor);

// 50 rules, none tying: per source a source-wide rule, then more specific ones on inserter / matcher / mm.
const sources = [
  ...eids.map((e) => e.source),
  'netid.de',
  'zeotap.com',
  'intentiq.com',
  'permutive.com',
  'utiq.com',
  'lotame.com',
  'teads.com',
  'amazon.com',
  'quantcast.com',
  'audigent.com',
];
const permissions = [];
for (const [i, source] of sources.entries()) {
  permissions.push({ source, partners: i % 3 ? '*' : partners.slice(0, 3).map((p) => p.id) });
  if (permissions.length < 50)
    permissions.push({ source, inserter: 'news.example', partners: partners.slice(1).map((p) => p.id) });
  if (i < 10 && permissions.length < 50) permissions.push({ source, inserter: 'news.example', mm: 3, partners: '*' });
}
while (permissions.length < 50)
  permissions.push({ source: `extra${permissions.length}.example`, matcher: 'm.example', partners: ['dsp-a'] });
if (permissions.length !== 50) throw new Error(`${permissions.length} rules`);
const policy = createForwardingPolicy({ permissions, partners, consent: { allowSources: ['pubcid.org'] } });
// The same with a Global Vendor List: the synthetic snapshot as the version the TC strings name (100).
const snapshot = JSON.parse(readFileSync(new URL('../support/gvl/vendor-list-v150.json', import.meta.url), 'utf8'));
const gvl = parseVendorList({ ...snapshot, vendorListVersion: 100 });
const gvlPolicy = createForwardingPolicy({ permissions, partners, consent: { allowSources: ['pubcid.org'], gvl } });
const coldPolicy = createForwardingPolicy({
  permissions,
  partners,
  consent: { allowSources: ['pubcid.org'] },
  cacheSize: 1,
});

let sink = 0;
const fresh = (call) => ({ ...call, consent: { ...call.consent } });
const all = (call, options) => {
  for (const p of partners) sink += buildBidRequest(call, p, options).imp.length;
};
let n = 0;
const cases = {
  'buildBidRequest x5, no policy (baseline)': () => all(fresh(calls[0]), {}),
  'buildBidRequest x5, policy of 50 rules + consent': () => all(fresh(calls[0]), { policy }),
  'the same policy with a Global Vendor List': () => all(fresh(calls[0]), { policy: gvlPolicy }),
  'same, consent strings never seen before': () => all(fresh(calls[n++ & 3]), { policy: coldPolicy }),
};

// The policy must really work: some eids removed for some partners, none for others.
const counts = partners.map(
  (p) =>
    (
      buildBidRequest(calls[0], p, { policy }).user?.eids ??
      buildBidRequest(calls[0], p, { policy }).user?.ext?.eids ??
      []
    ).length,
);
console.log(`eids received per partner with the policy: ${counts.join(', ')} of ${eids.length}`);
if (counts.every((c) => c === eids.length) || counts.every((c) => c === 0))
  throw new Error('the policy removed nothing or everything');

/** Interleaved rounds of `cases` (CPU time); prints per case the median time per call and ratio to the first. */
function compare(cases) {
  const { perOp, ratios } = interleavedRounds(cases, {
    rounds: ROUNDS,
    iterations: ITERATIONS,
    warmup: WARMUP,
    cpu: true,
  });
  for (const name of Object.keys(cases)) {
    console.log(
      `  ${name.padEnd(48)} ${(quantile(perOp[name], 0.5) / 1000).toFixed(1).padStart(8)}   ${quantile(ratios[name], 0.5).toFixed(2)}x`,
    );
  }
  return ratios;
}

console.log(
  `10 eids, 5 partners, 50 rules; ${ROUNDS} interleaved rounds of ${ITERATIONS} after a warm-up of ${WARMUP}`,
);
console.log(`  ${'case'.padEnd(48)} ${'µs/call'.padStart(8)}   ratio to baseline (median of per-round ratios)`);
const POLICY = 'buildBidRequest x5, policy of 50 rules + consent';
const GVL = 'the same policy with a Global Vendor List';
const ratios = compare({
  'buildBidRequest x5, no policy (baseline)': cases['buildBidRequest x5, no policy (baseline)'],
  [POLICY]: cases[POLICY],
  [GVL]: cases[GVL],
});
// Measured apart, so the decoding's garbage does not land in the budgeted rounds.
const COLD = 'same, consent strings never seen before';
compare({
  'buildBidRequest x5, no policy (baseline)': cases['buildBidRequest x5, no policy (baseline)'],
  [COLD]: cases[COLD],
});
// Both policies within the budget: the list costs nothing per call once a TC string's verdicts are kept.
const ratio = Math.max(quantile(ratios[POLICY], 0.5), quantile(ratios[GVL], 0.5));
console.log(
  `  per-round ratios with the policy: quartiles ${quantile(ratios[POLICY], 0.25).toFixed(2)}x – ${quantile(ratios[POLICY], 0.75).toFixed(2)}x`,
);
console.log(
  `with policy (the dearer of the two) / without = ${ratio.toFixed(2)}x (budget ${BUDGET}x, +${((BUDGET - 1) * 100).toFixed(0)}%): ${ratio <= BUDGET ? 'OK' : 'OVER BUDGET'}`,
);
if (sink < 0) console.log(sink);
process.exit(ratio <= BUDGET ? 0 : 1);
