// GET /openapi.json names the origin it was asked at as the document's server, and anyone can send any Host: the
// document is built and serialised once, and a new Host costs the same as a known one (it cost 4× a known one,
// the whole 188 KB document rebuilt per Host).
import { afterAll, describe, expect, test } from 'vitest';
import { request, Agent } from 'node:http';
import { createDealApiSimulator } from '../../src/simulator/index.js';
import { buildOpenApi } from '../../src/simulator/openapi.js';
import { openApiText } from '../../src/simulator/openapi-text.js';

const sim = createDealApiSimulator();
const listening = sim.listen();
const agent = new Agent({ keepAlive: true });
afterAll(async () => {
  agent.destroy();
  await (await listening).close();
});

/** GET /openapi.json with a Host header; the body and the server's time to answer, as the client sees it. */
async function documentAt(host: string): Promise<{ status: number; text: string; ms: number }> {
  const port = Number(new URL((await listening).url).port);
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = request({ host: '127.0.0.1', port, path: '/openapi.json', headers: { host }, agent }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, text, ms: performance.now() - started }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the OpenAPI document', () => {
  test('is the document built for that origin, for any origin, byte for byte', () => {
    const text = openApiText(sim.audience);
    for (const origin of ['http://127.0.0.1:4010', 'https://sim.example', 'http://[::1]:8080', 'http://"x"']) {
      expect(text(origin)).toBe(JSON.stringify(buildOpenApi(sim.audience, origin)));
    }
  });

  test('a new Host on every request costs no more than the same Host each time', async () => {
    for (let i = 0; i < 10; i++) await documentAt('sim.example'); // compiled and warm
    const same: number[] = [];
    const fresh: number[] = [];
    for (let i = 0; i < 15; i++) {
      same.push((await documentAt('sim.example')).ms);
      const r = await documentAt(`h${i}.example:1234`);
      expect(r.status).toBe(200);
      expect(JSON.parse(r.text).servers[0].url).toBe(`http://h${i}.example:1234`);
      fresh.push(r.ms);
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
    expect(median(fresh), `${median(fresh).toFixed(2)} vs ${median(same).toFixed(2)} ms`).toBeLessThan(
      2 * median(same) + 1,
    );
  });
});
