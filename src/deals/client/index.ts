/** The deal API client: `DealApiClient`, its pagination and its error family. */
export { DealApiClient, type DealApiClientOptions } from './client.js';
export { DealsResource } from './deals.js';
export { LookupsResource } from './lookups.js';
export { mergeDeal, writableFields } from './merge.js';
export type {
  CallOptions,
  CreateOptions,
  UpdateOptions,
  CreatedDeal,
  DealListFilters,
  DealListOptions,
  DealPatch,
  LookupListOptions,
  PreparedRequest,
} from './options.js';
export { type AuthBudget, type CachedToken, type Credentials, type Grant, type TokenCache } from './auth.js';
export {
  DEFAULT_MAX_ITEMS,
  DEFAULT_MAX_PAGES,
  PagedList,
  PaginationError,
  type ListOptions,
  type Page,
  type PaginationProblem,
} from './paginate.js';
export { parseLinkHeader } from './link-header.js';
export { type Logger, type RetryOptions, type RetryPolicy } from './transport.js';
export { parseRetryAfter } from './error-mapping.js';
export type { ClientEvents, ClientListener, RequestEvent, ResponseEvent, RetryEvent } from './hooks.js';
export {
  DEAL_KEY_PREFIX,
  RECOVERY_LOOKBACK_MS,
  dealKeyMarker,
  dealKeyNamespace,
  dealKeyOf,
  isDealKey,
  isDealKeyNamespace,
  parseDealKeyMarker,
  userCallerDealIds,
  withDealKeyMarker,
} from './keyed.js';
export {
  DealApiError,
  ValidationError,
  PayloadTooLargeError,
  AuthenticationError,
  InvalidGrantError,
  AuthAttemptsExhaustedError,
  ForbiddenError,
  NotFoundError,
  RateLimitedError,
  QuotaExceededError,
  CreationQuotaExceededError,
  UpdateQuotaExceededError,
  ServerError,
  TimeoutError,
  ConnectionError,
  type FieldIssue,
} from './errors.js';
export {
  fileTokenCache,
  loadConnectionConfig,
  defaultConfigPath,
  defaultTokenPath,
  ConfigError,
  CONFIG_ENV,
  type ConnectionConfig,
} from './config.js';
