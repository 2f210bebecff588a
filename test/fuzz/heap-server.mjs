#!/usr/bin/env node
// The ad server of the "distinct consent strings in long URLs" acceptance (a child of
// test/fuzz/acceptance-shapes.test.ts, on the built package, run with --expose-gc): node:http on a free loopback
// port running parseIncomingMessage → the forwarding policy (consent enforced: every TC and GPP string decoded and
// cached) → a bid request, the provider log in memory and a cap taken per user. `GET /__heap` answers the heap in
// use after full collections, and the consent caches' own count. Prints `{"port": N}` once listening.
import { createServer } from 'node:http';
import {
  buildBidRequest,
  createConsentDecoder,
  createForwardingPolicy,
  createFrequencyCapper,
  defineFrequencyCap,
  logProviders,
  memoryLogSink,
  parseIncomingMessage,
} from '../../dist/node/adserver/index.js';

const policy = createForwardingPolicy({});
// The decoder the policy uses is its own; this one sees the same strings, for its stats (entries, estimated bytes).
const decoder = createConsentDecoder();
const capper = createFrequencyCapper();
const cap = defineFrequencyCap({ item: 'deal:1', max: 3, per: 'day' });
const log = memoryLogSink(1_000);
const partner = { id: 'dsp', gvlVendorId: 45 };
const heap = () => {
  globalThis.gc();
  globalThis.gc();
  return process.memoryUsage().heapUsed;
};

const server = createServer(async (req, res) => {
  if (req.url === '/__heap') {
    const body = { heap: heap(), consent: decoder.stats(), records: log.records().length };
    return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  }
  const call = await parseIncomingMessage(req, { ip: req.socket.remoteAddress });
  buildBidRequest(call, partner, { policy });
  decoder.decode(call.consent);
  logProviders(call, log);
  const { allowed } = await capper.take(call, cap);
  res.writeHead(200, { 'content-type': 'application/json' }).end(`{"deal":${allowed}}`);
});
server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ port: server.address().port })));
