/**
 * A report saved as JSON (`JSON.stringify(report.toJSON())`, or `await redisReport.toJSON()`) read back, for tools
 * that analyse a report away from the ad server (`eidkit report uplift --file`). The shape is checked with a
 * schema: what the analysis reads must be numbers where numbers are expected; other fields pass as they are.
 */
import { z } from 'zod';
import type { ReportJson } from './report.js';

/** A snapshot that is not a report, naming the first field that is wrong (`rows[3].experiments[0].holdout.calls`). */
export class ReportSnapshotError extends Error {
  override readonly name = 'ReportSnapshotError';
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`${field ? `${field}: ` : ''}${message}`);
  }
}

const count = z.number().nonnegative();
const arm = z.looseObject({
  calls: count,
  stickyCalls: count,
  eids: count,
  callsWithSources: count,
  outcomes: count,
  impressions: count,
  wins: count,
  revenue: count,
  revenueSquares: count,
});
const schema = z.looseObject({
  rows: z.array(
    z.looseObject({
      date: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
      hour: z.number().int().min(0).max(23).optional(),
      networkId: z.number().int().positive().nullable(),
      calls: count,
      forwarding: z
        .array(
          z.looseObject({
            partner: z.string().max(256),
            providerId: z.number().int().nonnegative(),
            providerName: z.string().max(256),
            sent: count,
            withheld: z.record(z.string().max(256), count),
          }),
        )
        .optional(),
      experiments: z
        .array(
          z.looseObject({
            id: z.string().regex(/^[A-Za-z0-9_.-]{1,32}$/),
            declaredShare: z.number().min(0).max(1),
            providers: z
              .array(
                z.looseObject({
                  providerId: z.number().int().nonnegative(),
                  providerName: z.string().max(256),
                  calls: count,
                }),
              )
              .max(256),
            holdout: arm,
            control: arm,
          }),
        )
        .optional(),
    }),
  ),
  droppedCalls: count,
});

/**
 * Checks that `value` (parsed JSON) is a report as `toJSON()` returns it, and returns it typed; throws a
 * {@link ReportSnapshotError} naming the first wrong field.
 */
export function reportSnapshotOf(value: unknown): ReportJson {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data as unknown as ReportJson;
  const issue = parsed.error.issues[0];
  const field = issue.path.map((k, i) => (typeof k === 'number' ? `[${k}]` : `${i ? '.' : ''}${String(k)}`)).join('');
  throw new ReportSnapshotError(field, issue.message);
}
