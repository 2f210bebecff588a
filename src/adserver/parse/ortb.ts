/**
 * The body shapes beside eidkit's own: the Prebid.js adapter's ad units (`POST /prebid/v1`,
 * src/prebid/wire.ts) and OpenRTB-shaped requests (the video plugin, Prebid Server, another SSP) on any POST
 * endpoint. Like the rest of the parser they never throw: what is broken is dropped and named in `issues`.
 *
 * Where the eids of an OpenRTB body are read, first found wins: a top-level `eids` (eidkit's POST field), then
 * `user.eids` (OpenRTB 2.6), then `user.ext.eids` (2.5). When more than one is present the others are ignored
 * with an issue naming them, as OpenRTB 2.6 readers let `user.eids` win over `user.ext.eids`.
 * See docs/wire-format.md#post-ad-calls-the-eids-array.
 */
import { isInt32, isObject } from '../../core/index.js';
import { jsonWithin } from '../../core/eid.js';
import type { AdCallFormat, Collector } from './ad-call.js';
import { normaliseIp } from './client-ip.js';

/** True for a body shaped as an OpenRTB bid request: `imp` array, or a `user` / `regs` object. */
export function isOrtbBody(b: Record<string, unknown>): boolean {
  return Array.isArray(b.imp) || isObject(b.user) || isObject(b.regs);
}

/**
 * The object at `path`, or an empty one: absent (or null) says nothing, anything else that is no object is named in
 * `issues` and ignored, as every other malformed field is.
 */
function obj(col: Collector, path: string, v: unknown): Record<string, unknown> {
  if (isObject(v)) return v;
  if (v !== undefined && v !== null) col.issue(path, 'must be an object; ignored');
  return {};
}

/**
 * The Prebid adapter's fields that are not read but passed along as the adapter sent them (first-party data, the
 * supply chain, the auction's timeout): checked for their kind, so a broken body is named however little of it is
 * read.
 */
export function checkPrebidExtras(col: Collector, field: (name: string) => unknown): void {
  for (const k of ['site', 'user', 'schain']) obj(col, k, field(k));
  const tmax = field('tmax');
  if (tmax !== undefined && tmax !== null && !(isInt32(tmax) && tmax > 0))
    col.issue('tmax', 'must be a positive integer of milliseconds; ignored');
}

/** `[[w, h], …]` (or one `[w, h]`) of positive integers, else undefined with an issue. */
function sizesOf(col: Collector, path: string, v: unknown): [number, number][] | undefined {
  if (v === undefined) return undefined;
  const list = Array.isArray(v) && typeof v[0] === 'number' ? [v] : v;
  // Sizes are OpenRTB integers: within 32 bits, so that no bid request carries `1e+21`.
  const ok = (s: unknown): s is [number, number] =>
    Array.isArray(s) && s.length === 2 && s.every((n) => isInt32(n) && n > 0);
  if (Array.isArray(list) && list.length > 0 && list.length <= 64 && list.every(ok))
    return list.map((s) => [s[0], s[1]]);
  col.issue(path, 'must be a list of [width, height] sizes; ignored');
  return undefined;
}

/**
 * A floor `{ value, currency }` with a positive value and a 3-letter currency, else undefined with an issue. Without
 * a currency, `fallback`: USD for an OpenRTB imp (the OpenRTB default of `bidfloorcur`), the service's EUR for a
 * Prebid unit (the adapter asks Prebid's floors module in EUR).
 */
function floorOf(
  col: Collector,
  path: string,
  value: unknown,
  currency: unknown,
  fallback: 'USD' | 'EUR',
): AdCallFormat['floor'] {
  if (value === undefined || value === null) return undefined;
  if (
    typeof value === 'number' &&
    value > 0 &&
    Number.isFinite(value) &&
    (currency === undefined || (typeof currency === 'string' && /^[A-Z]{3}$/.test(currency)))
  ) {
    return { value, currency: currency ?? fallback };
  }
  col.issue(path, 'must be a positive price with a 3-letter currency; ignored');
  return undefined;
}

/**
 * A JSON object kept as sent (video parameters), when it is one and its JSON is within `maxTextLength` characters
 * and `maxExtDepth` levels: measured in a walk that stops at the first cap passed, so a 250 KB one is not walked
 * whole.
 */
function jsonObject(col: Collector, path: string, v: unknown): Record<string, unknown> | undefined {
  if (v === undefined) return undefined;
  const { maxTextLength, maxExtDepth } = col.limits;
  try {
    if (isObject(v) && jsonWithin(v, maxTextLength, maxExtDepth)) return v;
  } catch {
    // A cycle or a throwing getter: not JSON, reported below.
  }
  col.issue(path, `must be a JSON object up to ${maxTextLength} characters and ${maxExtDepth} levels; ignored`);
  return undefined;
}

