#!/usr/bin/env node
// The heap bound of the fuzz suite (a child of test/fuzz/acceptance.test.ts, run with --expose-gc on the built
// package): one long-lived forwarding policy, as a server keeps, receives batches of distinct bombs; the heap after
// a full GC is measured before and after each batch.
// argv[2]: a JSON file { policy, partners, batches: [[input…]…] }.
// Prints one JSON line { baseline, after: [heapUsed…], calls, ms }.
import { readFileSync } from 'node:fs';
import {
  bidRequestsJson,
  buildBidRequest,
  createForwardingPolicy,
  parseAdCall,
} from '../../dist/node/adserver/index.js';

const job = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const policy = createForwardingPolicy(job.policy);
const heap = () => {
  globalThis.gc();
  globalThis.gc();
  return process.memoryUsage().heapUsed;
};
const body = (b) => {
  if (b === undefined || typeof b === 'string') return b;
  return 'base64' in b ? Buffer.from(b.base64, 'base64') : b.json;
};

const run = (input) => {
  const call = parseAdCall({ url: input.url, method: input.method, headers: input.headers, body: body(input.body) });
  bidRequestsJson(job.partners.map((p) => buildBidRequest(call, p, { policy })));
};
// The code paths compiled and the policy's own structures built before the baseline.
for (const input of job.batches[0].slice(0, 20)) run(input);
const baseline = heap();
const after = [];
let calls = 0;
const started = performance.now();
for (const batch of job.batches) {
  for (const input of batch) {
    run(input);
    calls++;
  }
  after.push(heap());
}
console.log(JSON.stringify({ baseline, after, calls, ms: Math.round(performance.now() - started) }));
