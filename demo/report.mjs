// The demo ad server's receiving side, built on eidkit/adserver: parses each ad call, mints the `pid`
// cookie on a first visit, logs providers, keeps the report, expands reference envelopes, builds the bid
// requests sent to three demo partners, and serves the live report (`/report`, `/report.json`, `/report.csv`).
// demo/server.mjs routes its ad-call endpoints and these paths here (WHATWG Request in, Response out).
// In-memory stores by default; with a node-redis client (`REDIS_URL`, see demo/server.mjs) the cap and the
// report are shared through Redis. Run `npm run build` first (dist/node).
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import {
  createAdCallReceiver,
  createFrequencyCapper,
  createRedisFrequencyCapStore,
  createRedisReport,
  createReferenceEnvelopeDecryptor,
  createForwardingPolicy,
  createReport,
  defineFrequencyCap,
  envelopeKeysFromText,
  memoryLogSink,
  newPid,
  parseAdCallRequest,
  parseDmpConfig,
  pidSetCookie,
  providerHits,
  sealReferenceEnvelope,
  upliftOf,
} from '../dist/node/adserver/index.js';

/**
 * The demo's stand-in for an auction, which a real ad server runs and is paid for: a call the cap allows fills
 * with a chance and a price that grow with the eids it carries (each known provider's id makes buyers bid more),
 * so the report's holdout experiments have an effect to measure. A real server passes its own outcome.
 */
export function demoOutcome(call, allowed) {
  if (!allowed) return { impression: false };
  const known = call.eids.filter((e) => e.source !== 'vendor.example').length;
  const fill = Math.min(0.95, 0.5 + 0.08 * known);
  if (Math.random() >= fill) return { impression: false };
  // Log-normal price per call around a 1.50 CPM, 10 % more per known id.
  const z = Math.sqrt(-2 * Math.log(1 - Math.random())) * Math.cos(2 * Math.PI * Math.random());
  return { impression: true, revenue: Math.round(0.0015 * (1 + 0.1 * known) * Math.exp(0.6 * z) * 1e6) / 1e6 };
}

/**
 * The demo's demand partners: a 2.6 DSP, a DSP flagged OpenRTB 2.5, and a DMP preferring Unified ID 2.0, each
 * with a vendor id of the demo CMP's vendor list (test/support/tcf/gvl.mjs), so consent applies per partner.
 */
export const DEMO_PARTNERS = [
  { id: 'dsp-ortb26', openrtb: '2.6', gvlVendorId: 21 },
  { id: 'dsp-ortb25', openrtb: '2.5', gvlVendorId: 131 },
  { id: 'dmp-uid2', kind: 'dmp', preferredProvider: 'uidapi.com', gvlVendorId: 97 },
];

/** Each DMP's one preferred provider (docs/wire-format.md#dmp-preferred-providers): the report's Has DMP Id. */
export const DEMO_DMPS = parseDmpConfig([
  { dmp: 'dmp-uid2', source: 'uidapi.com' },
  { dmp: 'dmp-sharedid', source: 'pubcid.org' },
]);

/**
 * The demo's forwarding policy (docs/ad-server.md "Forwarding policy"): hashed emails go to one buyer only; ids this
 * server opened from an envelope (inserter eidkit.demo) go to everyone, the sealed envelope itself to no one; the
 * publisher's first-party id is sent whatever the consent signals.
 */
export const DEMO_POLICY = createForwardingPolicy({
  partners: DEMO_PARTNERS,
  permissions: [
    { source: 'hemsha256', partners: ['dsp-ortb26'] },
    { source: 'liveramp.com', inserter: 'eidkit.demo', partners: '*' },
    { source: 'liveramp.com', partners: [] },
  ],
  consent: { allowSources: ['pubcid.org'] },
});

/** One demo frequency cap, shown per call: 3 impressions per user per rolling minute and 10 per UTC day. */
const DEMO_CAP = defineFrequencyCap({
  item: 'deal:demo',
  windows: [
    { max: 3, windowMs: 60_000 },
    { max: 10, per: 'day' },
  ],
});

