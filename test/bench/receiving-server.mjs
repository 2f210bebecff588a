#!/usr/bin/env node
// The receiving-side benchmark's ad server (a child process of receiving.bench.mjs, so the load generator does
// not share its event loop): docs/ad-server.md's hono app on @hono/node-server, with three handlers side by side:
//   /bare    answers 200 and nothing else;
//   /decode  Base64-decodes and JSON.parses the eids parameter, nothing else, and answers 200 (node server only);
//   /parse   parses the call (parseIncomingMessage) and answers 200: /decode and /parse are floors, not budgeted;
// /memory  the full receiving path of docs/ad-server.md, createAdCallReceiver on the in-memory stores: parse, provider
//            log to a sink, report, `take` on one cap, OpenRTB bid requests for two partners (serialised, as sending
//            them would);
//   /hand    the same path written out by hand, step by step, on stores of its own: the receiver's baseline;
//   /redis   the receiver on the Redis stores (argv[2] is the redis URL) through a node-redis client;
//   /ioredis the receiver on the Redis stores through an ioredis client (the client is the user's choice);
//   /memory-base with BASELINE=<checkout> (a built checkout of an earlier commit): /memory through that build.
// /gc runs a full garbage collection (the bench starts this process with --expose-gc) before each measured run, so
// that no case pays for the garbage the case before it left.
// argv[3] = 'node' serves the same handlers on plain node:http instead; 'hono-request' parses c.req.raw.
// Prints `{"port": N}` once listening.
import { createWriteStream } from 'node:fs';
import { createServer } from 'node:http';
import { getRequestListener } from '@hono/node-server';
import { Hono } from 'hono';
import { createClient, createCluster } from 'redis';
import { Redis } from 'ioredis';
import * as lib from '../../dist/node/adserver/index.js';
import { clusterClient } from '../support/cluster-client.mjs';
import { handWrittenPath, receiverPath } from './receiving-path.mjs';

const {
  createFrequencyCapper,
  createRedisFrequencyCapStore,
  createRedisReport,
  createReport,
  jsonLinesLogSink,
  parseAdCallRequest,
  parseIncomingMessage,
} = lib;

// argv[2]: a Redis URL, or a Redis Cluster as JSON (`{ rootNodes, startupNodes }`, cluster.bench.mjs): then /redis and
// /ioredis run on node-redis's and ioredis's cluster clients.
let redis;
let io;
if (process.argv[2].startsWith('{')) {
  const config = JSON.parse(process.argv[2]);
  redis = await clusterClient({ ...config, client: 'node-redis' }, { createCluster, Redis });
  io = await clusterClient({ ...config, client: 'ioredis' }, { createCluster, Redis });
} else {
  redis = createClient({ url: process.argv[2], disableOfflineQueue: true });
  redis.on('error', (e) => console.error(`redis: ${e.message}`));
  await redis.connect();
  io = new Redis(process.argv[2], { enableOfflineQueue: false, lazyConnect: true });
  io.on('error', (e) => console.error(`ioredis: ${e.message}`));
  await io.connect();
}

const sink = jsonLinesLogSink(createWriteStream('/dev/null'));
const withStore = (store, report) => ({ store, report, capper: createFrequencyCapper({ store }) });
const stores = {
  '/hand': { report: createReport(), capper: createFrequencyCapper() },
  '/memory': { report: createReport(), capper: createFrequencyCapper() },
  // The default options, as docs/ad-server.md's example; timeouts and errors are counted and printed by the bench.
  '/redis': withStore(createRedisFrequencyCapStore(redis), createRedisReport(redis)),
  '/ioredis': withStore(
    createRedisFrequencyCapStore(io, { prefix: 'eidkit:fc-io:' }),
    createRedisReport(io, { prefix: 'eidkit:report-io:' }),
  ),
};

/** The path of each case, from a parsed call to its JSON answer, over its stores. */
const receivers = Object.fromEntries(
  Object.entries(stores).map(([path, s]) => [
    path,
    path === '/hand' ? handWrittenPath(lib, s, sink) : receiverPath(lib, s, sink),
  ]),
);
// BASELINE: the same in-memory receiver from another build, for a before / after in the same rounds.
if (process.env.BASELINE) {
  const base = await import(`${process.env.BASELINE}/dist/node/adserver/index.js`);
  const s = { report: base.createReport(), capper: base.createFrequencyCapper() };
  // Through a second instance of receiving-path.mjs, so that no call site in it sees both builds' receivers.
  const path = await import('./receiving-path.mjs?baseline');
  receivers['/memory-base'] = path.receiverPath(base, s, base.jsonLinesLogSink(createWriteStream('/dev/null')));
}
const metrics = () =>
  JSON.stringify(
    Object.fromEntries(
      ['/redis', '/ioredis'].map((p) => [
        p,
        { capper: stores[p].capper.metrics(), report: stores[p].report.metrics(), store: stores[p].store.metrics() },
      ]),
    ),
  );

let listener;
if (process.argv[3] === 'node') {
  const answer = (res, body = '{"ok":true}') => res.writeHead(200, { 'content-type': 'application/json' }).end(body);
  const parse = (req) => parseIncomingMessage(req, { ip: req.socket.remoteAddress });
  listener = async (req, res) => {
    const path = req.url.slice(0, req.url.indexOf('?') >>> 0);
    if (path === '/bare') return answer(res);
    if (path === '/metrics') return res.writeHead(200).end(metrics());
    if (path === '/gc') {
      globalThis.gc?.();
      return answer(res);
    }
    if (path === '/decode') {
      // Only what any receiving path must do first: Base64-decode the eids parameter and JSON.parse it (no checks).
      const url = req.url;
      const at = url.indexOf('eids=');
      const end = url.indexOf('&', at) >>> 0;
      JSON.parse(Buffer.from(url.slice(at + 5, end), 'base64').toString());
      return answer(res);
    }
    if (path === '/parse') {
      await parse(req);
      return answer(res);
    }
    const receive = receivers[path];
    if (!receive) return res.writeHead(404).end();
    answer(res, await receive(await parse(req)));
  };
} else {
  const app = new Hono();
  app.get('/bare', (c) => c.json({ ok: true }));
  app.get('/metrics', (c) => c.body(metrics()));
  app.get('/gc', (c) => {
    globalThis.gc?.();
    return c.json({ ok: true });
  });
  // `hono-request` parses hono's WHATWG Request (c.req.raw); `hono` parses the Node request under it (c.env.incoming),
  // which spares @hono/node-server building a Request.
  const parse =
    process.argv[3] === 'hono-request'
      ? (c) => parseAdCallRequest(c.req.raw)
      : (c) => parseIncomingMessage(c.env.incoming, { ip: c.env.incoming.socket.remoteAddress });
  app.get('/parse', async (c) => {
    await parse(c);
    return c.json({ ok: true });
  });
  for (const path of Object.keys(receivers))
    app.get(path, async (c) =>
      c.body(await receivers[path](await parse(c)), 200, { 'content-type': 'application/json' }),
    );
  listener = getRequestListener(app.fetch);
}
const server = createServer(listener);
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ port: server.address().port })));
