// The receiving path the receiving bench measures, written once for the bench (receiving.bench.mjs), its HTTP server
// (receiving-server.mjs) and its in-process comparison (receiving-vs-hand.mjs): the ad call's query, the partners, the
// cap, the answer, and the path after parsing both through createAdCallReceiver and written out step by step. `lib`
// is a build's `eidkit/adserver` entry point (this checkout's, or BASELINE's).
import { eids } from './eids.mjs';

const EIDS_PARAM = Buffer.from(JSON.stringify(eids)).toString('base64url');
/** The query string of the measured GET ad call: a page's call with 10 eids. */
export const QUERY = `?nwid=1234&siteid=56789&pgid=1234567&fmtid=12345&tgt=sport%3Dfootball&tmstp=1700000000000&eids=${EIDS_PARAM}`;

/** The two demand partners: one reading OpenRTB 2.6, one 2.5. */
export const PARTNERS = [{ id: 'dsp-a' }, { id: 'dsp-b', openrtb: '2.5' }];

/** One cap of 3 a UTC day and 10 an ISO week on one deal, as `lib` defines it. */
export const capOf = (lib) =>
  lib.defineFrequencyCap({
    item: 'deal:42',
    windows: [
      { max: 3, per: 'day' },
      { max: 10, per: 'week' },
    ],
  });

/** The answer of every path: whether the deal is served, and the bytes of the serialised bid requests. */
export const answerOf = (lib, served, requests) => {
  const bodies = lib.bidRequestsJson(requests);
  return `{"ok":true,"served":${served},"bytes":${bodies[0].length + bodies[1].length}}`;
};

/**
 * The path after parsing through `lib`'s receiver, over the stores `s` (`{ report, capper }`) and the provider log
 * `sink`: a function from a parsed call to its JSON answer.
 */
export function receiverPath(lib, s, sink, cap = capOf(lib)) {
  const receiver = lib.createAdCallReceiver({
    report: s.report,
    providerLog: sink,
    capping: { capper: s.capper, caps: cap },
    partners: PARTNERS,
    bidRequest: { tmax: 200 },
    pidCookie: false,
    answer: ({ cap: decision, bidRequests }) =>
      answerOf(
        lib,
        decision.allowed,
        bidRequests.map((b) => b.request),
      ),
  });
  return async (call) => (await receiver.receive(call)).answer;
}

/** The same steps written out by hand, as an ad server without the receiver would: the receiver's baseline. */
export function handWrittenPath(lib, s, sink, cap = capOf(lib)) {
  return async (call) => {
    lib.logProviders(call, sink);
    s.report.add(call);
    const decision = await s.capper.take(call, cap);
    return answerOf(
      lib,
      decision.allowed,
      PARTNERS.map((p) => lib.buildBidRequest(call, p, { tmax: 200 })),
    );
  };
}
