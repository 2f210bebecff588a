// The frequency-cap rule as a table: per row a user, caps, the impressions counted before (by the store, or by the
// process itself when the store did not answer), what the store did, and the decision expected with its reason.
import { describe, expect, test } from 'vitest';
import fc from 'fast-check';
import { capReason, checksOf, decideCap, impressionsSince } from '../../../src/adserver/capping/rule.js';
import type { CapReason } from '../../../src/adserver/capping/rule.js';
import { createFrequencyCapper, resolveCap } from '../../../src/adserver/capping/index.js';
import { callWith } from '../fixtures.js';
import type { CappingUser, FrequencyCap } from '../../../src/adserver/capping/index.js';

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
// Wednesday 12 March 2025, 15:00 UTC: its ISO week began Monday 10 March, its month on 1 March.
const AT = Date.UTC(2025, 2, 12, 15);
const utc = (month: number, day: number, hour = 0, minute = 0) => Date.UTC(2025, month - 1, day, hour, minute);
const ago = (...ms: number[]) => ms.map((m) => AT - m);

const PID: CappingUser = { kind: 'pid', key: 'pid:p1' };
const UID: CappingUser = { kind: 'uid', key: 'uid:1234:u1' };
const ALT: CappingUser = { kind: 'alternative', key: 'alt:2:ID5*abc' };
const NONE: CappingUser = { kind: 'none' };

interface Row {
  name: string;
  user?: CappingUser;
  caps: FrequencyCap[];
  /** Per item, the impressions counted before this one (ms since the epoch). */
  history?: Record<string, number[]>;
  /** What the store did: answered (default), refused whatever its counts, failed, or timed out. */
  store?: 'answered' | 'refused' | 'error' | 'timeout';
  withoutUser?: 'serve' | 'block';
  onStoreError?: 'serve' | 'block';
  allowed: boolean;
  reason: CapReason;
  /** The count of each window of each cap, in order (the decision's `count` is the first). */
  counts: number[];
}

const deal = (cap: Omit<FrequencyCap, 'item'>, item = 'deal:1'): FrequencyCap => ({ item, ...cap });

