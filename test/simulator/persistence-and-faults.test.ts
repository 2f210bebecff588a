import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { simulatorClock } from '../../src/cli/simulate.js';
import { COMPANY, api, dealBody, inProcess, login, overHttp, sim } from './helpers.js';

const dir = () => mkdtempSync(join(tmpdir(), 'eidkit-sim-'));

describe('persistence', () => {
  test('deals, ids and quota usage survive a restart over HTTP', async () => {
    const file = join(dir(), 'deals.json');
    const first = sim({ dataFile: file });
    const { url, close } = await first.listen();
    const call = api(overHttp(url), await login(overHttp(url)));
    const created = (await (await call('/deals', { method: 'POST', body: dealBody() })).json()) as {
      id: number;
      dealId: string;
    };
    expect((await call(`/deals/${created.id}`, { method: 'PUT', body: dealBody({ name: 'Renamed' }) })).status).toBe(
      200,
    );
    await close();

    const second = sim({ dataFile: file, quotas: { creationsPerDay: 2 } });
    const again = await second.listen();
    const call2 = api(overHttp(again.url), await login(overHttp(again.url)));
    const read = (await (await call2(`/deals/${created.id}`)).json()) as { name: string; dealId: string };
    expect(read).toMatchObject({ name: 'Renamed', dealId: created.dealId });
    const next = (await (await call2('/deals', { method: 'POST', body: dealBody() })).json()) as { id: number };
    expect(next.id).toBeGreaterThan(created.id);
    // One creation before the restart and one after: the quota of 2 is used up.
    expect((await call2('/deals', { method: 'POST', body: dealBody() })).status).toBe(429);
    await again.close();
  });

  test('writes go through a temp file and leave none behind', async () => {
    const d = dir();
    const file = join(d, 'state.json');
    const s = sim({ dataFile: file });
    const call = api(inProcess(s), await login(inProcess(s)));
    await call('/deals', { method: 'POST', body: dealBody() });
    expect(readdirSync(d)).toEqual(['state.json']);
    expect(JSON.parse(readFileSync(file, 'utf8')).deals).toHaveLength(1);
  });

  test('a data file that is not valid JSON is refused, not overwritten', () => {
    const file = join(dir(), 'broken.json');
    writeFileSync(file, '{"format": "eidkit-simulator/1", "deals": [');
    expect(() => sim({ dataFile: file })).toThrow(/not valid JSON/);
    expect(readFileSync(file, 'utf8')).toBe('{"format": "eidkit-simulator/1", "deals": [');
  });

  test('a failed write is not acknowledged and leaves memory unchanged', async () => {
    const d = dir();
    const s = sim({ dataFile: join(d, 'missing-dir', 'state.json') });
    const call = api(inProcess(s), await login(inProcess(s)));
    const res = await call('/deals', { method: 'POST', body: dealBody() });
    expect(res.status).toBe(500);
    expect(s.deals()).toEqual([]);
  });

  test('the seed option generates deals once, for an empty company', () => {
    const file = join(dir(), 'seeded.json');
    expect(sim({ dataFile: file, seed: { deals: 40 } }).deals()).toHaveLength(40);
    expect(sim({ dataFile: file, seed: { deals: 40 } }).deals()).toHaveLength(40);
  });
});

