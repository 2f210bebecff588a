// The table of what one fact adds to the report (counters.table.test.ts checks it): per row an ad call (its outcome,
// or its forwarding decisions), the time it is counted at, and the counters expected in its network's day and hour
// buckets, each with its amount, and why. Both reports count through the one rule, so these rows hold for the
// in-memory and the Redis report alike (redis-report.test.ts feeds them to both).
import { callIncrements, forwardingIncrements, outcomeIncrements } from '../../../src/adserver/report/counters.js';
import type { CounterIncrements } from '../../../src/adserver/report/counters.js';
import { createForwardingPolicy, parseDmpConfig } from '../../../src/adserver/index.js';
import type { AdCall, CallOutcome, DmpConfig, ForwardingExplanation } from '../../../src/adserver/index.js';
import type { CallExperiment } from '../../../src/adserver/parse/index.js';
import type { Eid } from '../../../src/core/index.js';
import { EUID, ID5, UID2, UNKNOWN, callWith } from '../fixtures.js';

/** What a report is told: an ad call, what the ad server made of it, or where its eids were forwarded. */
export type ReportFact =
  | { readonly kind: 'call'; readonly call: AdCall }
  | { readonly kind: 'outcome'; readonly call: AdCall; readonly outcome: CallOutcome }
  | { readonly kind: 'forwarding'; readonly call: AdCall; readonly explanation: ForwardingExplanation };

/** The increments of one fact, through the rule's function for its kind. */
export function incrementsOf(fact: ReportFact, dmps?: readonly DmpConfig[]): CounterIncrements {
  if (fact.kind === 'call') return callIncrements(fact.call, dmps);
  if (fact.kind === 'outcome') return outcomeIncrements(fact.call, fact.outcome);
  return forwardingIncrements(fact.call, fact.explanation);
}

// Provider ids of the registry: ID5 2, UID2 4, EUID 5, unknown sources 0.
export const AT = Date.UTC(2026, 2, 1, 15, 30);
export const DMPS = parseDmpConfig([
  { dmp: 'uid-dmp', source: 'uidapi.com' },
  { dmp: 'id5-dmp', source: 'id5-sync.com' },
]);
const ID5_BIS: Eid = { source: 'id5-sync.com', uids: [{ id: 'ID5*other', atype: 1 }] };

export const call = (
  o: Parameters<typeof callWith>[0] & { experiments?: CallExperiment[]; noNetwork?: boolean },
): AdCall => {
  const c = callWith(o);
  if (o.experiments) c.experiments = o.experiments;
  if (o.noNetwork) delete c.networkId;
  return c;
};
export const xp = (
  id: string,
  arm: 'holdout' | 'control',
  sources: string[],
  sticky = true,
  share = 0.1,
): CallExperiment => ({
  id,
  arm,
  share,
  sources,
  sticky,
});
const policy = createForwardingPolicy({ permissions: [{ source: 'uidapi.com', partners: ['dsp-a'] }] });
const forwarding = (c: AdCall, partners: string[]): ReportFact => ({
  kind: 'forwarding',
  call: c,
  explanation: policy.explain(
    c,
    partners.map((id) => ({ id })),
  ),
});
export const outcome = (c: AdCall, o: CallOutcome): ReportFact => ({ kind: 'outcome', call: c, outcome: o });

export interface Row {
  name: string;
  fact: ReportFact;
  dmps?: readonly DmpConfig[];
  /** When it is counted (default AT). */
  at?: number;
  /** The buckets: UTC day and hour. */
  day?: string;
  hour?: string;
  networkId: number | undefined;
  /** Field → amount, each field once. */
  adds: Record<string, number>;
  reason: string;
}

