/**
 * Deals as code: a deals file (YAML or JSON) of desired deals with stable keys, `planDeals` (what
 * would change, per key, within the daily quotas) and `applyPlan` (make it so, never losing or doubling a create).
 */
export {
  DealsFileSchema,
  DealEntrySchema,
  DealDefaultsSchema,
  DealKeySchema,
  dealsFileJsonSchema,
  type DealsFileInput,
  type DealEntryInput,
} from './schema.js';
export { loadDealsFile, parseDealsFile, DealsFileError, type DealsFile, type DealsFileEntry } from './file.js';
export { diffDeal, dealContentHash, normalizeField, type FieldChange } from './diff.js';
export { quotaStatus, scheduledDay, type QuotaStatus } from './quota.js';
export {
  buildPlan,
  planDeals,
  planHasIssues,
  type Plan,
  type PlanAction,
  type PlanItem,
  type PlanOptions,
  type PlanSummary,
  type PlanValidator,
  type PruneMode,
} from './plan.js';
export {
  applyPlan,
  PlanRefusedError,
  type ApplyItem,
  type ApplyOptions,
  type ApplyProgress,
  type ApplyResult,
} from './apply.js';
export { formatPlan, formatApplyResult, describeApplyItem } from './format.js';
