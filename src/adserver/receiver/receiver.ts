/**
 * The ad call's whole path in one place: parse → pid → provider log → report → envelopes → cap → bid requests →
 * answer, over the parts an operator configures. `receive` takes a parsed call and gives its outcome (for any
 * framework); `handler` is the same path as a `node:http` request listener, CORS and the `pid` cookie included
 * (Express mounts it as is; docs/ad-server.md shows Fastify). Every step stays usable on its own: this file only
 * calls the rooms' exports in order.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Eid, Issue } from '../../core/index.js';
import { corsForNode, newPid, pidSetCookie } from '../answer/index.js';
import type { CorsPolicy, PidCookieOptions } from '../answer/index.js';
import type { CapDecision, FrequencyCap, FrequencyCapper } from '../capping/index.js';
import { buildBidRequest, expandEnvelopes, explainForwarding } from '../forward/index.js';
import type {
  BidRequestOptions,
  DemandPartner,
  EnvelopeDecryptor,
  ExpandOptions,
  ForwardingExplanation,
  ForwardingPolicy,
  OrtbBidRequest,
} from '../forward/index.js';
import { parseIncomingMessage } from '../parse/index.js';
import type { AdCall, ParseOptions } from '../parse/index.js';
import { logProviders } from '../report/index.js';
import type { ProviderLogRecord, ProviderLogSink, Report } from '../report/index.js';

/** The parts of an ad server, as its operator configures them; each is optional and its step is skipped without it. */
export interface AdCallReceiverOptions {
  /** Counts every call (`createReport()`, or `createRedisReport(redis)` for a fleet). */
  report?: Pick<Report, 'add'>;
  /** The provider log: one record per call, the providers whose ids it carries. */
  providerLog?: ProviderLogSink;
  /** The demand partners a bid request is built for, in order. */
  partners?: readonly DemandPartner[];
  /** Who receives which eid (`createForwardingPolicy`); without it every partner receives every eid. */
  policy?: ForwardingPolicy;
  /** Options of every bid request (`tmax`, `cur`, `test`…); `policy` and `extraEids` come from the receiver. */
  bidRequest?: Omit<BidRequestOptions, 'policy' | 'extraEids'>;
  /** Frequency capping: the capper, and the cap(s) of a call (a cap, a list, or a function of the call). */
  capping?: {
    capper: Pick<FrequencyCapper, 'take'>;
    caps:
      FrequencyCap | readonly FrequencyCap[] | ((call: AdCall) => FrequencyCap | readonly FrequencyCap[] | undefined);
  };
  /** Opens identity envelopes into extra eids (`expandEnvelopes`): the decryptor and its options. */
  envelopes?: ExpandOptions & { decryptor: EnvelopeDecryptor };
  /** Which pages may read the answers (`createCorsPolicy`); used by `handler`. */
  cors?: CorsPolicy;
  /** The `pid` cookie set on a first visit (`pidSetCookie` options); `false`: never set one. Default `{}`. */
  pidCookie?: PidCookieOptions | false;
  /** How calls are parsed (`limits`, `trustedProxies`, `pageUrl`); used by `handler`. */
  parse?: ParseOptions;
  /** The paths `handler` serves (GET and POST); others get a 404. Default the tag's: `/ac`, `/genericpost`, `/call`. */
  paths?: readonly string[];
  /** The JSON answer of an outcome; default `{ ads: [] }` (no fill: your ad decision goes here). */
  answer?: (outcome: Omit<AdCallOutcome, 'answer'>) => unknown;
}

/** What receiving one call did. */
export interface AdCallOutcome {
  /** The parsed call. */
  call: AdCall;
  /** The pid of a first visit (the call had none) and its `Set-Cookie` value; absent when the call had a pid. */
  newPid?: { pid: string; setCookie: string };
  /** The provider log record (when there is a provider log). */
  providers?: ProviderLogRecord;
  /** Eids opened from the call's envelopes, and the problems met opening them. */
  envelopes: { eids: Eid[]; issues: Issue[] };
  /** The capping decision (when capping is configured and the call has caps). */
  cap?: CapDecision;
  /** One bid request per partner, in the partners' order. */
  bidRequests: { partner: DemandPartner; request: OrtbBidRequest }[];
  /** Per partner, each eid kept or removed and why; worked out when asked (it costs about a bid request). */
  decisions: () => ForwardingExplanation;
  /** The answer's JSON value. */
  answer: unknown;
}

