/**
 * What docs/simulator.md tells a user to do, done: `eidkit simulate`, Stoplight Prism's validating proxy in front of
 * it (`prism proxy <document> <simulator> --errors`), and the export lines `simulate` prints, pointed at the proxy.
 * Every deals command then works through the proxy: it refuses none of the CLI's requests and finds no answer off
 * the document (its own 404 / 422 / 500 would fail a command).
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { eidkit, home, start } from '../cli/helpers.js';
import { validDeal } from '../deals/fixtures.js';
import { startPrism, type PrismProxy } from './prism.js';

let simulator: ChildProcessWithoutNullStreams;
let proxy: PrismProxy;
let env: Record<string, string>;

beforeAll(async () => {
  simulator = start(['simulate', '--port', '0', '--seed-deals', '25']);
  let printed = '';
  await new Promise<void>((done, fail) => {
    simulator.stdout.on('data', (d) => (printed += d) && /export EIDKIT_PASSWORD=.*\n/.test(printed) && done());
    simulator.once('exit', (code) => fail(new Error(`simulate exited ${code}`)));
  });
  const exported = Object.fromEntries(
    [...printed.matchAll(/^export (EIDKIT_\w+)=(.*)$/gm)].map(([, k, v]) => [k, v.replace(/^'(.*)'$/, '$1')]),
  );
  const origin = exported.EIDKIT_AUTH_URL;
  const document = (await (await fetch(`${origin}/openapi.json`)).json()) as Record<string, unknown>;
  proxy = await startPrism(document, origin);
  // The export lines as printed, with the proxy's origin in place of the simulator's.
  env = Object.fromEntries(Object.entries(exported).map(([k, v]) => [k, v.replace(origin, proxy.url)]));
}, 90_000);

afterAll(async () => {
  await proxy?.close();
  simulator?.kill('SIGTERM');
});

/**
 * Runs a deals command through the proxy; it must succeed, with no error on stderr (progress lines are fine). The
 * token is cached between commands, as for a user: the simulator, like the service, allows 10 logins per 5 minutes.
 */
async function ok(...args: string[]): Promise<string> {
  const r = await eidkit(['deals', ...args], env);
  const errors = r.stderr.split('\n').filter((l) => l.startsWith('eidkit:'));
  expect({ args, code: r.code, errors }).toEqual({ args, code: 0, errors: [] });
  return r.stdout;
}

test('through Prism: list, count and get read every deal the simulator has, prices of two decimals included', async () => {
  const listed = JSON.parse(await ok('list', '--json')) as { id: number; price: number }[];
  expect(listed).toHaveLength(25);
  // Two-decimal prices that a floating-point multipleOf 0.01 refuses (1.15 / 0.01 = 114.99999999999999).
  expect(listed.some((d) => !Number.isInteger(d.price / 0.01))).toBe(true);
  expect(JSON.parse(await ok('count', '--json')).total).toBe(25);
  expect(JSON.parse(await ok('get', String(listed[0].id), '--json')).id).toBe(listed[0].id);
});

test('through Prism: update (the whole deal PUT back, id and dealId included), pause, resume', async () => {
  const [first] = JSON.parse(await ok('list', '--json')) as { id: number }[];
  await ok('update', String(first.id), '--set', 'price=1.15', '--set', 'name="Through the proxy"');
  const after = JSON.parse(await ok('get', String(first.id), '--json')) as { price: number; name: string };
  expect(after).toMatchObject({ price: 1.15, name: 'Through the proxy' });
  await ok('pause', String(first.id));
  await ok('resume', String(first.id));
});

test('through Prism: create, attach and detach a domain list, delete', async () => {
  const file = join(home, 'prism-deal.json');
  writeFileSync(file, JSON.stringify(validDeal({ beginDate: '2031-03-01', endDate: '2031-05-31T23:59:59Z' })));
  const created = JSON.parse(await ok('create', '--file', file, '--json')) as { id: number };
  expect(created.id).toBeGreaterThan(0);
  await ok('domainlist', 'attach', String(created.id), '1');
  await ok('domainlist', 'detach', String(created.id), '1');
  await ok('delete', String(created.id), '--yes');
});
