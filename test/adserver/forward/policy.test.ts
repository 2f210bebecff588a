import { describe, expect, test } from 'vitest';
import {
  buildBidRequest,
  createForwardingPolicy,
  explainForwarding,
  ForwardingPolicyError,
  parseAdCall,
} from '../../../src/adserver/index.js';
import type { AdCall, DemandPartner, PermissionRule } from '../../../src/adserver/index.js';
import type { Eid } from '../../../src/core/index.js';
import { EUID, ID5, RAMP, UID2, UNKNOWN, b64url, callWith } from '../fixtures.js';

const kept = (call: AdCall, partner: DemandPartner, policy = createForwardingPolicy()) => policy.eidsFor(call, partner);
const idsOf = (eids: readonly Eid[]) => eids.map((e) => e.uids[0].id);
const uid = (id: string, extra: Partial<Eid> = {}): Eid => ({
  source: 'uidapi.com',
  uids: [{ id, atype: 3 }],
  ...extra,
});

describe('permission rules', () => {
  test('an eid no rule matches goes to every partner; a rule limits its source to the partners it names', () => {
    const policy = createForwardingPolicy({ permissions: [{ source: 'id5-sync.com', partners: ['dsp-a'] }] });
    const call = callWith({ eids: [ID5, UID2] });
    expect(kept(call, { id: 'dsp-a' }, policy)).toEqual([ID5, UID2]);
    expect(kept(call, { id: 'dsp-b' }, policy)).toEqual([UID2]);
  });

  test("'*' lets every partner receive the source, [] none; sources match case-insensitively", () => {
    const policy = createForwardingPolicy({
      permissions: [
        { source: 'ID5-SYNC.com', partners: '*' },
        { source: 'uidapi.com', partners: [] },
      ],
    });
    const call = callWith({ eids: [ID5, UID2] });
    for (const id of ['dsp-a', 'anyone']) expect(kept(call, { id }, policy)).toEqual([ID5]);
  });

  // For every combination of the four fields (source, inserter, matcher, mm) an eid can share with the rules, the
  // rule naming exactly that combination is the most specific match and decides.
  const FIELDS = ['source', 'inserter', 'matcher', 'mm'] as const;
  const VALUES = { source: 'uidapi.com', inserter: 'pub.example', matcher: 'uidapi.com', mm: 3 };
  const OTHER = { source: 'other.example', inserter: 'ssp.example', matcher: 'other.example', mm: 1 };
  const subsets = Array.from({ length: 15 }, (_, i) => FIELDS.filter((_, f) => (i + 1) & (1 << f)));
  const nameOf = (fields: readonly string[]) => `p-${fields.join('+')}`;
  const everyRule = subsets.map((fields): PermissionRule => {
    return { ...Object.fromEntries(fields.map((f) => [f, VALUES[f]])), partners: [nameOf(fields)] };
  });
  /** An eid with the rules' values for `fields` and other values for the rest. */
  const eidMatching = (fields: readonly string[]): Eid => {
    const values = FIELDS.map((f) => [f, fields.includes(f) ? VALUES[f] : OTHER[f]]);
    return { uids: [{ id: 'u' }], ...Object.fromEntries(values) } as Eid;
  };

  test.each(subsets.map((s) => [nameOf(s), s] as const))(
    'the most specific matching rule decides: an eid matching %s',
    (name, fields) => {
      const policy = createForwardingPolicy({ permissions: everyRule });
      const eid = eidMatching(fields);
      const call = callWith({ eids: [eid] });
      for (const s of subsets) expect(kept(call, { id: nameOf(s) }, policy)).toEqual(nameOf(s) === name ? [eid] : []);
      const why = explainForwarding(call, [{ id: name }], policy).partners[0].kept[0].reason;
      expect(why).toEqual({
        code: 'rule',
        rule: subsets.findIndex((s) => nameOf(s) === name),
        message: expect.stringContaining(`allows ${name}`),
      });
    },
  );

  test('an eid that has none of the fields a rule names is not decided by it: every partner receives it', () => {
    const policy = createForwardingPolicy({ permissions: everyRule });
    const eid = eidMatching([]);
    expect(kept(callWith({ eids: [eid] }), { id: 'anyone' }, policy)).toEqual([eid]);
  });

  test('inserter and matcher match case-insensitively, mm exactly; an eid without the field does not match', () => {
    const policy = createForwardingPolicy({
      permissions: [{ source: 'uidapi.com', inserter: 'Pub.Example', mm: 3, partners: ['a'] }],
    });
    const call = callWith({
      eids: [
        uid('1', { inserter: 'pub.EXAMPLE', mm: 3 }),
        uid('2', { inserter: 'pub.example', mm: 4 }),
        uid('3', { mm: 3 }),
      ],
    });
    expect(idsOf(kept(call, { id: 'b' }, policy))).toEqual(['2', '3']);
    expect(idsOf(kept(call, { id: 'a' }, policy))).toEqual(['1', '2', '3']);
  });

  test('two equally specific rules that could both decide one eid are refused, naming both', () => {
    const tie = () =>
      createForwardingPolicy({
        permissions: [
          { source: 'x.example', partners: '*' },
          { source: 'x.example', inserter: 'a.example', partners: ['a'] },
          { source: 'X.example', mm: 3, partners: ['b'] },
        ],
      });
    expect(tie).toThrow(ForwardingPolicyError);
    expect(tie).toThrow(
      /permissions\[1\] and permissions\[2\] tie: both are the most specific rule for an eid with source x\.example, inserter a\.example, mm 3/,
    );
    // The same rule twice is a tie too.
    expect(() =>
      createForwardingPolicy({
        permissions: [
          { source: 's.example', partners: ['a'] },
          { source: 's.example', partners: ['b'] },
        ],
      }),
    ).toThrow(/permissions\[0\] and permissions\[1\] tie/);
  });

  test('a tie is settled by a more specific rule covering the eids both rules match; disjoint rules never tie', () => {
    const permissions: PermissionRule[] = [
      { source: 'x.example', inserter: 'a.example', partners: ['a'] },
      { source: 'x.example', mm: 3, partners: ['b'] },
      { source: 'x.example', inserter: 'a.example', mm: 3, partners: ['c'] },
      { source: 'x.example', inserter: 'other.example', mm: 1, partners: ['d'] },
    ];
    const policy = createForwardingPolicy({ permissions });
    const call = callWith({ eids: [{ source: 'x.example', uids: [{ id: 'both' }], inserter: 'a.example', mm: 3 }] });
    expect(kept(call, { id: 'c' }, policy)).toHaveLength(1);
    expect(kept(call, { id: 'a' }, policy)).toHaveLength(0);
  });

  test('a rule may name only the matcher, inserter or mm: it decides the eids that have it, of any source', () => {
    const matched = { ...UID2, matcher: 'liveintent.com' };
    const inserted = { ...ID5, inserter: 'SSP.example' };
    const inferred = { ...EUID, mm: 5 };
    const others = [ID5, UID2, { ...RAMP, matcher: 'liveramp.com', inserter: 'pub.example', mm: 3 }];
    const call = callWith({ eids: [matched, inserted, inferred, ...others] });
    const only = (rule: PermissionRule, id: string) =>
      kept(call, { id }, createForwardingPolicy({ permissions: [rule] }));
    // Other parties' ids (another matcher or inserter, none, another mm) go to everyone, as without the rule.
    expect(only({ matcher: 'LiveIntent.com', partners: ['dsp-a'] }, 'dsp-b')).toEqual([inserted, inferred, ...others]);
    expect(only({ matcher: 'LiveIntent.com', partners: ['dsp-a'] }, 'dsp-a')).toEqual(call.eids);
    expect(only({ inserter: 'ssp.example', partners: [] }, 'dsp-a')).toEqual([matched, inferred, ...others]);
    expect(only({ mm: 5, partners: ['dsp-b'] }, 'dsp-a')).toEqual([matched, inserted, ...others]);
    const policy = createForwardingPolicy({ permissions: [{ matcher: 'LiveIntent.com', partners: ['dsp-a'] }] });
    const why = explainForwarding(call, [{ id: 'dsp-c' }], policy).partners[0].removed[0].reason;
    const message = 'permissions[0] (matcher liveintent.com) allows only dsp-a';
    expect(why).toEqual({ code: 'rule', rule: 0, message });
  });

  test('specificity is the number of fields a rule names, whichever they are; the source is not special', () => {
    const policy = createForwardingPolicy({
      permissions: [
        { source: 'uidapi.com', partners: ['by-source'] },
        { matcher: 'liveintent.com', mm: 3, partners: ['by-matcher-and-mm'] },
        { source: 'uidapi.com', matcher: 'liveintent.com', partners: ['by-source-and-matcher'] },
        { source: 'uidapi.com', mm: 3, partners: ['by-source-and-mm'] },
        { matcher: 'liveintent.com', partners: ['by-matcher'] },
        { mm: 3, partners: ['by-mm'] },
        { source: 'uidapi.com', matcher: 'liveintent.com', mm: 3, partners: ['by-three'] },
      ],
    });
    const decider = (eid: Eid) =>
      explainForwarding(callWith({ eids: [eid] }), [{ id: 'nobody' }], policy).partners[0].removed[0]?.reason.rule;
    expect(decider({ ...UID2, matcher: 'liveintent.com', mm: 3 })).toBe(6); // three fields beat two
    expect(decider({ ...ID5, matcher: 'liveintent.com', mm: 3 })).toBe(1); // two without the source beat one
    expect(decider({ ...UID2, matcher: 'liveintent.com' })).toBe(2);
    expect(decider({ ...UID2, mm: 3 })).toBe(3);
    expect(decider({ ...ID5, matcher: 'liveintent.com' })).toBe(4);
    expect(decider({ ...ID5, mm: 3 })).toBe(5);
    expect(decider(UID2)).toBe(0);
  });

  test('a rule by source and a rule by matcher tie for an eid with both, unless a rule naming both settles it', () => {
    const tie = [
      { source: 'adserver.org', partners: ['dsp-a'] },
      { matcher: 'liveintent.com', partners: ['dsp-b'] },
    ];
    expect(() => createForwardingPolicy({ permissions: tie })).toThrow(
      'permissions[0] and permissions[1] tie: both are the most specific rule for an eid with source adserver.org, ' +
        'matcher liveintent.com; add a more specific rule',
    );
    const both = { source: 'adserver.org', matcher: 'liveintent.com', partners: ['dsp-b'] };
    const settled = createForwardingPolicy({ permissions: [...tie, both] });
    const tdid = { source: 'adserver.org', uids: [{ id: 't' }], matcher: 'liveintent.com' };
    expect(kept(callWith({ eids: [tdid] }), { id: 'dsp-b' }, settled)).toEqual([tdid]);
    expect(kept(callWith({ eids: [tdid] }), { id: 'dsp-a' }, settled)).toEqual([]);
    // mm 0 is a value like any other: { mm: 0 } and { inserter } tie for an eid with both.
    const zero = [
      { mm: 0, partners: '*' as const },
      { inserter: 'ssp.example', partners: [] },
    ];
    expect(() => createForwardingPolicy({ permissions: zero })).toThrow(
      /permissions\[0\] and permissions\[1\] tie: .* an eid with inserter ssp\.example, mm 0;/,
    );
    // Rules naming different values of one field never tie.
    const apart = [
      { matcher: 'a.example', partners: [] },
      { matcher: 'b.example', partners: '*' as const },
    ];
    expect(() => createForwardingPolicy({ permissions: apart })).not.toThrow();
  });

  test('a broken policy lists its first 20 ties, not every one, and a large valid one compiles quickly', () => {
    const same = Array.from({ length: 2_000 }, () => ({ source: 'x.example', partners: ['a'] }));
    try {
      createForwardingPolicy({ permissions: same });
      expect.unreachable();
    } catch (e) {
      expect((e as ForwardingPolicyError).problems).toHaveLength(21);
      expect((e as ForwardingPolicyError).problems[20]).toBe('more than 20 ties: the others are not listed');
    }
    // 10,000 rules on one source: compared pair by pair that was 50 million comparisons.
    const many = Array.from({ length: 9_999 }, (_, i) => ({ source: 'x.ex', inserter: `i${i}.ex`, partners: ['a'] }));
    const start = performance.now();
    createForwardingPolicy({ permissions: [...many, { source: 'x.ex', partners: '*' }] });
    expect(performance.now() - start).toBeLessThan(5_000);
  });

  test('a bad rule is refused when the policy is created, the error naming the rule and field', () => {
    const bad = (permissions: unknown) => () => createForwardingPolicy({ permissions } as never);
    expect(bad([{ source: '', partners: '*' }])).toThrow(/permissions\[0\]\.source: must be a non-empty string/);
    expect(
      bad([
        { source: 'a.example', partners: '*' },
        { source: 'b.example', partners: 'dsp-a' },
      ]),
    ).toThrow(/permissions\[1\]\.partners: must be '\*' or a list of partner ids/);
    expect(bad([{ source: 'a.example', partners: ['*', 'x'] }])).toThrow(/permissions\[0\]\.partners\[0\]/);
    expect(bad([{ source: 'a.example', mm: 1.5, partners: '*' }])).toThrow(/permissions\[0\]\.mm: must be an integer/);
    expect(bad([{ source: 'a.example', partner: ['x'], partners: '*' }])).toThrow(/permissions\[0\]: .*"partner"/);
    expect(() =>
      createForwardingPolicy({
        partners: [{ id: 'dsp-a' }],
        permissions: [{ source: 'a.example', partners: ['dsp-b'] }],
      }),
    ).toThrow(/permissions\[0\]\.partners: unknown partner "dsp-b"/);
    expect(bad([{ partners: '*' }])).toThrow(/permissions\[0\]: names none of source, inserter, matcher, mm/);
    const emptyInserter = [
      { source: 'a.example', partners: [] },
      { mm: 3, inserter: '', partners: [] },
    ];
    expect(bad(emptyInserter)).toThrow(/permissions\[1\]\.inserter: must be a non-empty string/);
    expect(bad([{ matcher: 7, partners: [] }])).toThrow(/permissions\[0\]\.matcher/);
    try {
      bad([
        { source: 1, partners: '*' },
        { source: 'b', partners: 1 },
      ])();
    } catch (e) {
      expect((e as ForwardingPolicyError).problems).toHaveLength(2);
    }
  });
});

