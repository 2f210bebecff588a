// createAdCallReceiver end to end on real servers on loopback ports: node:http, Express and Fastify, mounted as
// docs/ad-server.md shows; and `receive` alone on a parsed call.
import { afterEach, describe, expect, test } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import Fastify from 'fastify';
import {
  createAdCallReceiver,
  createCorsPolicy,
  createForwardingPolicy,
  createFrequencyCapper,
  createReport,
  defineFrequencyCap,
  memoryLogSink,
  parseAdCall,
  type AdCallReceiverOptions,
} from '../../src/adserver/index.js';

const eids = [
  { source: 'id5-sync.com', uids: [{ id: 'ID5*x', atype: 1 }] },
  { source: 'liveramp.com', uids: [{ id: 'XY1000', atype: 3 }] },
];
const eidsParam = Buffer.from(JSON.stringify(eids)).toString('base64url');
const ORIGIN = 'https://pub.example';

function parts() {
  const report = createReport();
  const log = memoryLogSink();
  const options: AdCallReceiverOptions = {
    report,
    providerLog: log,
    capping: { capper: createFrequencyCapper(), caps: defineFrequencyCap({ item: 'deal:1', max: 1, per: 'day' }) },
    partners: [{ id: 'dsp-a' }, { id: 'dsp-b', openrtb: '2.5' }],
    policy: createForwardingPolicy({ permissions: [{ source: 'liveramp.com', partners: ['dsp-a'] }] }),
    cors: createCorsPolicy({ origins: [ORIGIN] }),
    answer: ({ cap, bidRequests }) => ({
      ads: [],
      deal: cap?.allowed,
      eids: bidRequests.map((b) => b.request.user?.eids?.length ?? b.request.user?.ext?.eids?.length ?? 0),
    }),
  };
  return { report, log, options };
}

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
});

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise((resolve) => server.close(resolve)));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** The same calls against any mounting: GET with a first visit, again with the pid, a POST, CORS both ways. */
async function exercise(url: string, { report, log }: ReturnType<typeof parts>) {
  const first = await fetch(`${url}/ac?nwid=7&siteid=1&pgid=2&fmtid=3&eids=${eidsParam}`, {
    headers: { Origin: ORIGIN },
  });
  expect(first.status).toBe(200);
  expect(first.headers.get('access-control-allow-origin')).toBe(ORIGIN);
  const cookie = first.headers.get('set-cookie')!;
  expect(cookie).toMatch(/^pid=[0-9a-f-]{36}; /);
  // dsp-a receives both eids, dsp-b (2.5, in user.ext.eids) only ID5: the policy keeps liveramp.com for dsp-a.
  expect(await first.json()).toEqual({ ads: [], deal: true, eids: [2, 1] });
  const pid = /^pid=([^;]+)/.exec(cookie)![1];
  // The first call had no user id to count; with the pid, the first impression is served, the second is capped.
  const withPid = () =>
    fetch(`${url}/ac?nwid=7&siteid=1&pgid=2&fmtid=3&eids=${eidsParam}`, {
      headers: { Origin: ORIGIN, Cookie: `pid=${pid}` },
    });
  const again = await withPid();
  expect(again.headers.get('set-cookie')).toBeNull();
  expect(await again.json()).toMatchObject({ deal: true });
  expect(await (await withPid()).json()).toMatchObject({ deal: false }); // capped at 1 a day for this pid
  const post = await fetch(`${url}/genericpost`, {
    method: 'POST',
    headers: { Origin: 'https://evil.example', 'Content-Type': 'text/plain' },
    body: JSON.stringify({ networkId: 7, siteId: 1, pageId: 2, formatId: 3, eids }),
  });
  expect(post.status).toBe(200);
  expect(post.headers.get('access-control-allow-origin')).toBeNull();
  expect(await post.json()).toMatchObject({ eids: [2, 1] });
  expect(report.toJSON().rows.map((r) => [r.networkId, r.calls])).toEqual([[7, 4]]);
  expect(log.records().map((r) => [r.networkId, r.providerIds.length])).toEqual([
    [7, 2],
    [7, 2],
    [7, 2],
    [7, 2],
  ]);
}

describe('createAdCallReceiver', () => {
  test('node:http: the handler as the server, preflights and unknown paths included', async () => {
    const p = parts();
    const receiver = createAdCallReceiver(p.options);
    const url = await listen(createServer((req, res) => void receiver.handler(req, res)));
    await exercise(url, p);
    const preflight = await fetch(`${url}/call`, {
      method: 'OPTIONS',
      headers: { Origin: ORIGIN, 'Access-Control-Request-Method': 'POST' },
    });
    expect(preflight.status).toBe(204);
    expect((await fetch(`${url}/other`)).status).toBe(404);
  });

  test('Express: mounted as it is, behind a text body parser', async () => {
    const p = parts();
    const receiver = createAdCallReceiver(p.options);
    const app = express();
    app.use(express.text({ type: '*/*' }));
    app.all(['/ac', '/genericpost', '/call'], (req, res) => void receiver.handler(req, res));
    await exercise(await listen(createServer(app)), p);
  });

  test('Fastify: the call parsed by the route, its outcome answered (docs/ad-server.md)', async () => {
    const p = parts();
    const cors = p.options.cors!;
    const receiver = createAdCallReceiver(p.options);
    const fastify = Fastify();
    closers.push(() => fastify.close());
    fastify.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => done(null, body));
    fastify.route({
      method: ['GET', 'POST'],
      url: '/:endpoint',
      handler: async (request, reply) => {
        const call = parseAdCall(
          {
            url: request.url,
            method: request.method,
            headers: request.headers,
            body: request.body as string,
          },
          { ip: request.ip },
        );
        const { answer, newPid } = await receiver.receive(call);
        if (newPid) void reply.header('set-cookie', newPid.setCookie);
        void reply.headers(cors.headersFor(request.headers.origin));
        return answer;
      },
    });
    await exercise(await fastify.listen({ port: 0, host: '127.0.0.1' }), p);
  });

  test('receive: the outcome of a parsed call, decisions worked out when asked', async () => {
    const { options } = parts();
    const receiver = createAdCallReceiver({ ...options, pidCookie: false });
    const outcome = await receiver.receive(parseAdCall({ url: `/ac?nwid=7&eids=${eidsParam}` }));
    expect(outcome.newPid).toBeUndefined();
    expect(outcome.bidRequests.map((b) => b.partner.id)).toEqual(['dsp-a', 'dsp-b']);
    const decisions = outcome.decisions().partners;
    expect(decisions.map((d) => [d.partner, d.kept.length, d.removed.length])).toEqual([
      ['dsp-a', 2, 0],
      ['dsp-b', 1, 1],
    ]);
  });
});