const rows: Row[] = [
  // Rolling windows of minutes and hours.
  {
    name: '3 per 5 min, 2 in it: under',
    caps: [deal({ max: 3, windowMs: 5 * MIN })],
    history: { 'deal:1': ago(MIN, 2 * MIN) },
    allowed: true,
    reason: 'under-max',
    counts: [2],
  },
  {
    name: '3 per 5 min, 3 in it: at the max',
    caps: [deal({ max: 3, windowMs: 5 * MIN })],
    history: { 'deal:1': ago(MIN, 2 * MIN, 4 * MIN) },
    allowed: false,
    reason: 'at-max',
    counts: [3],
  },
  {
    name: '3 per 5 min, older ones slid out',
    caps: [deal({ max: 3, windowMs: 5 * MIN })],
    history: { 'deal:1': ago(7 * MIN, 6 * MIN, MIN) },
    allowed: true,
    reason: 'under-max',
    counts: [1],
  },
  {
    name: 'a window includes its first instant (exactly 5 min ago counts)',
    caps: [deal({ max: 3, windowMs: 5 * MIN })],
    history: { 'deal:1': ago(5 * MIN, 2 * MIN, MIN) },
    allowed: false,
    reason: 'at-max',
    counts: [3],
  },
  {
    name: '2 per hour, both within the hour: at the max',
    caps: [deal({ max: 2, windowMs: HOUR })],
    history: { 'deal:1': ago(59 * MIN, 30 * MIN) },
    allowed: false,
    reason: 'at-max',
    counts: [2],
  },
  {
    name: '2 per hour, one 61 min ago: under',
    caps: [deal({ max: 2, windowMs: HOUR })],
    history: { 'deal:1': ago(61 * MIN, 30 * MIN) },
    allowed: true,
    reason: 'under-max',
    counts: [1],
  },
  // Calendar and rolling days.
  {
    name: '3 a UTC day: yesterday 23:59 does not count, midnight does',
    caps: [deal({ max: 3, per: 'day' })],
    history: { 'deal:1': [utc(3, 11, 23, 59), utc(3, 12), utc(3, 12, 10)] },
    allowed: true,
    reason: 'under-max',
    counts: [2],
  },
  {
    name: '3 a UTC day, 4 recorded (serve first, count later): over the max',
    caps: [deal({ max: 3, per: 'day' })],
    history: { 'deal:1': [utc(3, 12, 1), utc(3, 12, 2), utc(3, 12, 3), utc(3, 12, 4)] },
    allowed: false,
    reason: 'at-max',
    counts: [4],
  },
  {
    name: '3 a UTC day, all yesterday: a new day starts at 0',
    caps: [deal({ max: 3, per: 'day' })],
    history: { 'deal:1': [utc(3, 11, 9), utc(3, 11, 12), utc(3, 11, 20)] },
    allowed: true,
    reason: 'under-max',
    counts: [0],
  },
  {
    name: '3 a rolling day: yesterday evening still counts',
    caps: [deal({ max: 3, per: 'day', rolling: true })],
    history: { 'deal:1': [utc(3, 11, 16), utc(3, 11, 23, 59), utc(3, 12)] },
    allowed: false,
    reason: 'at-max',
    counts: [3],
  },
  {
    name: '3 a rolling day: 24 h and 1 min ago is out',
    caps: [deal({ max: 3, per: 'day', rolling: true })],
    history: { 'deal:1': ago(DAY + MIN, HOUR, MIN) },
    allowed: true,
    reason: 'under-max',
    counts: [2],
  },
  // ISO weeks, rolling weeks.
  {
    name: '2 an ISO week: Sunday 23:00 is last week, Monday 00:00 this one',
    caps: [deal({ max: 2, per: 'week' })],
    history: { 'deal:1': [utc(3, 9, 23), utc(3, 10)] },
    allowed: true,
    reason: 'under-max',
    counts: [1],
  },
  {
    name: '2 an ISO week, Monday and Tuesday: at the max',
    caps: [deal({ max: 2, per: 'week' })],
    history: { 'deal:1': [utc(3, 10), utc(3, 11, 8)] },
    allowed: false,
    reason: 'at-max',
    counts: [2],
  },
  {
    name: '2 a rolling week: last Thursday 16:00 counts',
    caps: [deal({ max: 2, per: 'week', rolling: true })],
    history: { 'deal:1': [utc(3, 6, 16), utc(3, 10)] },
    allowed: false,
    reason: 'at-max',
    counts: [2],
  },
  // Calendar and rolling months.
  {
    name: '3 a UTC month: 28 February does not count, 1 March 00:00 does',
    caps: [deal({ max: 3, per: 'month' })],
    history: { 'deal:1': [utc(2, 28, 23, 59), utc(2, 28, 23, 59), utc(3, 1), utc(3, 5)] },
    allowed: true,
    reason: 'under-max',
    counts: [2],
  },
  {
    name: '3 a UTC month, 3 in March: at the max',
    caps: [deal({ max: 3, per: 'month' })],
    history: { 'deal:1': [utc(3, 1), utc(3, 5), utc(3, 12, 14)] },
    allowed: false,
    reason: 'at-max',
    counts: [3],
  },
  {
    name: '3 a rolling month: 30 days back, February counts',
    caps: [deal({ max: 3, per: 'month', rolling: true })],
    history: { 'deal:1': [utc(2, 11, 16), utc(2, 28), utc(3, 5)] },
    allowed: false,
    reason: 'at-max',
    counts: [3],
  },
  // Lifetime.
  {
    name: '2 a lifetime: 300 days ago still counts',
    caps: [deal({ max: 2, per: 'lifetime' })],
    history: { 'deal:1': ago(300 * DAY, DAY) },
    allowed: false,
    reason: 'at-max',
    counts: [2],
  },
  {
    name: '2 a lifetime, one so far: under',
    caps: [deal({ max: 2, per: 'lifetime' })],
    history: { 'deal:1': ago(200 * DAY) },
    allowed: true,
    reason: 'under-max',
    counts: [1],
  },
  // Several windows, several caps.
  {
    name: '3 a day and 5 a week: the week is full though the day is not',
    caps: [
      deal({
        windows: [
          { max: 3, per: 'day' },
          { max: 5, per: 'week' },
        ],
      }),
    ],
    history: { 'deal:1': [utc(3, 10, 1), utc(3, 10, 2), utc(3, 11, 1), utc(3, 11, 2), utc(3, 12, 9)] },
    allowed: false,
    reason: 'at-max',
    counts: [1, 5],
  },
  {
    name: '3 a day and 5 a week, both under',
    caps: [
      deal({
        windows: [
          { max: 3, per: 'day' },
          { max: 5, per: 'week' },
        ],
      }),
    ],
    history: { 'deal:1': [utc(3, 10, 1), utc(3, 11, 2), utc(3, 12, 9)] },
    allowed: true,
    reason: 'under-max',
    counts: [1, 3],
  },
  {
    name: 'two caps: the second at its max refuses both',
    caps: [deal({ max: 2, per: 'day' }), deal({ max: 1, per: 'day' }, 'campaign:9')],
    history: { 'deal:1': [utc(3, 12, 9)], 'campaign:9': [utc(3, 12, 10)] },
    allowed: false,
    reason: 'at-max',
    counts: [1, 1],
  },
  {
    name: 'two caps, each under its own max',
    caps: [deal({ max: 2, per: 'day' }), deal({ max: 3, windowMs: HOUR }, 'campaign:9')],
    history: { 'deal:1': [utc(3, 12, 9)], 'campaign:9': ago(10 * MIN, 20 * MIN) },
    allowed: true,
    reason: 'under-max',
    counts: [1, 2],
  },
  {
    name: 'three caps with a lifetime and a 10-min window: only the lifetime one is full',
    caps: [
      deal({ max: 5, per: 'day' }),
      deal({ max: 1, per: 'lifetime' }, 'creative:7'),
      deal({ max: 2, windowMs: 10 * MIN }, 'campaign:9'),
    ],
    history: { 'creative:7': ago(100 * DAY) },
    allowed: false,
    reason: 'at-max',
    counts: [0, 1, 0],
  },
  // User kinds.
  {
    name: 'a uid user is capped like any other',
    user: UID,
    caps: [deal({ max: 1, per: 'day' })],
    history: { 'deal:1': [utc(3, 12, 1)] },
    allowed: false,
    reason: 'at-max',
    counts: [1],
  },
  {
    name: 'an alternative-id user is capped like any other',
    user: ALT,
    caps: [deal({ max: 2, per: 'day' })],
    history: { 'deal:1': [utc(3, 12, 1)] },
    allowed: true,
    reason: 'under-max',
    counts: [1],
  },
  {
    name: 'no usable id: served uncapped by default',
    user: NONE,
    caps: [deal({ max: 1, per: 'day' })],
    allowed: true,
    reason: 'no-user-serve',
    counts: [0],
  },
  {
    name: "no usable id and withoutUser 'block': refused",
    user: NONE,
    caps: [deal({ max: 1, per: 'day' })],
    withoutUser: 'block',
    allowed: false,
    reason: 'no-user-block',
    counts: [0],
  },
  {
    name: "withoutUser 'block' does not touch a user with an id",
    caps: [deal({ max: 2, per: 'day' })],
    withoutUser: 'block',
    allowed: true,
    reason: 'under-max',
    counts: [0],
  },
  // When the store did not answer: the shadow count (what this process counted) and the policy.
  {
    name: 'store timed out, a user never seen: served (fail open)',
    caps: [deal({ max: 3, per: 'day' })],
    store: 'timeout',
    allowed: true,
    reason: 'store-down-serve',
    counts: [0],
  },
  {
    name: 'store timed out, this process served 2 of 3: served',
    caps: [deal({ max: 3, per: 'day' })],
    history: { 'deal:1': [utc(3, 12, 9), utc(3, 12, 14)] },
    store: 'timeout',
    allowed: true,
    reason: 'store-down-serve',
    counts: [2],
  },
  {
    name: 'store failed, this process served the cap: the shadow count refuses',
    caps: [deal({ max: 2, per: 'day' })],
    history: { 'deal:1': [utc(3, 12, 9), utc(3, 12, 14)] },
    store: 'error',
    allowed: false,
    reason: 'shadow-capped',
    counts: [2],
  },
  {
    name: "store failed and onStoreError 'block': refused, even a user never seen",
    caps: [deal({ max: 3, per: 'day' })],
    store: 'error',
    onStoreError: 'block',
    allowed: false,
    reason: 'store-down-block',
    counts: [0],
  },
  {
    name: "onStoreError 'block' changes nothing while the store answers",
    caps: [deal({ max: 3, per: 'day' })],
    history: { 'deal:1': [utc(3, 12, 9)] },
    onStoreError: 'block',
    allowed: true,
    reason: 'under-max',
    counts: [1],
  },
  {
    name: 'a store that refused is not overruled by its counts',
    caps: [deal({ max: 3, per: 'day' })],
    history: { 'deal:1': [utc(3, 12, 9)] },
    store: 'refused',
    allowed: false,
    reason: 'at-max',
    counts: [1],
  },
  {
    name: 'no usable id while the store is down: no store call, served',
    user: NONE,
    caps: [deal({ max: 1, per: 'day' })],
    store: 'timeout',
    allowed: true,
    reason: 'no-user-serve',
    counts: [0],
  },
];

