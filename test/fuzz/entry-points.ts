// Every public parse entry point the fuzz suite drives, each as: `prepare` (untimed: a fresh forwarding policy, a
// request object), `run` (timed: the entry point itself), `check` (the invariants its output keeps) and its CPU
// budget. Inputs are plain JSON (test/fuzz/arbitraries.ts), so the corpus replays them exactly.
import { IncomingMessage } from 'node:http';
import { isIP, Socket } from 'node:net';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { Command } from 'commander';
import { expect } from 'vitest';
import {
  bidRequestsJson,
  buildBidRequest,
  createForwardingPolicy,
  DEFAULT_LIMITS,
  explainForwarding,
  parseAdCall,
  parseAdCallRequest,
  parseIncomingMessage,
} from '../../src/adserver/index.js';
import type {
  AdCall,
  AdCallInput,
  DemandPartner,
  ForwardingPolicy,
  ForwardingPolicyConfig,
  OrtbBidRequest,
} from '../../src/adserver/index.js';
import { registerDecodeCommand } from '../../src/cli/decode.js';
import { runCli } from '../../src/cli/output.js';
import { createDealApiSimulator, passwordRealmForm, DEMO_USERS } from '../../src/simulator/index.js';
import type { DealApiSimulator } from '../../src/simulator/index.js';
import { composeTag, createTagApp, MODULES, parseNetworksConfig } from '../../src/operator/index.js';
import { findEmail, hasEmail, looksPersonal, scrubUrl, unescapeAny } from '../../src/core/index.js';
import { EMAIL_IN } from '../../src/core/pii.js';
import { pageUrlRules, scrubWith } from '../../src/adserver/parse/index.js';
import type { RequestInput, UrlInput } from './arbitraries.js';

/** The caps every parsed call keeps (docs/ad-server.md "Caps"). */
const L = DEFAULT_LIMITS;
/** Issues kept per call: the first `maxIssues` and one that counts the rest. */
export const MAX_ISSUES = L.maxIssues + 1;
const MAX_INT32 = 2 ** 31 - 1;
/** The proxies the fuzzed server trusts: the peer (192.0.2.1) is one of them. */
const TRUSTED_PROXIES = ['192.0.2.0/24', 'uniquelocal', 'loopback'];
/**
 * Longest issue path and message: an issue names a field and may quote a value it names (an eid's source, within
 * `maxIdLength`), never more of the input.
 */
const MAX_ISSUE_PATH = 256;
const MAX_ISSUE_MESSAGE = L.maxIdLength + 256;

/** The demand partners of the forwarding cases: GVL ids present, absent, the largest, and a DMP. */
export const PARTNERS: DemandPartner[] = [
  { id: 'dsp-a', gvlVendorId: 45 },
  { id: 'dsp-b', gvlVendorId: 755, openrtb: '2.5' },
  { id: 'dsp-c', openrtb: 'both' },
  { id: 'dsp-d', gvlVendorId: 65_535 },
  { id: 'dmp', kind: 'dmp', preferredProvider: 'id5-sync.com', gvlVendorId: 131 },
];

/** The forwarding policy of the cases: rules on provenance, consent enforced (the default), one exempt source. */
export const POLICY_CONFIG: ForwardingPolicyConfig = {
  permissions: [
    { source: 'id5-sync.com', partners: ['dsp-a', 'dmp'] },
    { source: 'uidapi.com', inserter: 'pub.example', partners: '*' },
    { source: 'liveramp.com', matcher: 'id5-sync.com', mm: 3, partners: ['dsp-b'] },
  ],
  consent: { allowSources: ['pubcid.org'] },
};

/** A fresh policy (an empty consent cache): each case pays for decoding its strings. */
export const newPolicy = (): ForwardingPolicy => createForwardingPolicy(POLICY_CONFIG);

const size = (input: unknown) => JSON.stringify(input)?.length ?? 0;

/**
 * The CPU budget of one fuzz case: 25 ms plus 0.1 ms per KB of input. Far above a healthy call (tens of µs) and
 * far below a bomb (seconds); the strict budgets (1 ms per GET, 2× JSON.parse per POST) are measured by
 * test/fuzz/acceptance.test.ts on the worst cases.
 */
export const caseBudget = (input: unknown) => 25 + size(input) / 10_240;

/** The input of parseAdCall for a request (a parsed object body stays an object). */
export const adCallInput = (i: RequestInput): AdCallInput => ({
  url: i.url,
  method: i.method,
  headers: i.headers,
  body: bodyOf(i.body, true),
});