/** Adds placements one by one, up to `maxFormats`; `one` returns the format or undefined (having said why). */
function eachPlacement(
  col: Collector,
  path: string,
  list: unknown,
  one: (v: Record<string, unknown>, path: string) => AdCallFormat | undefined,
): void {
  if (!Array.isArray(list)) {
    col.issue(path, 'must be an array');
    return;
  }
  const n = Math.min(list.length, col.limits.maxFormats);
  for (let i = 0; i < n; i++) {
    const p = `${path}[${i}]`;
    const v: unknown = list[i];
    if (!isObject(v)) col.issue(p, 'must be an object');
    else {
      const f = one(v, p);
      if (f) col.call.formats.push(f);
    }
  }
  if (list.length > n) col.issue(path, `more than ${col.limits.maxFormats} placements: ${list.length - n} dropped`);
}

/** Sets the optional fields that have a value, so absent ones have no key. */
function withOptional(f: AdCallFormat, extra: Partial<AdCallFormat>): AdCallFormat {
  for (const [k, v] of Object.entries(extra)) if (v !== undefined) (f as unknown as Record<string, unknown>)[k] = v;
  return f;
}

/** The fields of a `/prebid/v1` unit (src/prebid/wire.ts). */
const PREBID_UNIT_FIELDS = new Set([
  'bidId',
  'adUnitCode',
  'formatId',
  'siteId',
  'pageId',
  'gpid',
  'banner',
  'video',
  'floor',
]);
/** Unknown fields of one unit named one by one; the others are counted in one issue. */
const MAX_UNKNOWN_NAMED = 5;
/** The list named in the issue of an unknown unit field. */
const UNIT_FIELDS_TEXT = [...PREBID_UNIT_FIELDS].join(', ');

/** The Prebid adapter's `units` (src/prebid/wire.ts): one format per ad unit, named by Prebid's `bidId`. */
export function readPrebidUnits(col: Collector, units: unknown): void {
  eachPlacement(col, 'units', units, (u, p) => {
    // A field the adapter never sends is a sender's mistake (`sizes` for `banner`): named, not dropped in silence.
    let unknown = 0;
    for (const key in u) {
      if (!Object.hasOwn(u, key) || PREBID_UNIT_FIELDS.has(key)) continue;
      if (++unknown > MAX_UNKNOWN_NAMED) continue;
      const name = key.length > 64 ? `${key.slice(0, 64)}…` : key;
      col.issue(`${p}.${name}`, `unknown field; ignored (a unit has ${UNIT_FIELDS_TEXT})`);
    }
    if (unknown > MAX_UNKNOWN_NAMED) col.issue(p, `${unknown - MAX_UNKNOWN_NAMED} more unknown fields ignored`);
    const id = col.id(`${p}.formatId`, u.formatId);
    if (id === undefined) {
      if (u.formatId === undefined) col.issue(`${p}.formatId`, 'missing');
      return undefined;
    }
    const floor = obj(col, `${p}.floor`, u.floor);
    return withOptional(
      { id },
      {
        tagId: col.text(`${p}.adUnitCode`, u.adUnitCode, 256),
        impId: col.text(`${p}.bidId`, u.bidId, 256),
        gpid: col.text(`${p}.gpid`, u.gpid, 256),
        sizes: sizesOf(col, `${p}.banner`, u.banner),
        video: jsonObject(col, `${p}.video`, u.video),
        floor: floorOf(col, `${p}.floor`, floor.value, floor.currency, 'EUR'),
      },
    );
  });
}

/**
 * One OpenRTB imp: format id from `ext.formatId` or a numeric `tagid` (else 0), sizes from `banner.format` / `w`,`h`.
 */
function readImp(col: Collector, imp: Record<string, unknown>, p: string): AdCallFormat {
  const ext = obj(col, `${p}.ext`, imp.ext);
  const tagid = col.text(`${p}.tagid`, imp.tagid, 256);
  const fromExt = ext.formatId ?? obj(col, `${p}.ext.eidkit`, ext.eidkit).formatId;
  const id =
    (fromExt !== undefined
      ? col.id(`${p}.ext.formatId`, fromExt)
      : tagid && /^\d{1,10}$/.test(tagid)
        ? col.id(`${p}.tagid`, tagid)
        : undefined) ?? 0;
  const banner = obj(col, `${p}.banner`, imp.banner);
  const format = Array.isArray(banner.format)
    ? banner.format.map((f: unknown) => (isObject(f) ? [f.w, f.h] : f))
    : banner.w !== undefined
      ? [banner.w, banner.h]
      : undefined;
  return withOptional(
    { id },
    {
      tagId: tagid,
      impId: col.text(`${p}.id`, imp.id, 256),
      gpid: col.text(`${p}.ext.gpid`, ext.gpid, 256),
      sizes: isObject(imp.banner) ? sizesOf(col, `${p}.banner.format`, format) : undefined,
      video: jsonObject(col, `${p}.video`, imp.video),
      floor: floorOf(col, `${p}.bidfloor`, imp.bidfloor, imp.bidfloorcur, 'USD'),
    },
  );
}

