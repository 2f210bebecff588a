/**
 * The device's address for the bid request (docs/ad-server.md, "The device's address"): the peer that sent the
 * call, unless it is one of the caller's trusted proxies; then `X-Forwarded-For` read from the right, skipping
 * trusted proxies, the first other address being the client's. The header is read only behind a trusted proxy:
 * anyone can write it, so from any other peer it says nothing.
 */
import { BlockList, isIP } from 'node:net';
import { OptionsError, given } from '../common/index.js';

/** Named ranges a `trustedProxies` entry may use, as common web frameworks name them. */
const RANGES: Record<string, [string, number, 'ipv4' | 'ipv6'][]> = {
  loopback: [
    ['127.0.0.0', 8, 'ipv4'],
    ['::1', 128, 'ipv6'],
  ],
  linklocal: [
    ['169.254.0.0', 16, 'ipv4'],
    ['fe80::', 10, 'ipv6'],
  ],
  uniquelocal: [
    ['10.0.0.0', 8, 'ipv4'],
    ['172.16.0.0', 12, 'ipv4'],
    ['192.168.0.0', 16, 'ipv4'],
    ['fc00::', 7, 'ipv6'],
  ],
};

/** Proxy hops read from `X-Forwarded-For` at most: a longer chain is no real path, only a way to cost CPU. */
const MAX_HOPS = 32;

const lists = new WeakMap<readonly string[], BlockList>();

/**
 * The trusted proxies as a block list: addresses (`10.0.0.5`), CIDR blocks (`10.0.0.0/8`, `2001:db8::/32`) and
 * the names `loopback`, `linklocal`, `uniquelocal`. Read once per array; a bad entry throws an {@link OptionsError}
 * naming it (`trustedProxies[2]`).
 */
export function trustedProxyList(entries: readonly string[]): BlockList {
  let list = lists.get(entries);
  if (list) return list;
  if (!Array.isArray(entries)) throw new OptionsError('trustedProxies', `must be an array (got ${given(entries)})`);
  list = new BlockList();
  entries.forEach((entry: unknown, i) => {
    const field = `trustedProxies[${i}]`;
    if (typeof entry !== 'string') throw new OptionsError(field, `must be a string (got ${given(entry)})`);
    const named = RANGES[entry.trim().toLowerCase()];
    if (named) {
      for (const [net, prefix, type] of named) list.addSubnet(net, prefix, type);
      return;
    }
    const [address, bits, extra] = entry.trim().split('/');
    const type = isIP(address);
    const max = type === 6 ? 128 : 32;
    const prefix = bits === undefined ? max : /^\d{1,3}$/.test(bits) ? Number(bits) : NaN;
    if (!type || extra !== undefined || !(prefix >= 0 && prefix <= max)) {
      const what = 'must be an IP address, a CIDR block (10.0.0.0/8) or loopback, linklocal, uniquelocal';
      throw new OptionsError(field, `${what} (got ${given(entry)})`);
    }
    list.addSubnet(address, prefix, type === 6 ? 'ipv6' : 'ipv4');
  });
  lists.set(entries, list);
  return list;
}

/**
 * An address as a bid request carries it, or undefined when `value` is not one: an IPv4-mapped IPv6 address
 * (`::ffff:198.51.100.7`, what a dual-stack socket reports) as IPv4; an IPv6 zone (`%eth0`) removed.
 */
export function normaliseIp(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length > 64) return undefined;
  const v = value.trim().replace(/%[\w.-]+$/, '');
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(v);
  if (mapped && isIP(mapped[1]) === 4) return mapped[1];
  const type = isIP(v);
  return type === 4 ? v : type === 6 ? v.toLowerCase() : undefined;
}

/** One `X-Forwarded-For` entry: an address, maybe with a port (`198.51.100.7:4711`, `[2001:db8::1]:443`). */
function hop(entry: string): string | undefined {
  const e = entry.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(e);
  if (bracketed) return normaliseIp(bracketed[1]);
  const v4port = /^(\d{1,3}(?:\.\d{1,3}){3}):\d+$/.exec(e);
  return normaliseIp(v4port ? v4port[1] : e);
}

const typeOf = (address: string) => (address.includes(':') ? 'ipv6' : 'ipv4');

/**
 * The client's address: `peer` when it is not a trusted proxy (or there are none), else the first address of
 * `X-Forwarded-For`, from the right, that is not a trusted proxy (the leftmost when all are). `issue` hears of a
 * header that cannot be read that far; the client is then unknown, never the proxy's own address.
 */
export function clientAddress(
  peer: string | undefined,
  forwardedFor: string | undefined,
  trusted: BlockList | undefined,
  issue: (message: string) => void,
): string | undefined {
  if (peer === undefined || !trusted?.check(peer, typeOf(peer))) return peer;
  if (!forwardedFor) return peer;
  let end = forwardedFor.length;
  let last: string | undefined;
  for (let hops = 0; end > 0; hops++) {
    if (hops === MAX_HOPS) {
      issue(`more than ${MAX_HOPS} proxies; the client address is unknown`);
      return undefined;
    }
    const start = forwardedFor.lastIndexOf(',', end - 1);
    const entry = forwardedFor.slice(start + 1, end);
    end = start < 0 ? 0 : start;
    const address = hop(entry);
    if (address === undefined) {
      const shown = entry.trim().slice(0, 60);
      issue(`${JSON.stringify(shown)} is not an address; the client address is unknown`);
      return undefined;
    }
    if (!trusted.check(address, typeOf(address))) return address;
    last = address;
  }
  return last ?? peer;
}
