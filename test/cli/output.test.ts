// Every command's output reaches a slow or early-closing reader: the real binary against a simulator with 3,000 deals.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DealApiClient } from '../../src/deals/index.js';
import { createDealApiSimulator } from '../../src/simulator/index.js';
import { validDeal } from '../deals/fixtures.js';
import { rmSync } from 'node:fs';
import { Writable } from 'node:stream';
import { Output, OutputClosedError } from '../../src/cli/output.js';
import { eidkit, home, simulatorEnv, start, type Run } from './helpers.js';

const DEALS = 3_000;
const FORMULAS = [
  '=HYPERLINK("http://evil.test","click")',
  '+1+2',
  '-2+3',
  '@SUM(A1:A2)',
  // A live formula in Excel wherever the list separator is `;` (most of continental Europe).
  "Summer promo;=cmd|' /C calc'!A0",
];
const sim = createDealApiSimulator({ seed: { deals: DEALS - FORMULAS.length } });
let env: Record<string, string> = {};
let close = async () => {};

beforeAll(async () => {
  const listening = await sim.listen();
  close = listening.close;
  env = { ...simulatorEnv(sim, listening.url), EIDKIT_TOKEN_FILE: '/dev/null/none' };
  const client = new DealApiClient({
    baseUrl: env.EIDKIT_BASE_URL,
    authUrl: env.EIDKIT_AUTH_URL,
    audience: env.EIDKIT_AUDIENCE,
    credentials: {
      clientId: env.EIDKIT_CLIENT_ID,
      clientSecret: env.EIDKIT_CLIENT_SECRET,
      username: env.EIDKIT_USERNAME,
      password: env.EIDKIT_PASSWORD,
    },
  });
  for (const name of FORMULAS) await client.deals.create(validDeal({ name }) as never);
});
afterAll(async () => {
  await close();
  rmSync(home, { recursive: true, force: true });
});

/**
 * Runs the binary with a reader that reads nothing for `stallMs` (as jq, ssh or a slow disk may) then everything,
 * or (`headOne`) closes the pipe after the first line, as `| head -1` does.
 */
function readOutput(args: string[], { stallMs = 0, headOne = false } = {}): Promise<Run> {
  return new Promise((resolve) => {
    const child = start(args, env);
    child.stdin.end();
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const closed = new Promise<number | null>((done) => child.on('close', done));
    setTimeout(() => {
      child.stdout.setEncoding('utf8').on('data', (d: string) => {
        stdout += d;
        if (headOne && stdout.includes('\n')) child.stdout.destroy();
      });
      void closed.then((code) => resolve({ code, stdout: headOne ? stdout.split('\n')[0] : stdout, stderr }));
    }, stallMs);
  });
}

describe('eidkit writes all its output before it exits', () => {
  test('deals list --json into a reader that stalls a second: the JSON parses with every deal', async () => {
    const r = await readOutput(['deals', 'list', '--no-cache', '--json'], { stallMs: 1_000 });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toHaveLength(DEALS);
  });

  test('deals list --csv into a reader that stalls a second: a header and every row', async () => {
    const r = await readOutput(['deals', 'list', '--no-cache', '--csv'], { stallMs: 1_000 });
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\r\n');
    expect(lines.pop()).toBe('');
    expect(lines).toHaveLength(1 + DEALS);
  });

  test('deals list (table) into a reader that stalls a second: every line', async () => {
    const r = await readOutput(['deals', 'list', '--no-cache'], { stallMs: 1_000 });
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines.pop()).toBe('');
    expect(lines).toHaveLength(2 + DEALS);
  });

  test.each([
    ['deals list --json', ['deals', 'list', '--no-cache', '--json']],
    ['deals list', ['deals', 'list', '--no-cache']],
  ])('%s | head -1 ends quietly with status 141, no stack trace', async (_name, args) => {
    const r = await readOutput(args, { headOne: true });
    expect(r.stdout.length).toBeGreaterThan(0);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(141);
  });
});

describe('CSV from the CLI opens in a spreadsheet as data, never as formulas', () => {
  test('deals list --csv and deals get --csv write formula-like names as text', async () => {
    const list = await eidkit(
      [
        'deals',
        'list',
        '--no-cache',
        '--csv',
        '--columns',
        'id,name',
        '--sort-by',
        'id',
        '--desc',
        '--limit',
        String(FORMULAS.length),
      ],
      env,
    );
    expect(list.code).toBe(0);
    const names = list.stdout
      .trimEnd()
      .split('\r\n')
      .slice(1)
      .map((l) => l.slice(l.indexOf(',') + 1));
    expect(names.sort()).toEqual(
      [
        '"\'=HYPERLINK(""http://evil.test"",""click"")"',
        "'+1+2",
        "'-2+3",
        "'@SUM(A1:A2)",
        `"Summer promo;'=cmd|' /C calc'!A0"`,
      ].sort(),
    );
    const id = list.stdout.split('\r\n')[1].split(',')[0];
    const get = await eidkit(['deals', 'get', id, '--no-cache', '--csv', '--columns', 'name,price'], env);
    // The last one created: the name with a formula after its semicolon.
    expect(get.stdout.split('\r\n')[1]).toMatch(/^"Summer promo;'=cmd\|' \/C calc'!A0",/);
  });
});

describe('Output (src/cli/output.ts)', () => {
  /** A stream that takes one chunk every `ms`, with a small buffer, as a slow pipe does. */
  function slowStream(ms: number) {
    const received: string[] = [];
    const stream = new Writable({
      highWaterMark: 16,
      write(chunk, _enc, done) {
        setTimeout(() => {
          received.push(String(chunk));
          done();
        }, ms);
      },
    });
    return { stream, received };
  }

  test('write waits when the buffer is full, and flush resolves only once every chunk was taken', async () => {
    const { stream, received } = slowStream(5);
    const output = new Output(stream);
    let mostQueued = 0;
    for (let i = 0; i < 20; i++) {
      await output.write(`row ${i}\n`);
      mostQueued = Math.max(mostQueued, stream.writableLength);
    }
    expect(mostQueued).toBeLessThanOrEqual(16 + 'row 19\n'.length); // never more than the buffer and one chunk
    expect(received.length).toBeLessThan(20);
    await output.flush();
    expect(received).toHaveLength(20);
  });

  test('flush leaves no listener behind, however many times it runs', async () => {
    const { stream } = slowStream(0);
    const output = new Output(stream);
    const before = stream.listenerCount('error') + stream.listenerCount('close');
    for (let i = 0; i < 50; i++) {
      await output.write(`row ${i}\n`);
      await output.flush();
    }
    expect(stream.listenerCount('error') + stream.listenerCount('close')).toBe(before);
  });

  test('once the reader is gone, write rejects with OutputClosedError and flush does not hang', async () => {
    const { stream } = slowStream(1);
    const output = new Output(stream);
    await output.write('first\n');
    stream.destroy(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
    await new Promise((r) => setImmediate(r));
    await expect(output.write('second\n')).rejects.toBeInstanceOf(OutputClosedError);
    await output.flush();
    expect(output.closed).toBe(true);
  });
});
