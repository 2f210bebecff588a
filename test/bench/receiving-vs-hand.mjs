#!/usr/bin/env node
// The receiving bench's in-process comparison (receiving.bench.mjs runs it in several fresh processes): the receiver
// against the same steps written out by hand, after parsing, both over the same 500 parsed calls, 16 in flight, each
// on stores of its own and the same provider log. CPU time of this process per call, each case after a full GC,
// ROUNDS interleaved rounds (the order alternating), median of the per-round ratios. The hand-written path runs twice,
// before and after the receiver, which is held to their mean; the ratio of those two is the control, what the
// measure reads for no difference at all. Over HTTP the same comparison reads the HTTP layer's noise (two identical
// handlers differ by up to ±25 % a round on this machine: writes batched differently, a core taken away). With
// BASELINE=<checkout> that build's receiver runs in the same rounds. Prints one JSON line:
// `{ hand, receiver, ratio, control, base }` (µs a call, ratios).
import * as lib from '../../dist/node/adserver/index.js';
import { QUERY, handWrittenPath, receiverPath } from './receiving-path.mjs';
import { quantile } from './rounds.mjs';

const ROUNDS = 21;
const CALLS = 5_000;
const IN_FLIGHT = 16;
const USERS = 500;
const median = (xs) => quantile(xs, 0.5);
const baseline = process.env.BASELINE ? await import(`${process.env.BASELINE}/dist/node/adserver/index.js`) : undefined;
// BASELINE's path through a second instance of receiving-path.mjs, so that no call site in it sees both builds'
// receivers (which would make the shared code polymorphic, and the comparison that of the sharing).
const baselinePath = baseline ? await import('./receiving-path.mjs?baseline') : undefined;

const calls = Array.from({ length: USERS }, (_, i) =>
  lib.parseAdCall({
    url: `/ac${QUERY}`,
    headers: { host: 'ads.example', cookie: `pid=user-${i}`, 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64)' },
  }),
);
// The provider log's lines are formatted and batched as in the server, then dropped: a file's writes would run in
// libuv's threads, batched by a timer, and land partly on whichever case runs next.
const sink = lib.jsonLinesLogSink({ write: () => true });
const stores = (l) => ({ report: l.createReport(), capper: l.createFrequencyCapper() });
const cases = {
  hand: handWrittenPath(lib, stores(lib), sink),
  receiver: receiverPath(lib, stores(lib), sink),
  ...(baseline ? { 'receiver (BASELINE)': baselinePath.receiverPath(baseline, stores(baseline), sink) } : {}),
  'hand again': handWrittenPath(lib, stores(lib), sink),
};
async function run(fn, n) {
  let i = 0;
  globalThis.gc?.();
  const t0 = process.cpuUsage();
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (i < n) await fn(calls[i++ % USERS]);
    }),
  );
  const t = process.cpuUsage(t0);
  return (t.user + t.system) / n;
}
for (const fn of Object.values(cases)) await run(fn, 20_000); // warm-up
const names = Object.keys(cases);
const perCall = Object.fromEntries(names.map((k) => [k, []]));
for (let r = 0; r < ROUNDS; r++)
  for (const k of r % 2 ? [...names].reverse() : names) perCall[k].push(await run(cases[k], CALLS));
// The receiver always runs between the two hand-written cases, one before it and one after: each round's ratio is
// against their mean, so neither place in the order favours it.
const hand = perCall.hand.map((v, i) => (v + perCall['hand again'][i]) / 2);
console.log(
  JSON.stringify({
    hand: median(hand),
    receiver: median(perCall.receiver),
    ratio: median(perCall.receiver.map((v, i) => v / hand[i])),
    control: median(perCall['hand again'].map((v, i) => v / perCall.hand[i])),
    base: baseline ? median(perCall.receiver.map((v, i) => v / perCall['receiver (BASELINE)'][i])) : undefined,
  }),
);