describe('faults and latency', () => {
  test('injected 503 and 429 faults answer before processing, 429 with Retry-After: 1', async () => {
    for (const kind of ['503', '429'] as const) {
      const s = sim({ faults: { rate: 1, seed: 7, kinds: [kind] } });
      const res = await s.fetch('/countries');
      expect(res.status).toBe(Number(kind));
      if (kind === '429') expect(res.headers.get('retry-after')).toBe('1');
    }
  });

  test('a dropped connection rejects the in-process fetch like undici, sometimes after the request was processed', async () => {
    const flaky = sim({ faults: { rate: 1, seed: 3, kinds: ['drop'] } });
    const outcomes = new Set<string>();
    for (let i = 0; i < 12; i++) {
      const err = await flaky.fetch('/countries').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TypeError);
      expect((err as TypeError).message).toBe('fetch failed');
      outcomes.add(flaky.requests.at(-1)!.fault!);
    }
    expect(outcomes).toEqual(new Set(['drop-before', 'drop-after']));
  });

  test('over HTTP a dropped connection destroys the socket, so a real fetch rejects', async () => {
    const flaky = sim({ faults: { rate: 1, seed: 11, kinds: ['drop'] } });
    const { url, close } = await flaky.listen();
    try {
      const err = await fetch(`${url}/countries`).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TypeError);
      expect(flaky.requests).toHaveLength(1);
      expect(flaky.requests[0].status).toBe(0);
    } finally {
      await close();
    }
  });

  test('a create dropped after processing exists although the caller saw a failure', async () => {
    let n = 0;
    // The seeded PRNG decides which request drops and when: find a seed whose login passes and whose create drops late.
    for (let seed = 1; seed < 50; seed++) {
      const s = sim({ faults: { rate: 0.5, seed, kinds: ['drop'] } });
      const f = inProcess(s);
      let token: string;
      try {
        token = await login(f);
      } catch {
        continue;
      }
      const res = await api(f, token)('/deals', { method: 'POST', body: dealBody() }).catch(() => null);
      if (res === null && s.requests.at(-1)?.fault === 'drop-after') {
        expect(s.deals()).toHaveLength(1);
        n++;
        break;
      }
    }
    expect(n).toBe(1);
  });

  test('latencyMs delays every request', async () => {
    const s = sim({ latencyMs: 60 });
    const t = Date.now();
    await s.fetch('/openapi.json');
    expect(Date.now() - t).toBeGreaterThanOrEqual(55);
  });

  test('onRequest sees every request with its status', async () => {
    const seen: string[] = [];
    const s = sim({ onRequest: (e) => seen.push(`${e.method} ${e.path} ${e.status}`) });
    await login(inProcess(s));
    expect(seen).toEqual(['POST /oauth/token 200', 'GET /authorize 200']);
  });
});

test('the simulator clock starts where asked and runs at the asked rate, or stands still', () => {
  let real = 1_000;
  const fast = simulatorClock(Date.parse('2030-01-01T00:00:00Z'), 60, () => real);
  const fixed = simulatorClock(Date.parse('2030-01-01T00:00:00Z'), 0, () => real);
  real += 1_000;
  expect(new Date(fast()).toISOString()).toBe('2030-01-01T00:01:00.000Z');
  expect(new Date(fixed()).toISOString()).toBe('2030-01-01T00:00:00.000Z');
});

