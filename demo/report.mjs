// The demo ad server's receiving side, built on eidkit/adserver (issue #4): parses each ad call, sets the `pid`
// cookie on a first visit, logs providers, keeps the report, expands reference envelopes, builds the bid
// requests sent to three demo partners, and serves the live report (`/report`, `/report.json`, `/report.csv`).
// demo/server.mjs routes its ad-call endpoints and these paths here. Run `npm run build` first (dist/node).
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import {
  buildBidRequest,
  createFrequencyCapper,
  createReferenceEnvelopeDecryptor,
  createReport,
  envelopeKeysFromText,
  expandEnvelopes,
  logProviders,
  memoryLogSink,
  newPid,
  parseIncomingMessage,
  pidSetCookie,
  providerHits,
  sealReferenceEnvelope,
} from '../dist/node/adserver/index.js';

/** The demo's demand partners: a 2.6 DSP, a DSP flagged OpenRTB 2.5, and a DMP preferring Unified ID 2.0. */
export const DEMO_PARTNERS = [
  { id: 'dsp-ortb26', openrtb: '2.6' },
  { id: 'dsp-ortb25', openrtb: '2.5' },
  { id: 'dmp-uid2', kind: 'dmp', preferredProvider: 'uidapi.com' },
];

/** One demo frequency cap, shown per call: 3 impressions per user per minute. */
const DEMO_CAP = { item: 'deal:demo', max: 3, windowMs: 60_000 };

/**
 * Creates the receiving side of the demo server.
 * Options: `envelopeKeys` (text `keyId:base64key,…`, default from EIDKIT_ENVELOPE_KEYS or a random demo key),
 * `alternativeIds` (network id → provider, default network 1234 uses ID5), `lastCalls` (default 20),
 * `log` (a function receiving one line per call; default console.log).
 */
export function createAdServerDemo(options = {}) {
  const keyText = options.envelopeKeys ?? process.env.EIDKIT_ENVELOPE_KEYS ?? `demo:${randomBytes(32).toString('base64')}`;
  const keys = envelopeKeysFromText(keyText);
  const [keyId] = Object.keys(keys);
  const decryptor = createReferenceEnvelopeDecryptor({ keys });
  const report = createReport();
  const providerLog = memoryLogSink(1000);
  const capper = createFrequencyCapper({ alternativeIds: options.alternativeIds ?? { 1234: 'id5-sync.com' } });
  const keep = options.lastCalls ?? 20;
  const log = options.log ?? ((line) => console.log(line));
  const lastCalls = [];
  let seq = 0;

  /** Handles one ad call: parses it, sets `pid` when absent, records it. Returns the entry shown in the report. */
  async function recordAdCall(req, res) {
    const call = await parseIncomingMessage(req, { ip: req.socket?.remoteAddress });
    if (!call.pid) {
      // First visit: mint the service's own user id. Over plain http a Secure cookie would not be stored.
      const https = req.socket?.encrypted === true;
      res.setHeader('set-cookie', pidSetCookie(newPid(), { sameSite: https ? 'None' : 'Lax' }));
    }
    const now = new Date();
    const record = logProviders(call, providerLog, now);
    report.add(call, now);
    const { value: extraEids, issues: envelopeIssues } = await expandEnvelopes(call.eids, decryptor, { inserter: 'eidkit.demo' });
    const user = capper.userOf(call);
    const cap = await capper.check(call, DEMO_CAP);
    if (cap.allowed) await capper.record(call, DEMO_CAP);
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
      eids: providerHits(call.eids).map((h, i) => ({ source: h.source, providerId: h.provider.id, providerName: h.provider.name, uids: call.eids[i].uids })),
      envelopeEids: extraEids,
      issues: [...call.issues, ...envelopeIssues],
      providerIds: record.providerIds,
      capping: { user: user.kind, item: DEMO_CAP.item, allowed: cap.allowed, count: cap.count },
      bidRequests: DEMO_PARTNERS.map((p) => ({ partner: p, request: buildBidRequest(call, p, { extraEids, test: true }) })),
    };
    lastCalls.unshift(entry);
    if (lastCalls.length > keep) lastCalls.length = keep;
    const names = entry.eids.map((e) => `${e.source} (${e.providerId} ${e.providerName})`).join(', ') || 'no eids';
    log(`[adserver] ${call.endpoint} nwid=${entry.networkId ?? '-'} uid=${entry.uid ? 'yes' : 'no'} pid=${entry.pid ? 'yes' : 'no'}: ${names}${entry.issues.length ? `; ${entry.issues.length} issue(s)` : ''}`);
    return { call, entry };
  }

  /** The report state as JSON: the three dimensions per day and network, and the last calls. */
  function reportJson() {
    return { ...report.toJSON(), lastCalls, partners: DEMO_PARTNERS };
  }

  /** A sample POST body with a reference envelope, for the report page's "send a sample call" button. */
  function sampleCall(networkId = 1234) {
    const envelope = sealReferenceEnvelope(
      { rampId: `XY${randomBytes(8).toString('hex')}`, uid2: `uid2-${randomBytes(6).toString('hex')}`, euid: `euid-${randomBytes(6).toString('hex')}`, publinkId: `pl-${randomBytes(6).toString('hex')}`, connectId: `cid-${randomBytes(6).toString('hex')}` },
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
        { source: 'id5-sync.com', uids: [{ id: `ID5*${randomBytes(6).toString('hex')}`, atype: 1, ext: { linkType: 2 } }] },
        { source: 'vendor.example', uids: [{ id: 'unknown-provider-id', atype: 571187 }] },
      ],
    };
  }

  /** Serves `/report`, `/report.json`, `/report.csv` and `/report/sample-call.json`; returns false for other paths. */
  async function handleReport(req, res) {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    const send = (status, type, body) => {
      res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
      res.end(body);
    };
    if (path === '/report' || path === '/report.html') {
      send(200, 'text/html; charset=utf-8', await readFile(new URL('./report.html', import.meta.url)));
    } else if (path === '/report.json') {
      send(200, 'application/json', JSON.stringify(reportJson()));
    } else if (path === '/report.csv') {
      send(200, 'text/csv; charset=utf-8', report.toCSV());
    } else if (path === '/report/sample-call.json') {
      send(200, 'application/json', JSON.stringify(sampleCall()));
    } else {
      return false;
    }
    return true;
  }

  return { recordAdCall, handleReport, reportJson, sampleCall, report, providerLog };
}
