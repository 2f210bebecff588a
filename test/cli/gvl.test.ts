// `eidkit gvl fetch`: the real built binary against a loopback HTTP server serving the synthetic snapshot.
import { once } from 'node:events';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createGvlLoader } from '../../src/adserver/index.js';
import { eidkit } from './helpers.js';

const text = readFileSync(new URL('../support/gvl/vendor-list-v150.json', import.meta.url), 'utf8');
/** A list whose vendor key holds a terminal escape sequence: the error names the key, escaped. */
const BAD = JSON.stringify({ ...JSON.parse(text), vendors: { 'x\u001b[31m': {} } });
let server: Server;
let origin = '';
const out = mkdtempSync(join(tmpdir(), 'eidkit-gvl-cli-'));
beforeAll(async () => {
  server = createServer((req, res) => {
    res.setHeader('connection', 'close');
    if (req.url === '/vendor-list.json') res.writeHead(200).end(text);
    else if (req.url === '/moved') res.writeHead(301, { location: '/vendor-list.json' }).end();
    else if (req.url === '/bad.json') res.writeHead(200).end(BAD);
    else if (req.url === '/slow.json') res.writeHead(200).write('{');
    else res.writeHead(404).end();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
  rmSync(out, { recursive: true, force: true });
});

describe('eidkit gvl fetch', () => {
  test('saves the list into a folder as the loader names it, and the loader starts from it', async () => {
    const dir = join(out, 'cache/');
    const r = await eidkit(['gvl', 'fetch', '--url', `${origin}/moved`, '--out', dir]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      `saved Global Vendor List version 150 (36 vendors, 2 deleted, updated 2026-11-19T16:05:25Z, ${Buffer.byteLength(text)} bytes) to ${join(dir, 'vendor-list-v150.json')}\n`,
    );
    expect(readdirSync(dir)).toEqual(['vendor-list-v150.json']);
    expect(readFileSync(join(dir, 'vendor-list-v150.json'), 'utf8')).toBe(text);
    const loader = createGvlLoader({ dir, fetchOnStart: false });
    expect(loader.latest()?.version).toBe(150);
    loader.close();
  });

  test('--json, and a file path as --out', async () => {
    const file = join(out, 'list.json');
    const r = await eidkit(['gvl', 'fetch', '--url', `${origin}/vendor-list.json`, '--out', file, '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ path: file, version: 150, vendors: 36, deleted: 2 });
    expect(readFileSync(file, 'utf8')).toBe(text);
  });

  test('failures end with the documented exit codes, one safe line on stderr, nothing written', async () => {
    const dir = join(out, 'none');
    const notFound = await eidkit(['gvl', 'fetch', '--url', `${origin}/missing.json`, '--out', dir]);
    expect([notFound.code, notFound.stderr]).toEqual([5, `eidkit: ${origin}/missing.json: HTTP 404\n`]);
    const bad = await eidkit(['gvl', 'fetch', '--url', `${origin}/bad.json`, '--out', dir]);
    expect(bad.code).toBe(3);
    expect(bad.stderr).toMatch(/^eidkit: .*not a Global Vendor List v3/);
    expect(bad.stderr).not.toContain('\u001b');
    const slow = await eidkit(['gvl', 'fetch', '--url', `${origin}/slow.json`, '--timeout', '300', '--out', dir]);
    expect([slow.code, slow.stderr]).toEqual([6, `eidkit: ${origin}/slow.json: no complete answer within 300 ms\n`]);
    const usage = await eidkit(['gvl', 'fetch', '--list-version', '0']);
    expect(usage.code).toBe(2);
    expect(() => readdirSync(dir)).toThrow();
  });
});
