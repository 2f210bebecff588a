// Strings taken from a request and kept after it (consent cache keys, the pid in cap keys, log records) are copies:
// V8 keeps a substring as a slice of the whole string it was cut from, so a 16-character consent string cut from a
// 15 KB URL would keep the URL alive as long as the cache keeps the string, unseen by the cache's byte count.
// Measured in a real node:http server, the heap after full collections.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createServer, request, Agent } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  buildBidRequest,
  createConsentDecoder,
  createForwardingPolicy,
  createFrequencyCapper,
  defineFrequencyCap,
  logProviders,
  memoryLogSink,
  parseIncomingMessage,
} from '../../src/adserver/index.js';
import { heapAfterGc, mib } from '../support/heap.js';

const policy = createForwardingPolicy({});
const capper = createFrequencyCapper();
const cap = defineFrequencyCap({ item: 'deal:1', max: 3, per: 'day' });
const log = memoryLogSink(1_000);
const server = createServer((req, res) => {
  void (async () => {
    const call = await parseIncomingMessage(req);
    buildBidRequest(call, { id: 'dsp', gvlVendorId: 45 }, { policy });
    logProviders(call, log);
    await capper.take(call, cap);
    res.end('{}');
  })();
});
const agent = new Agent({ keepAlive: true, maxSockets: 8 });
let port = 0;

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  agent.destroy();
  await new Promise((resolve) => server.close(resolve));
});

const get = (path: string, cookie: string) =>
  new Promise<void>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent, headers: { cookie } }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`answered ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end();
  });

/**
 * `n` GET calls, 8 at a time, each with its own 16-character strings in a 12 KB URL and a 3 KB Cookie header (Node
 * refuses request headers over 16 KB in all).
 */
async function send(n: number, from: number): Promise<void> {
  const pad = 'p'.repeat(12_000);
  const eids = Buffer.from(JSON.stringify([{ source: 'unknown.example', uids: [{ id: 'x' }] }])).toString('base64');
  let next = from;
  const worker = async () => {
    while (next < from + n) {
      const i = String(next++).padStart(15, '0');
      const path = `/ac?nwid=1&gdpr=1&gdpr_consent=C${i}&gpp=G${i}&pgid=P${i}&eids=${eids}&pad=${pad}`;
      await get(path, `a=${'c'.repeat(3_000)}; pid=U${i}`);
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
}

describe('strings a server keeps from a request hold no more than themselves', () => {
  test('2,000 GET calls with distinct 16-character consent strings and pids in 15 KB requests keep under 4 MiB', async () => {
    await send(100, 0); // the code compiled and the caches' first entries made before the baseline
    const before = heapAfterGc();
    await send(2_000, 100);
    const grown = heapAfterGc() - before;
    // Each call leaves a TC string, a GPP string, a pid in the cap store and a log record: a few hundred bytes.
    // Sliced, each would keep its 12 KB URL and 3 KB Cookie header: 2,000 calls, about 30 MiB.
    expect(grown, `heap grew by ${mib(grown)}`).toBeLessThan(4 * 2 ** 20);
  }, 60_000);

  test('the consent caches copy their keys, whoever gives them', () => {
    const decoder = createConsentDecoder();
    const before = heapAfterGc();
    for (let i = 0; i < 1_000; i++) {
      const text = `${'x'.repeat(15_000)}C${String(i).padStart(15, '0')}`;
      decoder.decode({ gdpr: 1, gdprConsent: text.slice(15_000) });
    }
    const grown = heapAfterGc() - before;
    expect(decoder.stats().tcf.entries).toBe(1_000);
    expect(grown, `heap grew by ${mib(grown)}`).toBeLessThan(2 * 2 ** 20);
  });
});