test('a broken policy is reported in one round: field errors and the checks across rules together', () => {
  let problems: string[] = [];
  try {
    createForwardingPolicy({
      partners: [{ id: 'dsp-a' }, { id: '' }],
      permissions: [
        { source: 'id5-sync.com', partners: ['dsp-x'] }, // unknown partner: found with the others
        { source: 7, partners: '*' }, // a field error
        { source: 'uidapi.com', partners: ['dsp-a'] },
        { source: 'uidapi.com', partners: [] }, // ties with the rule above
      ],
    });
  } catch (e) {
    problems = (e as ForwardingPolicyError).problems;
  }
  expect(problems).toEqual([
    expect.stringMatching(/^permissions\[1\]\.source: /),
    'partners[1].id: must be a non-empty partner id',
    'permissions[0].partners: unknown partner "dsp-x"',
    expect.stringMatching(/^permissions\[2\] and permissions\[3\] tie: /),
  ]);
});

describe('partner ids in permissions', () => {
  // As Prebid Server matches bidder names: "BIDDERA" allows bidderA.
  const policy = createForwardingPolicy({ permissions: [{ source: 'id5-sync.com', partners: ['BIDDERA'] }] });
  const call = callWith({ eids: [ID5, UID2] });

  test('a partner named in a rule matches case-insensitively, in bid requests and in explanations', () => {
    for (const id of ['bidderA', 'biddera', 'BIDDERA']) {
      expect(kept(call, { id }, policy), id).toEqual([ID5, UID2]);
      expect(buildBidRequest(call, { id }, { policy }).user?.eids, id).toEqual([ID5, UID2]);
      expect(explainForwarding(call, [{ id }], policy).partners[0].removed, id).toEqual([]);
    }
    expect(kept(call, { id: 'bidderB' }, policy)).toEqual([UID2]);
    const why = explainForwarding(call, [{ id: 'bidderB' }], policy).partners[0].removed[0].reason;
    expect(why.message).toBe('permissions[0] (source id5-sync.com) allows only BIDDERA');
  });

  test('case-insensitively too for a DMP and past 28 named partners (the paths without partner bits)', () => {
    const dmp: DemandPartner = { id: 'DMP-One', kind: 'dmp', preferredProvider: 'id5-sync.com' };
    const dmpPolicy = createForwardingPolicy({ permissions: [{ source: 'id5-sync.com', partners: ['dmp-one'] }] });
    expect(kept(call, dmp, dmpPolicy)).toEqual([ID5]);
    expect(kept(call, { ...dmp, id: 'dmp-two' }, dmpPolicy)).toEqual([]);
    const crowd = Array.from({ length: 30 }, (_, i) => `Partner-${i}`);
    const wide = createForwardingPolicy({ permissions: [{ source: 'id5-sync.com', partners: crowd }] });
    expect(kept(call, { id: 'PARTNER-29' }, wide)).toEqual([ID5, UID2]);
    expect(kept(call, { id: 'partner-30' }, wide)).toEqual([UID2]);
  });

  test('a policy is checked against the partner list case-insensitively; partners equal up to case are refused', () => {
    const partners = [{ id: 'bidderA' }, { id: 'dsp-b' }];
    const naming = (ids: string[]) => () =>
      createForwardingPolicy({ partners, permissions: [{ source: 'id5-sync.com', partners: ids }] });
    expect(naming(['BIDDERA', 'DSP-B'])).not.toThrow();
    expect(naming(['bidderC'])).toThrow(/permissions\[0\]\.partners: unknown partner "bidderC"/);
    expect(() => createForwardingPolicy({ partners: [...partners, { id: 'BidderA' }] })).toThrow(
      /partners\[2\]\.id: "BidderA" is partners\[0\]\.id up to case \(ids are case-insensitive\)/,
    );
  });
});

