#!/usr/bin/env node
// buildBidRequest for 5 partners with a forwarding policy of 50 rules (consent enforced), and the same policy with
// a Global Vendor List, vs the same 5 partners without a policy, side by side in one run (interleaved rounds after
// a warm-up). Budget: at most +25% for each policy. Exit 1 when over. Each iteration handles a fresh copy of the
// call, as each ad call is parsed anew; its consent strings repeat, as a user's calls do, so they come from the
// policy's cache. A third case, every call with a consent string not seen before (a cache of one, four strings in
// turn), is printed for scale, not budgeted.
//
// BASELINE=<checkout> (a worktree of an earlier commit, with its own built dist/): the same cases also run through
// that checkout's `dist/node/adserver/index.js`, interleaved in the same rounds, and each case prints this build ÷
// that one (median of the per-round ratios), for a before/after of a change:
// `BASELINE=../base npm run bench forwarding`.
import { GppModel } from '@iabgpp/cmpapi';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as current from '../../dist/node/adserver/index.js';
import { encodeTcString } from '../support/tcf/tc-string.mjs';
import { eids as baseEids } from './eids.mjs';
import { interleavedRounds, quantile } from './rounds.mjs';

const BUDGET = 1.25;
const ROUNDS = 61;
// With a baseline, longer rounds: two builds of the same code differ by a few per cent, which shorter rounds on a
// shared machine hide in their spread.
const ITERATIONS = process.env.BASELINE ? 3_000 : 1_000;
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
// The same with a Global Vendor List: the synthetic snapshot as the version the TC strings name (100).
const snapshot = JSON.parse(readFileSync(new URL('../support/gvl/vendor-list-v150.json', import.meta.url), 'utf8'));

let sink = 0;
const fresh = (call) => ({ ...call, consent: { ...call.consent } });

const NONE = 'buildBidRequest x5, no policy (baseline)';
const POLICY = 'buildBidRequest x5, policy of 50 rules + consent';
const GVL = 'the same policy with a Global Vendor List';
const COLD = 'same, consent strings never seen before';

/** The cases of one build of the ad server side (`mod`: its `dist/node/adserver/index.js`), each from its own calls. */
function casesOf(mod, label) {
  const { buildBidRequest, createForwardingPolicy, parseAdCall, parseVendorList } = mod;
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
  const allowSources = ['pubcid.org'];
  const policy = createForwardingPolicy({ permissions, partners, consent: { allowSources } });
  const gvl = parseVendorList({ ...snapshot, vendorListVersion: 100 });
  const gvlPolicy = createForwardingPolicy({ permissions, partners, consent: { allowSources, gvl } });
  const coldPolicy = createForwardingPolicy({ permissions, partners, consent: { allowSources }, cacheSize: 1 });

  // The policy must really work: some eids removed for some partners, none for others.
  const counts = partners.map((p) => {
    const r = buildBidRequest(calls[0], p, { policy });
    return (r.user?.eids ?? r.user?.ext?.eids ?? []).length;
  });
  console.log(`${label}: eids received per partner with the policy: ${counts.join(', ')} of ${eids.length}`);
  if (counts.every((c) => c === eids.length) || counts.every((c) => c === 0))
    throw new Error('the policy removed nothing or everything');

  const all = (call, options) => {
    for (const p of partners) sink += buildBidRequest(call, p, options).imp.length;
  };
  let n = 0;
  return {
    [NONE]: () => all(fresh(calls[0]), {}),
    [POLICY]: () => all(fresh(calls[0]), { policy }),
    [GVL]: () => all(fresh(calls[0]), { policy: gvlPolicy }),
    [COLD]: () => all(fresh(calls[n++ & 3]), { policy: coldPolicy }),
  };
}

const BASELINE = process.env.BASELINE;
const ours = casesOf(current, 'this build');
const theirs = BASELINE
  ? casesOf(await import(pathToFileURL(resolve(BASELINE, 'dist/node/adserver/index.js')).href), `baseline ${BASELINE}`)
  : undefined;
/** A baseline case's name in the rounds. */
const base = (name) => `${name} [baseline]`;

/**
 * Interleaved rounds of the `names` cases (CPU time), with their baseline twins when BASELINE is set; prints per case
 * the median time per call, the ratio to the first case, and this build ÷ the baseline.
 */
function compare(names) {
  const cases = {};
  for (const name of names) {
    cases[name] = ours[name];
    if (theirs) cases[base(name)] = theirs[name];
  }
  const { perOp, ratios } = interleavedRounds(cases, {
    rounds: ROUNDS,
    iterations: ITERATIONS,
    warmup: WARMUP,
    cpu: true,
  });
  for (const name of names) {
    const us = (quantile(perOp[name], 0.5) / 1000).toFixed(2).padStart(8);
    let line = `  ${name.padEnd(48)} ${us}   ${quantile(ratios[name], 0.5).toFixed(2)}x`;
    if (theirs) {
      // Per round: this build's time ÷ the baseline's in the same round; the baseline's ratio to its no-policy case.
      const vsBase = perOp[name].map((t, r) => t / perOp[base(name)][r]);
      const ownRatio = perOp[base(name)].map((t, r) => t / perOp[base(names[0])][r]);
      line += `   baseline ${(quantile(perOp[base(name)], 0.5) / 1000).toFixed(2)} µs (${quantile(ownRatio, 0.5).toFixed(2)}x)`;
      line += `   new ÷ baseline ${quantile(vsBase, 0.5).toFixed(3)} (quartiles ${quantile(vsBase, 0.25).toFixed(3)}–${quantile(vsBase, 0.75).toFixed(3)})`;
    }
    console.log(line);
  }
  return ratios;
}

console.log(
  `10 eids, 5 partners, 50 rules; ${ROUNDS} interleaved rounds of ${ITERATIONS} after a warm-up of ${WARMUP}`,
);
console.log(`  ${'case'.padEnd(48)} ${'µs/call'.padStart(8)}   ratio to the first (median of per-round ratios)`);
const ratios = compare([NONE, POLICY, GVL]);
// Measured apart, so the decoding's garbage does not land in the budgeted rounds.
compare([NONE, COLD]);
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
