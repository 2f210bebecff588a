/**
 * DMP-preferred ids (docs/wire-format.md#dmp-preferred-providers):
 * the operator declares each DMP's one provider (`dmps: [{ dmp, source }]`), and `dmpIds` picks that provider's
 * id out of an ad call: the key a DMP's segment lookup uses.
 */
import { ConfigurationError, issueOfProblem } from '../../core/config-error.js';
import { formatPath } from '../../core/path.js';
import { z } from 'zod';
import { isKnownSource, providerForSource } from '../../core/index.js';
import type { Provider } from '../../core/index.js';
import type { AdCall } from '../parse/index.js';

/** One DMP and the source of its preferred provider, agreed with the operator. */
export interface DmpConfig {
  /** The DMP's name, as the operator calls it (`lotame`, `permutive`). */
  dmp: string;
  /** The `source` of its preferred provider; must be in the provider registry. */
  source: string;
}

/** A `dmps` configuration that cannot be used; the message names the entry. */
export class DmpConfigError extends ConfigurationError {
  override name = 'DmpConfigError';
  /** `problems`: every problem, `dmps[1].source: …`; `issues` holds each with its path. */
  constructor(problems: string[]) {
    super(`invalid dmps configuration: ${problems.join('; ')}`, problems.map(issueOfProblem));
  }
}

const DmpsSchema = z
  .array(
    z.strictObject({
      dmp: z.string().trim().min(1, 'must be a non-empty name'),
      source: z
        .string()
        .trim()
        .min(1, 'must be a provider source')
        .refine(isKnownSource, { message: 'is not a registered provider source' }),
    }),
  )
  .superRefine((list, ctx) => {
    // One preferred provider per DMP: a second entry for the same DMP is an error, whatever its source.
    const seen = new Map<string, number>();
    list.forEach((d, i) => {
      const key = d.dmp.toLowerCase();
      const first = seen.get(key);
      if (first === undefined) seen.set(key, i);
      else
        ctx.addIssue({
          code: 'custom',
          path: [i, 'dmp'],
          message: `"${d.dmp}" already has a preferred provider (dmps[${first}]); one per DMP`,
        });
    });
  });

/**
 * Validates the operator's `dmps` configuration; throws a {@link DmpConfigError} naming each bad entry.
 * @example const dmps = parseDmpConfig(JSON.parse(readFileSync('operator.json', 'utf8')).dmps)
 */
export function parseDmpConfig(input: unknown): DmpConfig[] {
  const r = DmpsSchema.safeParse(input);
  if (r.success) return r.data;
  throw new DmpConfigError(
    r.error.issues.map((i) => {
      const path = formatPath(['dmps', ...i.path]);
      const value =
        i.path.length === 2 && i.path[1] === 'source'
          ? ` ("${String((input as Record<string, unknown>[])[i.path[0] as number]?.source)}")`
          : '';
      return `${path}${value}: ${i.message}`;
    }),
  );
}

/** The provider each DMP prefers, resolved once. */
function providersOf(dmps: readonly DmpConfig[]): [string, Provider][] {
  return dmps.map((d) => [d.dmp, providerForSource(d.source)]);
}

/**
 * Per DMP, the id of its preferred provider in the call (that provider's first uid), or undefined when the call
 * carries none. Every configured DMP has a key.
 * @example dmpIds(call, [{ dmp: 'lotame', source: 'crwdcntrl.net' }]) // { lotame: 'd2b7…' }
 */
export function dmpIds(call: Pick<AdCall, 'eids'>, dmps: readonly DmpConfig[]): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [dmp, provider] of providersOf(dmps)) {
    const eid = call.eids.find((e) => providerForSource(e.source).id === provider.id);
    out[dmp] = eid?.uids[0]?.id;
  }
  return out;
}