const X1 = 'x:x1\t';
export const rows: Row[] = [
  {
    name: 'a call without ids or eids',
    fact: { kind: 'call', call: call({}) },
    networkId: 1234,
    adds: { calls: 1, noeids: 1, 'eff:none': 1 },
    reason: 'every call counts once; no eid and no user id are counted as such',
  },
  {
    name: 'a pid only',
    fact: { kind: 'call', call: call({ pid: 'p' }) },
    networkId: 1234,
    adds: { calls: 1, noeids: 1, pid: 1, 'eff:pid': 1 },
    reason: 'Has User Pid, and the pid serves as the user id',
  },
  {
    name: 'a uid only',
    fact: { kind: 'call', call: call({ uid: 'u' }) },
    networkId: 1234,
    adds: { calls: 1, noeids: 1, uid: 1, 'eff:uid': 1 },
    reason: 'Has User Uid, and the uid serves as the user id',
  },
  {
    name: 'a uid and a pid',
    fact: { kind: 'call', call: call({ uid: 'u', pid: 'p' }) },
    networkId: 1234,
    adds: { calls: 1, noeids: 1, uid: 1, pid: 1, 'eff:uid': 1 },
    reason: 'both are carried; the uid overrides the pid as the user id',
  },
  {
    name: 'one eid',
    fact: { kind: 'call', call: call({ eids: [ID5] }) },
    networkId: 1234,
    adds: { calls: 1, 'p:2': 1, 'eff:none': 1 },
    reason: "the provider's call count, and no `noeids`",
  },
  {
    name: 'eids of three providers',
    fact: { kind: 'call', call: call({ eids: [EUID, ID5, UID2] }) },
    networkId: 1234,
    adds: { calls: 1, 'p:2': 1, 'p:4': 1, 'p:5': 1, 'eff:none': 1 },
    reason: 'one count per provider present',
  },
  {
    name: 'two eids of one provider',
    fact: { kind: 'call', call: call({ eids: [ID5, ID5_BIS] }) },
    networkId: 1234,
    adds: { calls: 1, 'p:2': 1, 'eff:none': 1 },
    reason: 'a provider counts calls, not eids: once per call',
  },
  {
    name: 'an eid of a source the registry does not know',
    fact: { kind: 'call', call: call({ eids: [UNKNOWN] }) },
    networkId: 1234,
    adds: { calls: 1, 'p:0': 1, 'eff:none': 1 },
    reason: 'counted under the Unknown provider (0)',
  },
  {
    name: 'a call without a network id',
    fact: { kind: 'call', call: call({ noNetwork: true }) },
    networkId: undefined,
    adds: { calls: 1, noeids: 1, 'eff:none': 1 },
    reason: 'counted in the row of no network',
  },
  {
    name: 'another network',
    fact: { kind: 'call', call: call({ networkId: 7 }) },
    networkId: 7,
    adds: { calls: 1, noeids: 1, 'eff:none': 1 },
    reason: "the call's own network",
  },
  {
    name: "DMPs configured, the call carries one DMP's provider",
    fact: { kind: 'call', call: call({ eids: [UID2] }) },
    dmps: DMPS,
    networkId: 1234,
    adds: { calls: 1, 'p:4': 1, 'eff:none': 1, 'dmp:uid-dmp': 1 },
    reason: "Has DMP Id for uid-dmp only: the call has no id of id5-dmp's provider",
  },
  {
    name: 'DMPs configured, the call carries none of their providers',
    fact: { kind: 'call', call: call({ eids: [EUID] }) },
    dmps: DMPS,
    networkId: 1234,
    adds: { calls: 1, 'p:5': 1, 'eff:none': 1 },
    reason: 'no `dmp:` counter: rows read the calls without from `calls`',
  },
  {
    name: 'the last millisecond of a day',
    fact: { kind: 'call', call: call({}) },
    at: Date.UTC(2026, 2, 1, 23, 59, 59, 999),
    day: '2026-03-01',
    hour: '2026-03-01T23',
    networkId: 1234,
    adds: { calls: 1, noeids: 1, 'eff:none': 1 },
    reason: "counted in that UTC day and its last hour; the tag's clock plays no part",
  },
  {
    name: 'the first millisecond of the next day',
    fact: { kind: 'call', call: call({}) },
    at: Date.UTC(2026, 2, 2),
    day: '2026-03-02',
    hour: '2026-03-02T00',
    networkId: 1234,
    adds: { calls: 1, noeids: 1, 'eff:none': 1 },
    reason: 'a new day and hour begin at midnight UTC',
  },
  {
    name: 'in the control arm of an experiment, drawn per page view, no eids',
    fact: { kind: 'call', call: call({ experiments: [xp('x1', 'control', ['id5-sync.com'], false)] }) },
    networkId: 1234,
    adds: { calls: 1, noeids: 1, 'eff:none': 1, [`${X1}c\tc`]: 1, [`${X1}*\tpct`]: 1_000, [`${X1}*\tv2`]: 1 },
    reason: "the arm's call; the declared share in basis points; the held-out provider named",
  },
  {
    name: 'in the held-out arm, kept per browser, with eids of other sources',
    fact: {
      kind: 'call',
      call: call({ eids: [UID2, EUID], experiments: [xp('x1', 'holdout', ['id5-sync.com'], true, 0.25)] }),
    },
    networkId: 1234,
    adds: {
      calls: 1,
      'p:4': 1,
      'p:5': 1,
      'eff:none': 1,
      [`${X1}h\tc`]: 1,
      [`${X1}h\ts`]: 1,
      [`${X1}h\te`]: 2,
      [`${X1}*\tpct`]: 2_500,
      [`${X1}*\tv2`]: 1,
    },
    reason: 'a sticky call, the eids it carried (2), no leak: none is of the held-out source',
  },
  {
    name: 'in the control arm, carrying a held-out source',
    fact: { kind: 'call', call: call({ eids: [ID5], experiments: [xp('x1', 'control', ['id5-sync.com'])] }) },
    networkId: 1234,
    adds: {
      calls: 1,
      'p:2': 1,
      'eff:none': 1,
      [`${X1}c\tc`]: 1,
      [`${X1}c\ts`]: 1,
      [`${X1}c\te`]: 1,
      [`${X1}c\tl`]: 1,
      [`${X1}*\tpct`]: 1_000,
      [`${X1}*\tv2`]: 1,
    },
    reason: 'a call with one of the sources: coverage in the control arm (leakage in the held-out one)',
  },
  {
    name: 'an experiment holding out two sources of two providers and one unknown',
    fact: {
      kind: 'call',
      call: call({ experiments: [xp('x1', 'holdout', ['uidapi.com', 'euid.eu', 'example.org'])] }),
    },
    networkId: 1234,
    adds: {
      calls: 1,
      noeids: 1,
      'eff:none': 1,
      [`${X1}h\tc`]: 1,
      [`${X1}h\ts`]: 1,
      [`${X1}*\tpct`]: 1_000,
      [`${X1}*\tv4`]: 1,
      [`${X1}*\tv5`]: 1,
      [`${X1}*\tv0`]: 1,
    },
    reason: 'one provider counter per provider held out, the unknown source under provider 0',
  },
  {
    name: 'in two experiments',
    fact: {
      kind: 'call',
      call: call({ experiments: [xp('x1', 'control', ['uidapi.com']), xp('x2', 'holdout', ['uidapi.com'], false)] }),
    },
    networkId: 1234,
    adds: {
      calls: 1,
      noeids: 1,
      'eff:none': 1,
      [`${X1}c\tc`]: 1,
      [`${X1}c\ts`]: 1,
      [`${X1}*\tpct`]: 1_000,
      [`${X1}*\tv4`]: 1,
      'x:x2\th\tc': 1,
      'x:x2\t*\tpct': 1_000,
      'x:x2\t*\tv4': 1,
    },
    reason: "each experiment counts the call in its own arm; the call's own counters once",
  },
  {
    name: 'the outcome of a call in no experiment',
    fact: outcome(call({}), { impression: true, revenue: 1 }),
    networkId: 1234,
    adds: {},
    reason: 'outcomes are counted per experiment only',
  },
  {
    name: 'an impression with revenue',
    fact: outcome(call({ experiments: [xp('x1', 'control', ['uidapi.com'])] }), { impression: true, revenue: 0.0025 }),
    networkId: 1234,
    adds: { [`${X1}c\to`]: 1, [`${X1}c\ti`]: 1, [`${X1}c\tw`]: 1, [`${X1}c\tr`]: 2_500, [`${X1}c\tq~`]: 6_250_000 },
    reason: 'won defaults to the impression; revenue in millionths (exact integers), its square a float sum',
  },
  {
    name: 'an impression of an auction not won',
    fact: outcome(call({ experiments: [xp('x1', 'holdout', ['uidapi.com'])] }), { impression: true, won: false }),
    networkId: 1234,
    adds: { [`${X1}h\to`]: 1, [`${X1}h\ti`]: 1 },
    reason: 'an explicit `won: false` wins over the impression; no revenue, no revenue counters',
  },
  {
    name: 'an empty outcome',
    fact: outcome(call({ experiments: [xp('x1', 'holdout', ['uidapi.com'])] }), {}),
    networkId: 1234,
    adds: { [`${X1}h\to`]: 1 },
    reason: 'an outcome is counted even when nothing was served',
  },
  {
    name: 'the outcome of a call in two experiments',
    fact: outcome(call({ experiments: [xp('x1', 'control', ['uidapi.com']), xp('x2', 'holdout', ['euid.eu'])] }), {
      revenue: 0.5,
    }),
    networkId: 1234,
    adds: {
      [`${X1}c\to`]: 1,
      [`${X1}c\tr`]: 500_000,
      [`${X1}c\tq~`]: 250_000_000_000,
      'x:x2\th\to': 1,
      'x:x2\th\tr': 500_000,
      'x:x2\th\tq~': 250_000_000_000,
    },
    reason: "the call's whole revenue in each experiment it is in",
  },
  {
    name: 'forwarding to partners one rule allows and one it does not',
    fact: forwarding(call({ eids: [ID5, UID2] }), ['dsp-a', 'dsp-b']),
    networkId: 1234,
    adds: {
      'fw:dsp-a\t2\tsent': 1,
      'fw:dsp-a\t4\tsent': 1,
      'fw:dsp-b\t2\tsent': 1,
      'fw:dsp-b\t4\tpermissions[0]': 1,
    },
    reason: 'one counter per eid and partner: sent, or the rule that withheld it; the call itself is counted by `add`',
  },
  {
    name: 'forwarding to no partner',
    fact: forwarding(call({ eids: [ID5] }), []),
    networkId: 1234,
    adds: {},
    reason: 'nothing decided, nothing counted',
  },
  {
    name: 'forwarding to a partner id with a tab, past 128 characters',
    fact: forwarding(call({ eids: [ID5], networkId: 9 }), [`dsp\t${'z'.repeat(200)}`]),
    networkId: 9,
    adds: { [`fw:dsp ${'z'.repeat(124)}\t2\tsent`]: 1 },
    reason: "partner ids are cut to 128 characters, tabs and newlines made spaces: the counter's separators",
  },
];

/** What the table feeds: the methods both reports share. */
interface Counting {
  add(call: AdCall, at?: Date): void;
  addOutcome(call: AdCall, outcome: CallOutcome, at?: Date): void;
  addForwarding(call: AdCall, explanation: ForwardingExplanation, at?: Date): void;
}

/** Feeds one row's fact to a report, at the row's time moved by `shift` ms. */
export function feed(report: Counting, { fact, at }: Row, shift = 0): void {
  const when = new Date((at ?? AT) + shift);
  if (fact.kind === 'call') report.add(fact.call, when);
  else if (fact.kind === 'outcome') report.addOutcome(fact.call, fact.outcome, when);
  else report.addForwarding(fact.call, fact.explanation, when);
}