describe('bid requests with a policy', () => {
  const call = parseAdCall({
    url: `https://ads.example/ac?nwid=1&fmtid=2&gdpr=0&us_privacy=1YNN&eids=${b64url([ID5, UID2, { ...EUID, inserter: 'pub.example', matcher: 'euid.eu', mm: 3 }, UNKNOWN])}`,
    headers: { cookie: 'pid=p1' },
  });
  const policy = createForwardingPolicy({
    permissions: [
      { source: 'id5-sync.com', partners: ['secret-partner'] },
      { source: 'euid.eu', inserter: 'pub.example', partners: '*' },
    ],
  });

  test("2.5 puts the kept eids in user.ext.eids, 2.6 in user.eids, 'both' in both with the privacy signals in both places", () => {
    const expected = [UID2, call.eids[2], UNKNOWN];
    const r26 = buildBidRequest(call, { id: 'dsp', openrtb: '2.6' }, { policy });
    expect(r26.user).toEqual({ id: 'p1', eids: expected });
    expect(r26.regs).toEqual({ gdpr: 0, us_privacy: '1YNN' });
    const r25 = buildBidRequest(call, { id: 'dsp', openrtb: '2.5' }, { policy });
    expect(r25.user).toEqual({ id: 'p1', ext: { eids: expected } });
    expect(r25.regs).toEqual({ ext: { gdpr: 0, us_privacy: '1YNN' } });
    const both = buildBidRequest(call, { id: 'dsp', openrtb: 'both' }, { policy });
    expect(both.user).toEqual({ id: 'p1', eids: expected, ext: { eids: expected } });
    expect(both.regs).toEqual({ gdpr: 0, us_privacy: '1YNN', ext: { gdpr: 0, us_privacy: '1YNN' } });
  });

  test('keeps provenance and every other eid field exactly as received', () => {
    const [euid] = buildBidRequest(call, { id: 'dsp' }, { policy }).user!.eids!.filter((e) => e.source === 'euid.eu');
    expect(euid).toEqual({ ...EUID, inserter: 'pub.example', matcher: 'euid.eu', mm: 3 });
    expect(JSON.stringify(buildBidRequest(call, { id: 'secret-partner' }, { policy }).user?.eids)).toBe(
      JSON.stringify(call.eids),
    );
  });

  test('nothing of the policy appears in any bid request', () => {
    for (const openrtb of ['2.5', '2.6', 'both'] as const) {
      const json = JSON.stringify(buildBidRequest(call, { id: 'dsp', openrtb }, { policy }));
      expect(json).not.toMatch(/secret-partner|permissions|eidpermissions|allowSources|pub\.example"\s*,\s*"partners/);
      expect(json).not.toContain('id5-sync.com');
    }
  });

  test('extra eids (envelope expansion) are subject to the same rules', () => {
    const extra = [{ source: 'id5-sync.com', uids: [{ id: 'from-envelope' }], inserter: 'ads.example' }];
    expect(buildBidRequest(call, { id: 'secret-partner' }, { policy, extraEids: extra }).user?.eids).toContainEqual(
      extra[0],
    );
    expect(buildBidRequest(call, { id: 'dsp' }, { policy, extraEids: extra }).user?.eids).not.toContainEqual(extra[0]);
  });

  test("a DMP still receives only its preferred provider's eids, and explain says so", () => {
    const dmp: DemandPartner & { openrtb?: '2.6' } = { id: 'dmp', kind: 'dmp', preferredProvider: 'uidapi.com' };
    expect(buildBidRequest(call, dmp, { policy }).user?.eids).toEqual([UID2]);
    const removed = explainForwarding(call, [dmp], policy).partners[0].removed;
    expect(removed.map((d) => d.reason.code)).toEqual(['dmp', 'dmp', 'dmp']);
    expect(removed[0].reason.message).toMatch(/preferred provider's eids \(Unified ID 2\.0\)/);
  });
});

describe('one policy, many calls', () => {
  test('never mixes one call into another, nor misses eids set on a call between two partners', () => {
    const policy = createForwardingPolicy({ permissions: [{ source: 'id5-sync.com', partners: ['a'] }] });
    const one = callWith({ eids: [ID5, UID2] });
    const two = callWith({ eids: [EUID] });
    expect(kept(one, { id: 'b' }, policy)).toEqual([UID2]);
    expect(kept(two, { id: 'b' }, policy)).toEqual([EUID]);
    expect(kept(one, { id: 'a' }, policy)).toEqual([ID5, UID2]);
    one.eids = [UNKNOWN];
    expect(kept(one, { id: 'a' }, policy)).toEqual([UNKNOWN]);
    one.eids.push(ID5);
    expect(kept(one, { id: 'b' }, policy)).toEqual([UNKNOWN]);
    one.consent = { usPrivacy: '1YYN' };
    expect(kept(one, { id: 'a' }, policy)).toEqual([]);
  });
});

describe('explainForwarding', () => {
  test('lists, per partner, each eid kept or removed with the rule that decided', () => {
    const policy = createForwardingPolicy({ permissions: [{ source: 'id5-sync.com', partners: ['dsp-a'] }] });
    const out = explainForwarding(
      callWith({ eids: [ID5, UID2] }),
      [{ id: 'dsp-a' }, { id: 'dsp-b', openrtb: '2.5' }],
      policy,
    );
    expect(
      out.partners.map((p) => [p.partner, p.openrtb, p.kept.map((d) => d.index), p.removed.map((d) => d.index)]),
    ).toEqual([
      ['dsp-a', '2.6', [0, 1], []],
      ['dsp-b', '2.5', [1], [0]],
    ]);
    expect(out.partners[1].removed[0].reason).toEqual({
      code: 'rule',
      rule: 0,
      message: 'permissions[0] (source id5-sync.com) allows only dsp-a',
    });
    expect(out.partners[1].kept[0].reason).toEqual({
      code: 'no-rule',
      message: 'no permission rule matches uidapi.com: every partner receives it (default)',
    });
  });

  test('without a policy, every eid is kept for every DSP: what buildBidRequest sends today', () => {
    const call = callWith({ eids: [ID5, UID2] });
    const out = explainForwarding(call, [{ id: 'a' }, { id: 'b', openrtb: 'both' }]);
    expect(out.partners.every((p) => p.removed.length === 0 && p.kept.length === 2)).toBe(true);
  });
});
