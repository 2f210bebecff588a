#!/usr/bin/env node
// The ad server of the "bomb beside 20 normal calls" test (a child of test/fuzz/acceptance.test.ts, on the built
// package): node:http on a free loopback port running the documented receiving path, parseIncomingMessage → the
// forwarding policy (consent enforced) → buildBidRequest per partner, serialised as sending them would.
// argv[2]: JSON { policy, partners }. Prints `{"port": N}` once listening; the test ends it with a signal.
import { createServer } from 'node:http';
import {
  bidRequestsJson,
  buildBidRequest,
  createForwardingPolicy,
  parseIncomingMessage,
} from '../../dist/node/adserver/index.js';

const { policy: config, partners } = JSON.parse(process.argv[2]);
const policy = createForwardingPolicy(config);

const server = createServer(async (req, res) => {
  // The server's CPU time so far (µs), so the test can tell what the bombs cost from what the machine's load adds.
  if (req.url === '/__cpu') {
    const { user, system } = process.cpuUsage();
    return res.writeHead(200, { 'content-type': 'application/json' }).end(String(user + system));
  }
  const call = await parseIncomingMessage(req, { ip: req.socket.remoteAddress });
  const bodies = bidRequestsJson(partners.map((p) => buildBidRequest(call, p, { policy, tmax: 200 })));
  const bytes = bodies.reduce((n, b) => n + b.length, 0);
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(`{"ok":true,"eids":${call.eids.length},"bytes":${bytes}}`);
});
server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ port: server.address().port })));