export function bodyOf(body: RequestInput['body'], parsedObjects: boolean): AdCallInput['body'] {
  if (body === undefined || typeof body === 'string') return body;
  if ('base64' in body) return new Uint8Array(Buffer.from(body.base64, 'base64'));
  return parsedObjects ? (body.json as Record<string, unknown>) : JSON.stringify(body.json);
}

function bodyBytes(body: RequestInput['body']): Buffer | undefined {
  const b = bodyOf(body, false);
  if (b === undefined || b === null) return undefined;
  return typeof b === 'string' ? Buffer.from(b) : Buffer.from(b as Uint8Array);
}

function chunks(bytes: Buffer, size = 65_536): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += Math.max(1, size)) out.push(bytes.subarray(i, i + Math.max(1, size)));
  return out;
}

const strings = (v: unknown, out: string[] = [], depth = 0): string[] => {
  if (typeof v === 'string') out.push(v);
  else if (v && typeof v === 'object' && depth < 64) for (const x of Object.values(v)) strings(x, out, depth + 1);
  return out;
};

/** The pieces of a URL, as scrubUrl cuts it, that still hold an email (core/pii.ts); none after a scrub. */
export const piecesWithEmail = (url: string): string[] =>
  url.split(/[/?#&;=]/).filter((p) => EMAIL_IN.test(unescapeAny(p)));

/** The invariants of a parsed call: every field within its cap, numbers OpenRTB integers, issues capped and short. */
export function checkCall(call: AdCall): void {
  expect(call).toBeTypeOf('object');
  if (call.referer !== undefined) expect(piecesWithEmail(call.referer), 'an email in the page URL').toEqual([]);
  if (call.ip !== undefined) expect(isIP(call.ip), `ip ${call.ip.slice(0, 80)}`).not.toBe(0);
  expect(['ac', 'genericpost', 'call', 'prebid', 'openrtb', 'unknown']).toContain(call.endpoint);
  expect(call.issues.length, 'issues per call').toBeLessThanOrEqual(MAX_ISSUES);
  for (const i of call.issues) {
    expect(i.path.length, `issue path ${i.path.slice(0, 80)}`).toBeLessThanOrEqual(MAX_ISSUE_PATH);
    expect(i.message.length, `issue message ${i.message.slice(0, 80)}`).toBeLessThanOrEqual(MAX_ISSUE_MESSAGE);
  }
  // Everything kept is serialisable (to log it, to forward it).
  expect(() => JSON.stringify(call)).not.toThrow();
  for (const k of ['networkId', 'siteId'] as const) {
    if (call[k] !== undefined) expect(Number.isInteger(call[k]) && call[k] > 0 && call[k] <= MAX_INT32, k).toBe(true);
  }
  if (call.timestamp !== undefined) expect(Number.isSafeInteger(call.timestamp)).toBe(true);
  for (const k of ['pageId', 'target', 'userAgent', 'referer'] as const) {
    if (call[k] !== undefined) expect(call[k].length, k).toBeLessThanOrEqual(L.maxTextLength);
  }
  for (const k of ['uid', 'pid'] as const) expect(call[k]?.length ?? 0, k).toBeLessThanOrEqual(L.maxUserIdLength);
  expect(call.formats.length, 'formats').toBeLessThanOrEqual(L.maxFormats + 1);
  for (const s of strings(call.formats)) expect(s.length, 'format field').toBeLessThanOrEqual(L.maxTextLength);
  const c = call.consent;
  for (const k of ['gdprConsent', 'gpp', 'addtlConsent'] as const) {
    expect(c[k]?.length ?? 0, k).toBeLessThanOrEqual(L.maxTextLength);
  }
  if (c.usPrivacy !== undefined) expect(c.usPrivacy.length).toBeLessThanOrEqual(16);
  if (c.gppSid !== undefined) expect(c.gppSid.length).toBeLessThanOrEqual(64);
  expect(call.eids.length, 'eids').toBeLessThanOrEqual(L.maxEids);
  const extCap = L.maxExtLength;
  for (const e of call.eids) {
    expect(e.source.length, 'source').toBeLessThanOrEqual(L.maxIdLength);
    expect(e.uids.length, 'uids').toBeLessThanOrEqual(L.maxUids);
    for (const k of ['inserter', 'matcher'] as const) expect(e[k]?.length ?? 0, k).toBeLessThanOrEqual(L.maxIdLength);
    // OpenRTB integers are 32-bit: a larger one reaches a bid request as `1e+21`, which strict decoders refuse.
    if (e.mm !== undefined) expect(Number.isInteger(e.mm) && e.mm >= 0 && e.mm <= MAX_INT32, `mm ${e.mm}`).toBe(true);
    if (e.ext !== undefined) expect(JSON.stringify(e.ext).length, 'eid ext').toBeLessThanOrEqual(extCap);
    for (const u of e.uids) {
      expect(u.id.length, 'uid id').toBeLessThanOrEqual(L.maxIdLength);
      const atype = u.atype;
      const int32 = atype === undefined || (Number.isInteger(atype) && atype >= -MAX_INT32 - 1 && atype <= MAX_INT32);
      expect(int32, `atype ${atype}`).toBe(true);
      if (u.ext !== undefined) expect(JSON.stringify(u.ext).length, 'uid ext').toBeLessThanOrEqual(extCap);
    }
  }
}

/** What a forwarding case returns: the call, one bid request per partner, and the explanation. */
interface Forwarded {
  call: AdCall;
  requests: OrtbBidRequest[];
  explanation: ReturnType<typeof explainForwarding>;
}

function checkForwarded({ call, requests, explanation }: Forwarded): void {
  checkCall(call);
  const json = bidRequestsJson(requests);
  expect(json).toHaveLength(PARTNERS.length);
  // OpenRTB integers are written as integers: no `1e+21` in any bid request.
  for (const text of json) expect(text).not.toMatch(/"(atype|mm)":-?\d+(\.\d+)?e/i);
  explanation.partners.forEach((p, i) => {
    expect(p.kept.length + p.removed.length).toBe(call.eids.length);
    const r = requests[i] as { user?: { eids?: unknown[]; ext?: { eids?: unknown[] } } };
    const sent = r.user?.eids ?? r.user?.ext?.eids ?? [];
    expect(sent.length, `${p.partner} receives what explainForwarding says`).toBe(p.kept.length);
  });
}

let partnersFile: string | undefined;
const partnersPath = () => {
  if (!partnersFile) {
    partnersFile = join(mkdtempSync(join(tmpdir(), 'eidkit-fuzz-')), 'partners.json');
    const permissions = [{ source: 'id5-sync.com', partners: ['dsp-a'] }];
    writeFileSync(partnersFile, JSON.stringify({ partners: PARTNERS, permissions }));
  }
  return partnersFile;
};

/** What `eidkit decode` printed: stdout, stderr, the exit code. */
interface CliRun {
  stdout: string;
  stderr: string;
  code: number;
}

/** Runs `eidkit decode <args>` in this process through the CLI's own runner, capturing what it writes. */
async function runDecode(args: string[]): Promise<CliRun> {
  const program = new Command('eidkit').exitOverride();
  registerDecodeCommand(program);
  const out: string[] = [];
  const err: string[] = [];
  const capture = (sink: string[]) =>
    ((chunk: string | Uint8Array, enc?: unknown, cb?: unknown) => {
      sink.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString());
      const done = typeof enc === 'function' ? enc : cb;
      if (typeof done === 'function') queueMicrotask(done as () => void);
      return true;
    }) as typeof process.stdout.write;
  const [w1, w2] = [process.stdout.write, process.stderr.write];
  process.stdout.write = capture(out);
  process.stderr.write = capture(err);
  try {
    const code = await runCli(program, ['node', 'eidkit', 'decode', ...args]);
    return { stdout: out.join(''), stderr: err.join(''), code };
  } finally {
    process.stdout.write = w1;
    process.stderr.write = w2;
    process.exitCode = undefined;
  }
}

/**
 * What must never reach a terminal raw: any control but the newline (C0, DEL, C1), format characters (bidi, zero
 * width, TAG characters), default-ignorable code points, line and paragraph separators, lone surrogates.
 */
const RAW_CONTROL = /(?!\n)[\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}\p{Zl}\p{Zp}\p{Cs}]/u;