describe('eidkit simulate', () => {
  const cli = fileURLToPath(new URL('../../dist/node/cli/index.js', import.meta.url));

  /** Starts `eidkit simulate` with `args`; resolves with its base URL, its output so far and a stop function. */
  async function simulate(args: string[]) {
    const child = spawn(process.execPath, [cli, 'simulate', '--port', '0', ...args], { stdio: 'pipe' });
    let out = '';
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no URL printed: ${out}`)), 15_000);
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        const m = /base URL:\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(out);
        if (m && out.includes('# ready to paste')) {
          clearTimeout(timer);
          resolve(m[1]);
        }
      });
      child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
      child.once('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
    });
    return { url, out: () => out, stop: () => child.kill('SIGTERM') };
  }

  test('--faults with --fault-kinds answers injected 503s and 429s with Retry-After', async () => {
    const s = await simulate(['--faults', '1', '--fault-kinds', '503,429', '--fault-seed', '3']);
    try {
      expect(s.out()).toMatch(/faults:\s+100% of requests \(503, 429\)/);
      const answers = await Promise.all(Array.from({ length: 12 }, () => fetch(`${s.url}/countries`)));
      const statuses = new Set(answers.map((r) => r.status));
      expect(statuses).toEqual(new Set([503, 429]));
      expect(answers.find((r) => r.status === 429)!.headers.get('retry-after')).toBe('1');
    } finally {
      s.stop();
    }
  });

  test('--clock with --clock-speed 0 fixes the time; a fast clock expires tokens in real seconds', async () => {
    const fixed = await simulate(['--clock', '2030-01-01T00:00:00Z', '--clock-speed', '0']);
    try {
      const call = api(overHttp(fixed.url), await login(overHttp(fixed.url)));
      const res = await call('/deals', { method: 'POST', body: dealBody() });
      const created = (await res.json()) as { createdAt: string };
      expect(created.createdAt).toBe('2030-01-01T00:00:00.000Z');
    } finally {
      fixed.stop();
    }
    // 7,200 times real time: the 10-hour user token lasts five real seconds.
    const fast = await simulate(['--clock-speed', '7200']);
    try {
      const call = api(overHttp(fast.url), await login(overHttp(fast.url)));
      expect((await call('/deals')).status).toBe(200);
      await new Promise((r) => setTimeout(r, 5200));
      const expired = await call('/deals');
      expect(expired.status).toBe(401);
      expect(((await expired.json()) as { code: string }).code).toBe('TOKEN_EXPIRED');
    } finally {
      fast.stop();
    }
  });

  test('bad --faults, --fault-kinds, --clock and --clock-speed values are refused with a message', async () => {
    const run = (args: string[]) =>
      new Promise<{ code: number | null; out: string }>((resolve) => {
        const child = spawn(process.execPath, [cli, 'simulate', '--port', '0', ...args], { stdio: 'pipe' });
        let out = '';
        child.stdout.on('data', (d: Buffer) => (out += d.toString()));
        child.stderr.on('data', (d: Buffer) => (out += d.toString()));
        child.once('close', (code) => resolve({ code, out }));
      });
    const bad = [
      ['--faults', '2'],
      ['--fault-kinds', '500'],
      ['--clock', 'yesterday'],
      ['--clock-speed', '-1'],
    ];
    const results = await Promise.all(bad.map(run));
    for (const [i, r] of results.entries()) {
      expect(r.code).not.toBe(0);
      expect(r.out).toContain(bad[i][0]);
    }
  });

  test('starts on loopback, prints base URL, auth URL and demo credentials, and serves the API', async () => {
    const s = await simulate(['--seed-deals', '3']);
    try {
      expect(s.out()).toMatch(/auth URL:\s+http:\/\/127\.0\.0\.1/);
      expect(s.out()).toContain(`username=${COMPANY.username}`);
      const call = api(overHttp(s.url), await login(overHttp(s.url)));
      expect(((await (await call('/deals')).json()) as unknown[]).length).toBe(3);
    } finally {
      s.stop();
    }
  });

  test('starts with the same 25 demo deals as --simulator unless told otherwise', async () => {
    const s = await simulate([]);
    try {
      const call = api(overHttp(s.url), await login(overHttp(s.url)));
      expect(((await (await call('/deals')).json()) as unknown[]).length).toBe(25);
    } finally {
      s.stop();
    }
  });

  test('with --users it lists usernames but never prints passwords or secrets', async () => {
    const file = join(dir(), 'users.json');
    writeFileSync(
      file,
      JSON.stringify({
        users: [
          {
            username: 'ana@corp.test',
            password: 'pw-Secret-1',
            clientId: 'corp',
            clientSecret: 'cs-Secret-2',
            kind: 'company',
            companyId: 9,
          },
        ],
      }),
    );
    const child = spawn(process.execPath, [cli, 'simulate', '--port', '0', '--users', file], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      let out = '';
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no output: ${out}`)), 15_000);
        child.stdout.on('data', (chunk: Buffer) => {
          out += chunk.toString();
          if (out.includes('ana@corp.test')) {
            clearTimeout(timer);
            resolve();
          }
        });
      });
      expect(out).not.toContain('pw-Secret-1');
      expect(out).not.toContain('cs-Secret-2');
    } finally {
      child.kill('SIGTERM');
    }
  });

  test('a users file that is not valid JSON, or not valid users, is refused without echoing any secret', async () => {
    const run = (file: string) =>
      new Promise<{ code: number | null; out: string }>((resolve) => {
        const child = spawn(process.execPath, [cli, 'simulate', '--port', '0', '--users', file], {
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let out = '';
        child.stdout.on('data', (d: Buffer) => (out += d.toString()));
        child.stderr.on('data', (d: Buffer) => (out += d.toString()));
        child.once('close', (code) => resolve({ code, out }));
      });
    const broken = join(dir(), 'broken-users.json');
    // An unquoted password: JSON.parse's message quotes the text around the error.
    writeFileSync(
      broken,
      '[{"username":"ana@corp.test","password":pwSecretValue1,"clientId":"corp","clientSecret":"csSecretValue2","kind":"company","companyId":9}]',
    );
    const bad = join(dir(), 'bad-users.json');
    writeFileSync(
      bad,
      JSON.stringify([
        {
          username: 'ana@corp.test',
          password: 'pwSecretValue1',
          clientId: 'corp',
          clientSecret: 'csSecretValue2',
          kind: 'company',
          companyId: 'nine',
        },
      ]),
    );
    for (const file of [broken, bad]) {
      const r = await run(file);
      expect(r.code).not.toBe(0);
      expect(r.out).toMatch(/users file/);
      expect(r.out).not.toMatch(/pwSecr|csSecr/);
    }
  });
});