describe('the frequency-cap rule, as a table', () => {
  test('the table covers every reason and at least 25 rows', () => {
    expect(rows.length).toBeGreaterThanOrEqual(25);
    const reasons = new Set(rows.map((r) => r.reason));
    expect([...reasons].sort()).toEqual([
      'at-max',
      'no-user-block',
      'no-user-serve',
      'shadow-capped',
      'store-down-block',
      'store-down-serve',
      'under-max',
    ]);
  });

  test.each(rows)('$name', (row) => {
    const user = row.user ?? PID;
    const caps = row.caps.map(resolveCap);
    // What the store (or, when it did not answer, this process) counted: each window from its start at AT.
    const counts = user.key
      ? checksOf(user.key, caps, AT).map((c) =>
          c.windows.map((w) =>
            impressionsSince(
              [...(row.history?.[c.item] ?? [])].sort((a, b) => a - b),
              w.since,
            ),
          ),
        )
      : undefined;
    const store = row.store ?? 'answered';
    const down = store === 'error' || store === 'timeout';
    const facts = {
      user,
      caps,
      counts,
      ...(down ? { storeError: store } : { storeAllowed: store !== 'refused' }),
      withoutUser: row.withoutUser ?? 'serve',
      onStoreError: row.onStoreError ?? 'serve',
    } as const;
    const reason = capReason(facts);
    const decision = decideCap(facts);
    expect({ allowed: decision.allowed, reason }).toEqual({ allowed: row.allowed, reason: row.reason });
    expect(decision.windows.map((w) => w.count)).toEqual(row.counts);
    expect(decision.count).toBe(row.counts[0]);
    expect(decision.user).toBe(user);
    expect(decision.storeError).toBe(down && user.key ? store : undefined);
    expect(decision.windows.map((w) => w.item)).toEqual(caps.flatMap((c) => c.windows.map(() => c.item)));
  });
});