/** The simulator of the simulator cases, with a user token (created on first use). */
let simulator: { sim: DealApiSimulator; token: string; access: string } | undefined;
async function sim() {
  if (simulator) return simulator;
  const s = createDealApiSimulator({ seed: { deals: 30, seed: 7 }, authLimit: { attempts: 1_000_000 } });
  const t = await s.fetch('/oauth/token', { method: 'POST', body: passwordRealmForm(DEMO_USERS[0]) });
  const access = ((await t.json()) as { access_token: string }).access_token;
  const token = await (await s.fetch('/authorize', { headers: { authorization: `Bearer ${access}` } })).text();
  return (simulator = { sim: s, token, access });
}

/** A request to the simulator: method, path with query, headers, body, and which token it carries. */
export interface SimulatorInput {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
  auth: 'user' | 'access' | 'none' | 'garbage';
}

/** A request to the tag server. */
export interface TagInput {
  method: string;
  path: string;
  headers: Record<string, string>;
}

const tagConfig = parseNetworksConfig({
  networks: { '4321': { modules: [...MODULES] }, '2345': { modules: ['prebid'] } },
});
let tagApp: ReturnType<typeof createTagApp> | undefined;

/** A response reduced to what the checks need. */
interface Answer {
  status: number;
  headers: Headers;
  body: Buffer;
  /** Set when the input cannot be sent at all (a URL or header a client cannot build): nothing to check. */
  unsendable?: string;
}

