// The device's address on a call and in its bid requests: the socket's peer on Node, an OpenRTB body's device.ip,
// or the client behind trusted proxies (X-Forwarded-For only from them), over a real HTTP server.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildBidRequest, OptionsError, parseAdCall, parseIncomingMessage } from '../../../src/adserver/index.js';
import type { AdCall, ParseOptions } from '../../../src/adserver/index.js';

let server: Server;
let base: string;
/** The options the next request is parsed with, and what it was parsed to. */
let options: ParseOptions = {};
let seen: AdCall | undefined;

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res) => {
    void parseIncomingMessage(req, options).then((call) => {
      seen = call;
      res.end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

/** Sends one ad call to the server (from 127.0.0.1) and returns the parsed call. */
async function call(opts: ParseOptions, headers: Record<string, string> = {}, body?: unknown): Promise<AdCall> {
  options = opts;
  seen = undefined;
  await fetch(body === undefined ? `${base}/ac?nwid=7` : `${base}/openrtb2/auction`, {
    method: body === undefined ? 'GET' : 'POST',
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return seen!;
}

describe('the device address of a call received on Node', () => {
  test('is the socket peer with no options at all, and reaches the bid request as device.ip', async () => {
    const c = await call({});
    expect(c.ip).toBe('127.0.0.1');
    expect(buildBidRequest(c, { id: 'dsp-a' }).device).toMatchObject({ ip: '127.0.0.1' });
  });

  test('ignores X-Forwarded-For from a peer that is not a trusted proxy', async () => {
    expect((await call({}, { 'x-forwarded-for': '203.0.113.9' })).ip).toBe('127.0.0.1');
    expect((await call({ trustedProxies: ['10.0.0.0/8'] }, { 'x-forwarded-for': '203.0.113.9' })).ip).toBe('127.0.0.1');
  });

  test('behind trusted proxies, is the first address from the right that is not one of them', async () => {
    const trustedProxies = ['loopback', '10.0.0.0/8'];
    const xff = { 'x-forwarded-for': '198.51.100.1, 203.0.113.9, 10.1.2.3' };
    const c = await call({ trustedProxies }, xff);
    expect(c.ip).toBe('203.0.113.9');
    expect(c.issues).toEqual([]);
    expect(buildBidRequest(c, { id: 'dsp-a' }).device).toMatchObject({ ip: '203.0.113.9' });
    // Ports and IPv6 in brackets are read; an IPv6 client goes to device.ipv6.
    const v6 = await call({ trustedProxies }, { 'x-forwarded-for': '[2001:DB8::7]:443, 10.0.0.1:8080' });
    expect(v6.ip).toBe('2001:db8::7');
    expect(buildBidRequest(v6, { id: 'dsp-a' }).device).toMatchObject({ ipv6: '2001:db8::7' });
    // Every hop trusted: the leftmost is the client.
    expect((await call({ trustedProxies }, { 'x-forwarded-for': '10.9.9.9, 10.0.0.1' })).ip).toBe('10.9.9.9');
  });

  test('is unknown, with an issue, when the chain behind a trusted proxy cannot be read', async () => {
    const garbage = await call({ trustedProxies: ['loopback'] }, { 'x-forwarded-for': '203.0.113.9, unknown' });
    expect(garbage.ip).toBeUndefined();
    expect(garbage.issues).toEqual([
      { path: 'x-forwarded-for', message: '"unknown" is not an address; the client address is unknown' },
    ]);
    const long = await call(
      { trustedProxies: ['loopback', '10.0.0.0/8'] },
      { 'x-forwarded-for': Array(40).fill('10.0.0.1').join(', ') },
    );
    expect(long.ip).toBeUndefined();
    expect(long.issues[0].message).toMatch(/more than 32 proxies/);
  });

  test("an OpenRTB body's device.ip (a server relaying the user's request) wins over the relaying peer", async () => {
    const body = { imp: [{ id: '1', tagid: '3' }], device: { ua: 'UA/1', ip: '198.51.100.7' } };
    const c = await call({}, {}, body);
    expect(c.ip).toBe('198.51.100.7');
    expect(buildBidRequest(c, { id: 'dsp-a' }).device).toEqual({ ua: 'UA/1', ip: '198.51.100.7' });
    const v6 = await call({}, {}, { ...body, device: { ipv6: '2001:db8::1' } });
    expect(v6.ip).toBe('2001:db8::1');
    const bad = await call({}, {}, { ...body, device: { ip: 'not-an-ip' } });
    expect(bad.ip).toBe('127.0.0.1');
    expect(bad.issues).toContainEqual({ path: 'device.ip', message: 'not an IP address; ignored' });
  });
});

describe('addresses and options', () => {
  test('an IPv4-mapped peer (a dual-stack socket) is sent as IPv4; a peer that is no address is none', () => {
    expect(parseAdCall({ url: '/ac?nwid=1' }, { ip: '::ffff:198.51.100.7' }).ip).toBe('198.51.100.7');
    expect(parseAdCall({ url: '/ac?nwid=1' }, { ip: 'localhost' }).ip).toBeUndefined();
    expect(parseAdCall({ url: '/ac?nwid=1', headers: { 'x-forwarded-for': '1.2.3.4' } }).ip).toBeUndefined();
  });

  test('a trusted proxy that is no address, block or known name throws an OptionsError naming it', () => {
    const bad = (trustedProxies: unknown[]) => () =>
      parseAdCall({ url: '/ac' }, { ip: '10.0.0.1', trustedProxies: trustedProxies as string[] });
    expect(bad(['10.0.0.0/8', 'proxy.example'])).toThrow(OptionsError);
    expect(bad(['10.0.0.0/8', 'proxy.example'])).toThrow(/^trustedProxies\[1\] must be an IP address/);
    expect(bad(['10.0.0.0/33'])).toThrow(/trustedProxies\[0\]/);
    expect(bad([42])).toThrow(/trustedProxies\[0\] must be a string/);
    expect(bad(['2001:db8::/32', '192.0.2.1', 'uniquelocal'])).not.toThrow();
  });
});
