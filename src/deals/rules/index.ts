/**
 * Shared deal rules (issue #3): schemas, enumerations, defaults and validateDeal, used by the client and the simulator.
 * Spec: ../shared/spec/deal-api.md §2, §3, §7.
 */
export * from './enums.js';
export * from './schemas.js';
export * from './defaults.js';
export * from './validate.js';
export { ISO_3166_COUNTRIES, isIso3166Alpha2 } from './countries.js';