/** An ad server's receiving path, configured once. */
export interface AdCallReceiver {
  /**
   * Receives a call parsed by any framework (`parseAdCallRequest`, `parseAdCall`), logged and counted at `at`
   * (default now).
   */
  receive(call: AdCall, at?: Date): Promise<AdCallOutcome>;
  /** The whole path for `node:http` (and Express): CORS, parse, receive, the `pid` cookie, the JSON answer. */
  handler(req: IncomingMessage, res: ServerResponse): Promise<void>;
}

const TAG_PATHS = ['/ac', '/genericpost', '/call'] as const;

/**
 * Builds the receiving path of an ad server from its parts.
 * @example
 * const receiver = createAdCallReceiver({ report: createReport(), partners: [{ id: 'dsp-a' }], cors });
 * createServer(receiver.handler).listen(8080);
 */
export function createAdCallReceiver(options: AdCallReceiverOptions = {}): AdCallReceiver {
  const partners = options.partners ?? [];
  const paths = new Set<string>(options.paths ?? TAG_PATHS);
  const bidOptions = { ...options.bidRequest, policy: options.policy };
  const capsOf = (call: AdCall) => {
    const caps = options.capping?.caps;
    return typeof caps === 'function' ? caps(call) : caps;
  };
  const answerOf = options.answer ?? (() => ({ ads: [] }));

  async function receive(call: AdCall, at?: Date): Promise<AdCallOutcome> {
    // Without `at`, each step reads its own clock (the log and the report keep a cached one: no Date per call).
    // This runs on every ad call: one closure (`decisions`, which the outcome hands out) and no object spread (the
    // receiving bench holds it to the same steps written out by hand).
    let fresh: AdCallOutcome['newPid'];
    if (!call.pid && options.pidCookie !== false) {
      const pid = newPid();
      fresh = { pid, setCookie: pidSetCookie(pid, options.pidCookie) };
    }
    const providers = options.providerLog ? logProviders(call, options.providerLog, at) : undefined;
    options.report?.add(call, at);
    const envelopes = options.envelopes
      ? await expandEnvelopes(call.eids, options.envelopes.decryptor, options.envelopes).then(
          (r) => ({ eids: r.value, issues: r.issues }),
          // An envelope step that fails costs the extra eids, never the call.
          (err: unknown) => ({ eids: [], issues: [{ path: 'eids', message: `envelopes not opened: ${String(err)}` }] }),
        )
      : { eids: [], issues: [] };
    const caps = options.capping && capsOf(call);
    const cap = caps && options.capping ? await options.capping.capper.take(call, caps) : undefined;
    const extraEids = envelopes.eids.length ? envelopes.eids : undefined;
    // One options object for every call without envelopes: an object spread per call costs ~2 µs a bid request.
    const requestOptions = extraEids ? { ...bidOptions, extraEids } : bidOptions;
    const bidRequests = partners.map((partner) => ({
      partner,
      request: buildBidRequest(call, partner, requestOptions),
    }));
    const decisions = () => explainForwarding(call, partners, options.policy, extraEids);
    // The answer is worked out from the outcome, then set in place (a copy with it would cost a spread per call).
    const outcome: AdCallOutcome = {
      call,
      newPid: fresh,
      providers,
      envelopes,
      cap,
      bidRequests,
      decisions,
      answer: undefined,
    };
    outcome.answer = answerOf(outcome);
    return outcome;
  }

  async function handler(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (options.cors && corsForNode(options.cors, req, res)) return;
    const path = (req.url ?? '/').split('?', 1)[0];
    if (!paths.has(path)) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
      return;
    }
    if (req.method !== 'GET' && req.method !== 'POST') {
      res.writeHead(405, { allow: 'GET, POST', 'content-type': 'application/json' }).end('{"error":"method"}');
      return;
    }
    const call = await parseIncomingMessage(req, options.parse);
    const outcome = await receive(call);
    if (outcome.newPid) res.setHeader('set-cookie', outcome.newPid.setCookie);
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
    res.end(JSON.stringify(outcome.answer));
  }

  return { receive, handler };
}
