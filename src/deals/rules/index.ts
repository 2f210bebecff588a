/**
 * Shared deal rules: schemas, enumerations, defaults and validateDeal, used by the client and the simulator.
 * The rules: docs/deal-rules.md#rules-a-deal-must-follow.
 */
export * from './enums.js';
export * from './schemas.js';
export * from './lookup-schemas.js';
export * from './defaults.js';
export * from './validation-types.js';
export * from './validate.js';
export * from './contract.js';
export { ISO_3166_COUNTRIES, isIso3166Alpha2 } from './countries.js';
