/**
 * The options and results of the resources' calls (`client.deals`, `client.lookups`): list filters, write
 * options, a created deal, and a write as `--dry-run` prints it.
 */
import type { DealRead, DealWriteInput } from '../rules/index.js';
import type { FieldIssue } from './errors.js';
import type { ListOptions } from './paginate.js';
import type { HttpRequest } from './transport.js';

/** Per-call options. */
export interface CallOptions {
  /** Cancels the call (and its retries). */
  signal?: AbortSignal;
}

/** Filters of GET /deals (docs/deal-rules.md#listing-deals). Arrays are sent comma-separated, dates as ISO 8601 UTC. */
export interface DealListFilters {
  createdOrModifiedSince?: Date | string;
  isArchived?: boolean;
  isSoonExpired?: boolean;
  isParentDeal?: boolean;
  sortBy?: string;
  sortAsc?: boolean;
  metricsBeginDate?: Date | string;
  metricsEndDate?: Date | string;
  buyerIds?: number[];
  dspIds?: number[];
  partnerIds?: number[];
  formatIds?: number[];
  platformIds?: number[];
  /** Skip this many deals. */
  offset?: number;
  /** Deals per request (default and maximum 100: the API clamps larger limits). */
  pageSize?: number;
}

/** Options of {@link DealsResource.list}. */
export type DealListOptions = DealListFilters & ListOptions & CallOptions;

/** Options of {@link LookupsResource.list}. */
export interface LookupListOptions extends ListOptions, CallOptions {
  /** Only these ids. */
  ids?: (number | string)[];
  /** Searched in the item names (`extendedSearch`). */
  search?: string;
  /** At most this many items in all. */
  limit?: number;
  /** Skip this many items. */
  offset?: number;
  /** Items per request (default 100). */
  pageSize?: number;
}

/** Options of {@link DealsResource.update}, `pause` and `resume`. */
export interface UpdateOptions extends CallOptions {
  /** The deal as just read: skips reading it again (the merge and the immutability checks use it). */
  stored?: DealRead;
}

/** A deal patch for {@link DealsResource.update}: any write fields; nested objects merge, arrays replace. */
export type DealPatch = Partial<DealWriteInput> & Record<string, unknown>;

/** What {@link DealsResource.create} returns. */
export interface CreatedDeal {
  /** The service-side id (used in paths). */
  id: number;
  /** The `Location` of the new deal. */
  location: string;
  /** The `X-HistoryId` of the creation. */
  historyId?: string;
  /** The deal, when the service returned it. */
  deal?: DealRead;
  /** True when the create's answer was lost and the deal was found by its key instead (`create(deal, { key })`). */
  recovered: boolean;
}

/** Options of {@link DealsResource.create}. */
export interface CreateOptions extends CallOptions {
  /** Create it as a copy of this deal (`X-CopyOfDealId`). */
  copyOf?: number | string;
  /**
   * A stable key of yours: written into `callerDealIds` as `eidkit:<key>`, and used to look the deal up when the
   * answer to the create is lost, so the create is never lost nor doubled (docs/deals.md "Deals as code").
   */
  key?: string;
}

/** A write as it would be sent: what `--dry-run` prints. The Authorization header is masked. */
export interface PreparedRequest {
  method: HttpRequest['method'];
  url: string;
  headers: Record<string, string>;
  body?: unknown;
  /** Client-side validation warnings (e.g. frequency capping that will be ignored). */
  warnings: FieldIssue[];
}