async function answer(make: () => Promise<Response>): Promise<Answer> {
  let res: Response;
  try {
    res = await make();
  } catch (e) {
    if (!(e instanceof TypeError)) throw e;
    return { status: 0, headers: new Headers(), body: Buffer.alloc(0), unsendable: e.message };
  }
  return { status: res.status, headers: res.headers, body: Buffer.from(await res.arrayBuffer()) };
}

/** One entry point as the harness drives it. */
export interface EntryPoint<I, C, O> {
  prepare?(input: I): C | Promise<C>;
  run(input: I, ctx: C): O | Promise<O>;
  check(input: I, output: O): void;
  budgetMs(input: I): number;
}

const entry = <I, C, O>(e: EntryPoint<I, C, O>) => e;

/** What the email detectors of core/pii.ts make of one text. */
interface Detected {
  scrubbed: string;
  found: string | undefined;
  has: boolean;
  personal: boolean;
}

const HASH_MODE = pageUrlRules({ emails: 'hash', emailParams: ['email', 'e'] });

/** Every entry point the suite drives, by name (the corpus files name them). */
export const ENTRY_POINTS = {
  emailDetection: entry({
    run: (i: UrlInput): Detected => ({
      scrubbed: scrubUrl(i.url),
      found: findEmail(i.url),
      has: hasEmail(i.url),
      personal: looksPersonal(i.url),
    }),
    check: (i, d: Detected) => {
      expect(piecesWithEmail(d.scrubbed)).toEqual([]);
      expect(d.scrubbed.length).toBeLessThanOrEqual(i.url.length);
      if (!piecesWithEmail(i.url).length) expect(d.scrubbed).toBe(i.url);
      if (d.found !== undefined) expect(d.found).toContain('@');
      if (d.has) expect(d.personal).toBe(true);
    },
    // Four detectors read the whole text (five passes with looksPersonal's own hasEmail): twice the per-KB share.
    budgetMs: (i) => 25 + size(i) / 5_120,
  }),
  pageUrl: entry({
    run: (i: UrlInput) => scrubWith(i.url, i.mode === 'hash' ? HASH_MODE : pageUrlRules(undefined)),
    check: (i: UrlInput, out: string) => {
      expect(piecesWithEmail(out)).toEqual([]);
      // Hashing puts 64 hex digits where an email was, so it may lengthen the URL; stripping never does.
      if (i.mode !== 'hash') expect(out.length).toBeLessThanOrEqual(i.url.length);
    },
    budgetMs: caseBudget,
  }),
  parseAdCall: entry({
    run: (i: RequestInput) => parseAdCall(adCallInput(i)),
    check: (_i, call: AdCall) => checkCall(call),
    budgetMs: caseBudget,
  }),
  parseIncomingMessage: entry({
    prepare: (i: RequestInput) => {
      const req = new IncomingMessage(new Socket());
      req.url = i.url;
      req.method = i.method ?? 'GET';
      req.headers = { ...(i.headers ?? {}) };
      const bytes = bodyBytes(i.body);
      if (bytes) for (const c of chunks(bytes, i.chunk)) req.push(c);
      req.push(null);
      return req;
    },
    // The peer is a trusted proxy, so every X-Forwarded-For chain is read.
    run: (_i: RequestInput, req: IncomingMessage) =>
      parseIncomingMessage(req, { ip: '192.0.2.1', trustedProxies: TRUSTED_PROXIES }),
    check: (_i, call: AdCall) => checkCall(call),
    budgetMs: caseBudget,
  }),
  parseAdCallRequest: entry({
    prepare: (i: RequestInput) => {
      const bytes = bodyBytes(i.body);
      const parts = bytes ? chunks(bytes, i.chunk) : [];
      const pull = (c: ReadableStreamDefaultController) => (parts.length ? c.enqueue(parts.shift()!) : c.close());
      const body = i.method === 'POST' ? new ReadableStream({ pull }) : undefined;
      try {
        const url = new URL(i.url, 'http://ads.example');
        return new Request(url, { method: i.method ?? 'GET', headers: i.headers, body, duplex: 'half' } as RequestInit);
      } catch {
        return undefined; // a URL or header no client can send
      }
    },
    run: async (_i: RequestInput, req: Request | undefined) => (req ? parseAdCallRequest(req) : undefined),
    check: (_i, call: AdCall | undefined) => call && checkCall(call),
    budgetMs: caseBudget,
  }),
  forwarding: entry({
    prepare: () => newPolicy(),
    run: (i: RequestInput, policy: ForwardingPolicy): Forwarded => {
      const call = parseAdCall(adCallInput(i));
      const requests = PARTNERS.map((p) => buildBidRequest(call, p, { policy }));
      return { call, requests, explanation: explainForwarding(call, PARTNERS, policy) };
    },
    check: (_i, f: Forwarded) => checkForwarded(f),
    budgetMs: caseBudget,
  }),
  decode: entry({
    run: (i: { text: string; json: boolean; partners: boolean }) =>
      runDecode([...(i.json ? ['--json'] : []), ...(i.partners ? ['--partners', partnersPath()] : []), '--', i.text]),
    check: (i, r: CliRun) => {
      // 0: decoded; 2: a usage error (commander); 3: the eids could not be decoded (the typed DecodeError).
      expect([0, 2, 3], r.stderr.slice(0, 200)).toContain(r.code);
      expect(r.stderr, 'stderr is terminal-safe').not.toMatch(RAW_CONTROL);
      if (i.json && r.code !== 2) expect(() => JSON.parse(r.stdout)).not.toThrow();
      else expect(r.stdout, 'stdout is terminal-safe').not.toMatch(RAW_CONTROL);
    },
    budgetMs: (i) => caseBudget(i) + i.text.length / 2_048,
  }),
  simulator: entry({
    prepare: () => sim(),
    run: (i: SimulatorInput, s: Awaited<ReturnType<typeof sim>>) => {
      const tokens = { user: s.token, access: s.access, none: undefined, garbage: i.path };
      const auth = tokens[i.auth] === undefined ? undefined : `Bearer ${tokens[i.auth]}`;
      const headers = { ...i.headers, ...(auth ? { authorization: auth } : {}) };
      return answer(() => s.sim.fetch(i.path, { method: i.method, headers, body: i.body }));
    },
    check: (_i, a: Answer) => {
      if (a.unsendable) return;
      expect(a.status, `no unhandled error: ${a.body.toString().slice(0, 200)}`).not.toBe(500);
      expect([200, 201, 204, 400, 401, 403, 404, 405, 409, 413, 415, 422, 429]).toContain(a.status);
      const json = (a.headers.get('content-type') ?? '').includes('json') && a.body.length > 0;
      if (json) expect(() => JSON.parse(a.body.toString())).not.toThrow();
    },
    budgetMs: (i) => 50 + size(i) / 10_240,
  }),
  tagServer: entry({
    run: (i: TagInput) => {
      tagApp ??= createTagApp({ config: tagConfig });
      const app = tagApp;
      return answer(async () => app.request(`http://tags.example${i.path}`, { method: i.method, headers: i.headers }));
    },
    check: (i, a: Answer) => {
      if (a.unsendable) return;
      expect([200, 304, 404]).toContain(a.status);
      if (a.status !== 200 || i.method === 'HEAD') return;
      // A percent-escaped digit is the digit (RFC 3986 §6.2.2.2): /tag/%34321/ is /tag/4321/.
      let path = new URL(`http://tags.example${i.path}`).pathname;
      try {
        path = decodeURIComponent(path);
      } catch {
        // left as sent
      }
      const m = /^\/tag\/(\d{1,12}|default)\/sas(\.debug)?\.js$/.exec(path);
      expect(m, `200 for ${path}`).not.toBeNull();
      const enc = a.headers.get('content-encoding');
      const bytes = enc === 'br' ? brotliDecompressSync(a.body) : enc === 'gzip' ? gunzipSync(a.body) : a.body;
      // The network a path names is its number: /tag/04321/ is network 4321's script, or not found.
      const network = m![1] === 'default' ? 'default' : String(Number(m![1]));
      const expected = composeTag(network, tagConfig, { debug: !!m![2] });
      expect(bytes.toString() === expected, `the script of network ${network}`).toBe(true);
    },
    budgetMs: (i) => 50 + size(i) / 10_240,
  }),
};

/** The name of an entry point. */
export type EntryName = keyof typeof ENTRY_POINTS;
