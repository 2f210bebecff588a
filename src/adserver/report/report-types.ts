/**
 * The report's shapes, apart from the code that fills them: the in-memory report, the Redis report, the CSV writer
 * and the experiments' counters all read them, and none imports another for a type.
 */

/** Calls with and without a value. */
export interface WithWithout {
  with: number;
  without: number;
}

/** One provider's line of the Extended Ids dimension. */
export interface ExtendedIdsCount {
  providerId: number;
  providerName: string;
  /** Ad calls that carried at least one eid of this provider. */
  calls: number;
}

/** The three dimensions for one day (or one hour of it) and one network. */
export interface ReportRow {
  /** UTC day, `YYYY-MM-DD`. */
  date: string;
  /** UTC hour 0–23, in hourly rows only (`granularity: 'hour'`). */
  hour?: number;
  /** Network id; null for calls without a valid network id. */
  networkId: number | null;
  /** All ad calls counted in this row. */
  calls: number;
  /** Extended Ids: per provider (ascending id, `Unknown` = 0 included), the calls carrying its eids. */
  extendedIds: ExtendedIdsCount[];
  /** Calls that carried no eid at all. */
  callsWithoutEids: number;
  /** Has User Uid. */
  hasUserUid: WithWithout;
  /** Has User Pid. */
  hasUserPid: WithWithout;
  /** Which id served as the user id: `uid` when present (it overrides `pid`), else `pid`, else none. */
  userId: { uid: number; pid: number; none: number };
  /** Has DMP Id: per configured DMP (ReportOptions `dmps`), calls with and without its preferred provider's id. */
  hasDmpId?: Record<string, WithWithout>;
  /**
   * Eids forwarded and withheld, per partner and provider (from `addForwarding`): the eids sent, and those withheld
   * by reason (`gpp usnat Gpc=1`, `permissions[0]`, …: docs/wire-format.md#explaining-decisions). Absent when no
   * decision was counted.
   */
  forwarding?: ForwardingCount[];
  /**
   * Holdout experiments: per experiment and arm, the calls, eids and outcomes (from `add` and `addOutcome`;
   * docs/ad-server.md#holdout-experiments). Absent when no call of the row was in one.
   */
  experiments?: ExperimentCount[];
}

/** One partner × provider line of the forwarding counts. */
export interface ForwardingCount {
  partner: string;
  providerId: number;
  providerName: string;
  /** Eids of this provider sent to the partner. */
  sent: number;
  /** Eids of this provider withheld from the partner, by reason. */
  withheld: Record<string, number>;
}

/** A whole report: every day (or hour) and network kept, oldest first, then by network id. */
export interface ReportJson {
  rows: ReportRow[];
  /** Calls not counted: a day already had `maxNetworksPerDay` networks, or a shared report's buffer was full. */
  droppedCalls: number;
}

/** Rows per UTC day (default) or per UTC hour. */
export type ReportGranularity = 'day' | 'hour';

/** What a report read returns. */
export interface ReportReadOptions {
  /** `'day'` (default) or `'hour'`. */
  granularity?: ReportGranularity;
}

/** Counters of one period and network: field (see counters.ts) → calls. */
export type Counters = Map<string, number>;

/** One arm's counts. Per-call revenue is the revenue of the call's outcome (0 for calls without one). */
export interface ExperimentArmCount {
  /** Ad calls in this arm. */
  calls: number;
  /** Of them, calls whose arm was kept per browser; the others were drawn per page view (no storage consent). */
  stickyCalls: number;
  /** Eids the calls carried (after the tag withheld the held-out sources in the held-out arm). */
  eids: number;
  /**
   * Calls that carried at least one of the experiment's sources: coverage in the control arm, leakage in the
   * held-out arm (should be 0).
   */
  callsWithSources: number;
  /** Outcomes fed back (`addOutcome`): at most one per call. */
  outcomes: number;
  /** Outcomes with an impression served. */
  impressions: number;
  /** Outcomes the call's auction won. */
  wins: number;
  /** Sum of the revenue of the outcomes (your currency, to the millionth). */
  revenue: number;
  /** Sum of the squares of each outcome's revenue: with `revenue` and `calls`, the variance of revenue per call. */
  revenueSquares: number;
}

/** One experiment's line of a report row. */
export interface ExperimentCount {
  /** The experiment's name. */
  id: string;
  /** The held-out share the calls declared, 0–1 (their mean, should they disagree). */
  declaredShare: number;
  /** The providers of the held-out sources, and the calls that named each. */
  providers: { providerId: number; providerName: string; calls: number }[];
  holdout: ExperimentArmCount;
  control: ExperimentArmCount;
}

/** What the ad server feeds back about one ad call: what it served and earned, all of it, once per call. */
export interface CallOutcome {
  /** An impression was served for the call. */
  impression?: boolean;
  /** The call's total revenue (≥ 0, in your currency; counted to the millionth). Default 0. */
  revenue?: number;
  /** The call's auction was won (a bid above the floor). Default: `impression`. */
  won?: boolean;
}