describe('the capper decides as the rule on a plain history (property)', () => {
  // The capper's fast path (resolved caps and calendar starts cached, the in-memory store's sorted, trimmed,
  // LRU-bounded lists, the shadow count seeded on every answer) against a fresh model: every impression kept in a
  // plain list, each window counted from scratch, the rule applied to those counts.
  const CAPS: FrequencyCap[] = [
    {
      item: 'a',
      windows: [
        { max: 2, per: 'day' },
        { max: 3, per: 'week' },
      ],
    },
    { item: 'b', max: 2, windowMs: HOUR },
    { item: 'c', max: 3, per: 'month', rolling: true },
    { item: 'd', max: 2, per: 'lifetime' },
  ];
  const op = fc.record({
    user: fc.integer({ min: 0, max: 2 }),
    caps: fc.subarray([0, 1, 2, 3], { minLength: 1, maxLength: 2 }),
    mode: fc.constantFrom('take', 'take', 'check', 'record'),
    advance: fc.oneof(fc.integer({ min: 0, max: 2 * HOUR }), fc.integer({ min: 0, max: 3 * DAY })),
  });

  test('any stream of takes, checks and records over users, caps and time', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 60 }), async (ops) => {
        let now = AT;
        const capper = createFrequencyCapper({ now: () => now });
        const history = new Map<string, number[]>();
        for (const o of ops) {
          now += o.advance;
          const caps = o.caps.map((i) => CAPS[i]);
          const call = callWith({ pid: `p${o.user}` });
          const key = (item: string) => `pid:p${o.user}|${item}`;
          // The model resolves copies, so that no cached window start carries from one decision to the next.
          const resolved = caps.map((c) => resolveCap({ ...c }));
          const counts = resolved.map((c) =>
            c.windows.map((w) => impressionsSince(history.get(key(c.item)) ?? [], w.since(now))),
          );
          const user = capper.userOf(call);
          const expected = decideCap({ user, caps: resolved, counts, withoutUser: 'serve', onStoreError: 'serve' });
          if (o.mode === 'record') await capper.record(call, caps);
          else expect(await capper[o.mode](call, caps)).toEqual(expected);
          if (o.mode === 'record' || (o.mode === 'take' && expected.allowed))
            for (const c of resolved) history.set(key(c.item), [...(history.get(key(c.item)) ?? []), now]);
        }
      }),
      { numRuns: 200 },
    );
  });
});
