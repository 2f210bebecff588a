/**
 * `eidkit/deals`: the deal management API — shared rules (schemas, validateDeal) and the client.
 * The contract: docs/deal-rules.md.
 * @packageDocumentation
 */
export * from './rules/index.js';
export * from './client/index.js';
export * from './plan/index.js';
