/**
 * The operator's networks configuration (the operator enables automatic transfer per network
 * and may turn a module off for every network: docs/wire-format.md#automatic-transfer-settings). One JSON file:
 *
 * ```json
 * {
 *   "disabledModules": ["idLinking"],
 *   "networks": {
 *     "1234": { "modules": [] },
 *     "4321": { "modules": ["identityLink", "idLinking", "criteo", "uid2", "prebid"] }
 *   }
 * }
 * ```
 *
 * `disabledModules` turns a module off for every network, whatever the network lists. A network that is not listed
 * gets the core alone. `networks.<id>.experiments` lists the network's holdout experiments (`[]`: none of the
 * operator's, but the experiments add-on is served so the network's pages may declare their own).
 */
import { formatPath } from '../core/path.js';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { fileErrorText } from '../core/file-error.js';
import {
  checkExperiments,
  EXPERIMENT_ID,
  EXPERIMENT_SOURCE,
  MAX_EXPERIMENT_SOURCES,
  MAX_EXPERIMENTS,
  MODULE_SOURCES,
  type Experiment,
} from '../core/experiments.js';

/** Every provider module the tag ships (src/tag/modules/<name>.ts, built to dist/modules/<name>.js), in tag order. */
export const MODULES = ['identityLink', 'idLinking', 'criteo', 'uid2', 'prebid'] as const;

/** A provider module name. */
export type ModuleName = (typeof MODULES)[number];

/** A network id as it appears in the script path `/tag/<network_id>/sas.js` (the tag reads 1–12 digits). */
export const NETWORK_ID = /^[1-9]\d{0,11}$/;

const moduleList = z.array(
  z.enum(MODULES, { error: (i) => `unknown module ${JSON.stringify(i.input)}; expected one of ${MODULES.join(', ')}` }),
);

const experimentSchema = z
  .strictObject({
    id: z.string().regex(EXPERIMENT_ID, 'must be 1-32 of A-Z a-z 0-9 _ . -'),
    sources: z
      .array(z.string().regex(EXPERIMENT_SOURCE, 'must be an eid source in lowercase, 1-100 of a-z 0-9 _ . -'))
      .optional(),
    modules: z
      .array(
        z.enum(Object.keys(MODULE_SOURCES) as [string, ...string[]], {
          error: (i) =>
            `module ${JSON.stringify(i.input)} has no fixed sources; expected one of ${Object.keys(MODULE_SOURCES).join(', ')} (or list the sources)`,
        }),
      )
      .optional(),
    share: z
      .number()
      .gt(0, 'must be above 0 (percent held out)')
      .lt(100, 'must be below 100 (percent held out)')
      .refine((n) => Math.round(n * 100) === n * 100, 'must have at most 2 decimals'),
    /** Free text for the operator; not served. */
    note: z.string().optional(),
  })
  .refine((x) => x.sources?.length || x.modules?.length, 'names no sources or modules')
  .refine(
    (x) =>
      new Set([...(x.sources ?? []), ...(x.modules ?? []).flatMap((m) => MODULE_SOURCES[m])]).size <=
      MAX_EXPERIMENT_SOURCES,
    `holds out more than ${MAX_EXPERIMENT_SOURCES} sources`,
  );

const networkSchema = z.strictObject({
  modules: moduleList.refine((m) => new Set(m).size === m.length, 'lists a module twice'),
  /** Holdout experiments; `[]` serves the experiments add-on for the pages' own. */
  experiments: z
    .array(experimentSchema)
    .max(MAX_EXPERIMENTS, `at most ${MAX_EXPERIMENTS} experiments`)
    .refine((l) => new Set(l.map((x) => x.id)).size === l.length, 'declares an experiment id twice')
    .optional(),
  /** Free text for the operator (customer name, ticket); not served. */
  note: z.string().optional(),
});

const configSchema = z.strictObject({
  $schema: z.string().optional(),
  '//': z.string().optional(),
  disabledModules: moduleList.default([]),
  networks: z.record(z.string().regex(NETWORK_ID, 'network id must be 1-12 digits, no leading zero'), networkSchema),
});

/** A validated networks configuration. */
export type NetworksConfig = z.output<typeof configSchema>;

/** One problem in a networks configuration, with the network it belongs to (when it belongs to one). */
export interface ConfigIssue {
  /** The network id whose entry is wrong, when the problem is inside `networks.<id>`. */
  network?: string;
  /** Dotted path of the field, e.g. `networks.4321.modules[2]`. */
  path: string;
  message: string;
}

/**
 * Thrown by {@link parseNetworksConfig} / {@link loadNetworksConfig}: every issue found, each naming network and field.
 */
export class NetworksConfigError extends Error {
  override readonly name = 'NetworksConfigError';
  constructor(
    readonly issues: ConfigIssue[],
    source = 'networks config',
    options?: { cause?: unknown },
  ) {
    super(
      `${source}: ${issues.map((i) => (i.network ? `network ${i.network}: ` : '') + `${i.path}: ${i.message}`).join('; ')}`,
      options,
    );
  }
}

/**
 * Validates a parsed networks configuration; throws a {@link NetworksConfigError} listing every issue.
 * @example parseNetworksConfig({ networks: { '4321': { modules: ['idLinking'] } } })
 */
export function parseNetworksConfig(input: unknown, source?: string): NetworksConfig {
  const r = configSchema.safeParse(input);
  if (r.success) return r.data;
  throw new NetworksConfigError(
    r.error.issues.map((i) => {
      // Unknown keys of a network object are reported on that object; name them.
      const keys = i.code === 'unrecognized_keys' ? i.keys.join(', ') : '';
      const network = i.path[0] === 'networks' && i.path.length > 1 ? String(i.path[1]) : undefined;
      // A bad network id is reported by zod as a record key issue with the regex's message nested inside.
      const message = keys
        ? `unknown field ${keys}`
        : i.code === 'invalid_key'
          ? (i.issues[0]?.message ?? i.message)
          : i.message;
      return { network, path: formatPath(i.path) || '(root)', message };
    }),
    source,
  );
}

/** Reads and validates a networks configuration file (JSON). */
export function loadNetworksConfig(file: string): NetworksConfig {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new NetworksConfigError([{ path: '(file)', message: `cannot read: ${fileErrorText(e)}` }], file, {
      cause: e,
    });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new NetworksConfigError([{ path: '(file)', message: `not valid JSON: ${(e as Error).message}` }], file, {
      cause: e,
    });
  }
  return parseNetworksConfig(json, file);
}

/**
 * The modules enabled for `networkId`, in tag order, without the globally disabled ones (none for an unknown network).
 */
export function enabledModules(config: NetworksConfig, networkId: string | number): ModuleName[] {
  const own = Object.hasOwn(config.networks, String(networkId)) ? config.networks[String(networkId)].modules : [];
  return MODULES.filter((m) => own.includes(m) && !config.disabledModules.includes(m));
}

/**
 * The experiments served to `networkId`, modules translated to their sources (what the tag's `__sasop` line
 * carries), or undefined when the network does not get the experiments add-on.
 */
export function networkExperiments(config: NetworksConfig, networkId: string | number): Experiment[] | undefined {
  if (!Object.hasOwn(config.networks, String(networkId))) return undefined;
  const own = config.networks[String(networkId)].experiments;
  return own && checkExperiments(own.map(({ note: _, ...x }) => x)).value;
}