/**
 * Reads an OpenRTB-shaped bid request (2.5 or 2.6): network from `ext.networkId` or `site.publisher.id`, site from
 * `ext.siteId` or `site.id`, page from `ext.pageId` or `site.ext.pageId`, keywords, the page URL, the user agent
 * of `device.ua`, consent from `regs` / `user` (2.6 fields first, then their 2.5 places in `ext`), `imp[]` as
 * formats, and the eids (see the file comment for which place wins).
 */
export function readOrtbBody(col: Collector, b: Record<string, unknown>, fresh: boolean): void {
  const call = col.call;
  const prefix = b.site === undefined && b.app !== undefined ? 'app' : 'site';
  const ext = obj(col, 'ext', b.ext);
  const site = obj(col, prefix, b.site ?? b.app);
  const siteExt = obj(col, `${prefix}.ext`, site.ext);
  const user = obj(col, 'user', b.user);
  const userExt = obj(col, 'user.ext', user.ext);
  const regs = obj(col, 'regs', b.regs);
  const regsExt = obj(col, 'regs.ext', regs.ext);
  col.set(
    'networkId',
    ext.networkId !== undefined
      ? col.id('ext.networkId', ext.networkId)
      : col.id(`${prefix}.publisher.id`, obj(col, `${prefix}.publisher`, site.publisher).id),
  );
  col.set('siteId', ext.siteId !== undefined ? col.id('ext.siteId', ext.siteId) : col.id(`${prefix}.id`, site.id));
  col.set(
    'pageId',
    ext.pageId !== undefined ? col.text('ext.pageId', ext.pageId) : col.text(`${prefix}.ext.pageId`, siteExt.pageId),
  );
  col.set('target', col.impersonal(`${prefix}.keywords`, site.keywords));
  const page = col.text(`${prefix}.page`, site.page);
  if (page !== undefined) call.referer = page;
  // The request came from a server: the user's browser is the one in `device`, not the caller's User-Agent.
  const device = obj(col, 'device', b.device);
  const ua = col.text('device.ua', device.ua);
  if (ua !== undefined) call.userAgent = ua;
  // Its address too: the peer of this request is the relaying server, not the device.
  for (const name of ['ip', 'ipv6'] as const) {
    if (device[name] === undefined || call.ip !== undefined) continue;
    const ip = normaliseIp(device[name]);
    if (ip === undefined) col.issue(`device.${name}`, 'not an IP address; ignored');
    else call.ip = ip;
  }
  if (b.imp !== undefined) eachPlacement(col, 'imp', b.imp, (imp, p) => readImp(col, imp, p));
  const pick = (a: unknown, aName: string, c: unknown, cName: string): [unknown, string] =>
    a !== undefined ? [a, aName] : [c, cName];
  const [gdpr, gdprName] = pick(regs.gdpr, 'regs.gdpr', regsExt.gdpr, 'regs.ext.gdpr');
  const [tcf, tcfName] = pick(user.consent, 'user.consent', userExt.consent, 'user.ext.consent');
  const [gpp, gppName] = pick(regs.gpp, 'regs.gpp', regsExt.gpp, 'regs.ext.gpp');
  const [sid, sidName] = pick(regs.gpp_sid, 'regs.gpp_sid', regsExt.gpp_sid, 'regs.ext.gpp_sid');
  const [usp, uspName] = pick(regs.us_privacy, 'regs.us_privacy', regsExt.us_privacy, 'regs.ext.us_privacy');
  col.consent(gdpr, tcf, gpp, sid, usp, [gdprName, tcfName, gppName, sidName, uspName]);
  const [gpc, gpcName] = pick(regs.gpc, 'regs.gpc', regsExt.gpc, 'regs.ext.gpc');
  col.gpc(gpcName, gpc);
  const places: [string, unknown][] = [
    ['eids', b.eids],
    ['user.eids', user.eids],
    ['user.ext.eids', userExt.eids],
  ];
  const present = places.filter(([, v]) => v !== undefined && v !== null);
  if (!present.length) return;
  const [winner, eids] = present[0];
  for (const [name] of present.slice(1)) col.issue(name, `ignored: ${winner} is present and wins`);
  if (typeof eids === 'string') col.eidsParam(eids);
  else col.eids(eids, fresh);
  // Issues of the eids validation are named from `eids[…]`: say where they really were.
  if (winner !== 'eids')
    for (const i of call.issues) if (i.path === 'eids' || i.path.startsWith('eids[')) i.path = winner + i.path.slice(4);
}
