/**
 * eidkit core: isomorphic and pure (no DOM, no `node:*`, no side effects).
 * Shared by the browser tag and the Node side.
 * @packageDocumentation
 */
export type { Eid, Uid, Issue, Result, EidLimits, ValidateOptions } from './eid.js';
export {
  validateEids,
  mergeEids,
  overlayEids,
  isValidAtype,
  isObject,
  isInt32,
  jsonSizeBound,
  MAX_INT32,
} from './eid.js';
export { encodeEids, decodeBase64Json, encodeBase64Url, decodeBase64Text, decodeBase64Loose } from './codec.js';
export type { Provider } from './registry.js';
export {
  PROVIDERS,
  UNKNOWN_PROVIDER,
  providerForSource,
  providerById,
  providerIdForSource,
  isKnownSource,
} from './registry.js';
export type { UsFields } from './us-privacy.js';
export { usDenial, usSectionName, US_SECTIONS } from './us-privacy.js';
export {
  MAX_ID_LENGTH,
  hasEmail,
  findEmail,
  looksPersonal,
  normaliseEmail,
  scrubUrl,
  unescapeAll,
  unescapeAny,
} from './pii.js';
export { MODULE_KEYS, HASH_KEY, CACHE_KEY, XID_KEY } from './module-keys.js';
export type { Experiment, ExperimentDeclaration, ExperimentEntry } from './experiments.js';
export {
  armOf,
  checkExperiments,
  fnv1a32,
  mix32,
  EXPERIMENT_ID,
  EXPERIMENT_SOURCE,
  MAX_EXPERIMENTS,
  MAX_EXPERIMENT_SOURCES,
  MODULE_SOURCES,
} from './experiments.js';