/**
 * Creates the receiving side of the demo server.
 * Options: `envelopeKeys` (text `keyId:base64key,…`, default from EIDKIT_ENVELOPE_KEYS or a random demo key),
 * `alternativeIds` (network id → provider, default network 1234 uses ID5), `lastCalls` (default 20), `redis`
 * (a connected node-redis client: the cap and the report go to Redis instead of memory).
 */
export function createAdServerDemo(options = {}) {
  const keyText =
    options.envelopeKeys ?? process.env.EIDKIT_ENVELOPE_KEYS ?? `demo:${randomBytes(32).toString('base64')}`;
  const keys = envelopeKeysFromText(keyText);
  const [keyId] = Object.keys(keys);
  const decryptor = createReferenceEnvelopeDecryptor({ keys });
  const report = options.redis
    ? createRedisReport(options.redis, { dmps: DEMO_DMPS })
    : createReport({ dmps: DEMO_DMPS });
  const providerLog = memoryLogSink(1000);
  const capper = createFrequencyCapper({
    alternativeIds: options.alternativeIds ?? { 1234: 'id5-sync.com' },
    // The store's answer is awaited at most the default 100 ms (DEFAULT_CAP_TIMEOUT_MS), then the capper decides.
    ...(options.redis ? { store: createRedisFrequencyCapStore(options.redis) } : {}),
  });
  // The receiving path over the demo's parts; the pid cookie is set below, by the page's scheme.
  const receiver = createAdCallReceiver({
    report,
    providerLog,
    capping: { capper, caps: DEMO_CAP },
    envelopes: { decryptor, inserter: 'eidkit.demo' },
    partners: DEMO_PARTNERS,
    policy: DEMO_POLICY,
    bidRequest: { test: true },
    pidCookie: false,
  });
  const keep = options.lastCalls ?? 20;
  const lastCalls = [];
  let seq = 0;
  let samples = 0;

  /**
   * Handles one ad call: parses it and records it. Returns the parsed call, the entry shown in the report, and
   * the `Set-Cookie` value to answer with on a first visit (no `pid` cookie yet), else undefined.
   */
  async function recordAdCall(request, { ip } = {}) {
    const call = await parseAdCallRequest(request, { ip });
    // Over plain http a Secure (SameSite=None) cookie would not be stored; the demo page shares the origin.
    const setCookie = call.pid
      ? undefined
      : pidSetCookie(newPid(), { sameSite: request.url.startsWith('https:') ? 'None' : 'Lax' });
    const now = new Date();
    const { providers, envelopes, cap, bidRequests, decisions } = await receiver.receive(call, now);
    const explanation = decisions();
    // Id coverage: per source × partner, the eids forwarded and those withheld, and why.
    report.addForwarding(call, explanation, now);
    // What the ad server made of the call, for the holdout experiments it is in (call.experiments).
    report.addOutcome(call, demoOutcome(call, cap.allowed), now);
    const entry = {
      seq: ++seq,
      time: now.toISOString(),
      endpoint: call.endpoint,
      networkId: call.networkId ?? null,
      siteId: call.siteId ?? null,
      pageId: call.pageId ?? null,
      formats: call.formats,
      uid: call.uid ?? null,
      pid: call.pid ?? null,
      eids: providerHits(call.eids).map((h, i) => ({
        source: h.source,
        providerId: h.provider.id,
        providerName: h.provider.name,
        uids: call.eids[i].uids,
      })),
      envelopeEids: envelopes.eids,
      issues: [...call.issues, ...envelopes.issues],
      providerIds: providers.providerIds,
      capping: {
        user: cap.user.kind,
        item: DEMO_CAP.item,
        allowed: cap.allowed,
        count: cap.count,
        windows: cap.windows,
        storeError: cap.storeError ?? null,
      },
      bidRequests,
      // Per partner, each eid kept or removed and why (the report page's "Forwarding" table).
      experiments: call.experiments ?? [],
      forwarding: explanation.partners.map((p) => ({
        partner: p.partner,
        openrtb: p.openrtb,
        consent: p.consent?.message ?? null,
        kept: p.kept.map((d) => ({ source: d.eid.source, inserter: d.eid.inserter ?? null, reason: d.reason.message })),
        removed: p.removed.map((d) => ({
          source: d.eid.source,
          inserter: d.eid.inserter ?? null,
          code: d.reason.code,
          reason: d.reason.message,
        })),
      })),
    };
    lastCalls.unshift(entry);
    if (lastCalls.length > keep) lastCalls.length = keep;
    return { call, entry, setCookie };
  }

  /**
   * The report state as JSON: the dimensions per day (or hour) and network, the holdout experiments analysed
   * (`uplift`, always from the day rows), and the last calls.
   */
  async function reportJson(granularity = 'day') {
    const days = await report.toJSON();
    return {
      ...(granularity === 'day' ? days : await report.toJSON({ granularity })),
      uplift: upliftOf(days),
      granularity,
      store: options.redis ? 'redis' : 'memory',
      lastCalls,
      partners: DEMO_PARTNERS,
    };
  }

  /**
   * A sample POST body with a reference envelope, for the report page's "send a sample call" button. It is in the
   * demo's holdout experiment `id5-demo` (20 % of calls hold ID5 out, drawn per call as a tag without storage
   * consent would; here every fifth call): in the held-out arm the ID5 eid is left out, as the tag leaves it out.
   */
  function sampleCall(networkId = 1234) {
    const held = ++samples % 5 === 0;
    const envelope = sealReferenceEnvelope(
      {
        rampId: `XY${randomBytes(8).toString('hex')}`,
        uid2: `uid2-${randomBytes(6).toString('hex')}`,
        euid: `euid-${randomBytes(6).toString('hex')}`,
        publinkId: `pl-${randomBytes(6).toString('hex')}`,
        connectId: `cid-${randomBytes(6).toString('hex')}`,
      },
      { keyId, key: keys[keyId] },
    );
    return {
      networkId,
      siteId: 1,
      pageId: 'report-sample',
      formatId: 1,
      timestamp: Date.now(),
      eids: [
        { source: 'liveramp.com', uids: [{ id: envelope, atype: 3 }] },
        ...(held
          ? []
          : [
              {
                source: 'id5-sync.com',
                uids: [{ id: `ID5*${randomBytes(6).toString('hex')}`, atype: 1, ext: { linkType: 2 } }],
              },
            ]),
        { source: 'vendor.example', uids: [{ id: 'unknown-provider-id', atype: 571187 }] },
      ],
      xp: [{ id: 'id5-demo', arm: held ? 'h' : 'c', pct: 20, src: ['id5-sync.com'], st: 0 }],
    };
  }

  /**
   * Answers `/report`, `/report.json`, `/report.csv` (`?granularity=hour` for hourly rows) and
   * `/report/sample-call.json`; undefined for other paths.
   */
  async function reportResponse(request) {
    const url = new URL(request.url);
    const path = url.pathname;
    const granularity = url.searchParams.get('granularity') === 'hour' ? 'hour' : 'day';
    const headers = (type) => ({ 'content-type': type, 'cache-control': 'no-store' });
    if (path === '/report' || path === '/report.html') {
      return new Response(await readFile(new URL('./report.html', import.meta.url)), {
        headers: headers('text/html; charset=utf-8'),
      });
    }
    if (path === '/report.json')
      return new Response(JSON.stringify(await reportJson(granularity)), { headers: headers('application/json') });
    if (path === '/report.csv')
      return new Response(await report.toCSV({ granularity }), { headers: headers('text/csv; charset=utf-8') });
    if (path === '/report/sample-call.json')
      return new Response(JSON.stringify(sampleCall()), { headers: headers('application/json') });
    return undefined;
  }

  return { recordAdCall, reportResponse, reportJson, sampleCall, report, providerLog };
}
