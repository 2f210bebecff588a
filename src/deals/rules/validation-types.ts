/** What validateDeal takes and answers: its context, its result, and the ids of the cross-field rules. */
import type { Issue } from '../../core/eid.js';
import type { CompleteDealWrite } from './defaults.js';

/**
 * The rules validateDeal checks beyond each field's own shape, by id: an issue that breaks one of them names it in
 * `rule`. The simulator's OpenAPI document lists them (JSON Schema cannot express them), so a body the document
 * accepts is refused only for one of these reasons (docs/simulator.md "The OpenAPI document").
 */
export const DEAL_RULES = {
  'buyers-or-dsps': 'exactly one of buyerIds and dspIds is non-empty',
  'multiple-buyer-dsp': 'a DSP in dspIds supports multiple-buyer deals (GET /dsps: isMultiBuyerDealForbidden false)',
  'known-ids': 'dspIds, buyerIds and identityProviderId name existing lookup items',
  'targeting-required':
    'at least one targeting criterion is set, e.g. countryCodes, platformIds or audienceSegmentsTargeting',
  'one-geo-type':
    'at most one of countryCodes, regionIds, cityIds, stateIds, dmaIds and countryCodesPostalCodes is set',
  'hyperlocal-needs-geo': 'hyperLocalTargeting and coordinates come with another geographic targeting field',
  'player-size-dimension': 'videoPlayerSizeDimension has minWidth or minHeight',
  'pricing-model-costs':
    'variable floor: price 0 with companyVendorCostRate above 0, or a price with no rate, and no minCompanyVendorCost; ' +
    'other models: price above 0 and no companyVendorCostRate',
  'guaranteed-deal':
    'a guaranteed-price deal has one eligible buyer, beginDate, endDate and impression types among Display, ' +
    'In-Stream and Out-Stream',
  'end-after-begin': 'endDate is after beginDate',
  'immutable-after-creation': 'currency and pricingModel never change; isDspSyncEnabled never returns to false',
  'guaranteed-flight':
    'a guaranteed deal in flight keeps its beginDate and may only extend endDate; an ended one keeps both',
  'budget-needs-dates':
    'a budget (budgetIds, publisherId, shareAllocation, adjustedTarget) needs beginDate and endDate',
  'frequency-capping-pair': 'timeFrameId and impressions come together',
  'matches-replaced-deal': 'in a PUT body, id and dealId, when given, are those of the deal replaced',
  'complete-deal':
    'without X-CopyOfDealId, POST /deals takes a complete deal: every mandatory field (name, isActive, beginDate, ' +
    'endDate, currency, pricingModel, price) is present',
  'two-decimals':
    'prices, costs and rates (price, minCompanyVendorCost, managementVendorCostCpm, companyVendorCostRate, …) have at ' +
    'most 2 decimal places',
} as const;

/** The id of a rule of DEAL_RULES. */
export type DealRuleId = keyof typeof DEAL_RULES;

/**
 * One problem found in a deal: `path` names the field (`hyperLocalTargeting.coordinates[0].latitude`; `''` is the whole
 * deal).
 */
export interface DealIssue extends Issue {
  /** The rule broken that JSON Schema cannot state (DEAL_RULES): a cross-field rule, or two decimal places. */
  rule?: DealRuleId;
}

/** Reference data for one kind of lookup item: a map from id to item, or a plain list of items. */
export type ReferenceTable<T extends { id: number }> = ReadonlyMap<number, T> | readonly T[];

/**
 * Reference data the rules that depend on lookups read, synchronously. Every table is optional: when the table
 * or the entry for an id is absent, the rule for that id is skipped (unless `complete` is true).
 * The simulator passes full tables with `complete: true`; a client passes what it prefetched.
 */
export interface DealReference {
  /** DSPs by id (GET /dsps items); `isMultiBuyerDealForbidden: true` refuses the DSP in `dspIds`. */
  dsps?: ReferenceTable<{ id: number; isMultiBuyerDealForbidden: boolean }>;
  /** Buyer seats by id (GET /buyers items); `isGuaranteedDealEligible` allows a guaranteed deal. */
  buyers?: ReferenceTable<{ id: number; isGuaranteedDealEligible: boolean }>;
  /** Identity providers by id (GET /identityProviders items); without `isFrequencyCappingSupported`, no capping. */
  identityProviders?: ReferenceTable<{ id: number; isFrequencyCappingSupported: boolean }>;
  /**
   * True when the given tables hold every existing item, so an id missing from a given table is reported as unknown.
   */
  complete?: boolean;
}

/** What validateDeal needs besides the deal. */
export interface DealValidationContext {
  /** `create` (POST /deals) or `update` (PUT /deals/{id}: full replacement, omitted fields reset to defaults). */
  mode: 'create' | 'update';
  /**
   * In update mode, the deal as stored now (read or write shape); immutables and flight phases compare against it.
   * Skipped when absent.
   */
  stored?: Partial<CompleteDealWrite> & { id?: number; dealId?: string };
  /**
   * The current time (ms since the epoch or a Date) for the guaranteed-deal flight phases; defaults to `Date.now()`.
   */
  now?: number | Date;
  /** Lookup data for the DSP, buyer and identity provider rules. */
  reference?: DealReference;
}

/** The outcome of validateDeal. */
export interface DealValidationResult {
  /** True when there is no issue. */
  ok: boolean;
  /** When ok: the body to store, every optional field filled with its default (null, [], '' or false). */
  value?: CompleteDealWrite;
  /** Every problem, with the field path; empty when ok. */
  issues: DealIssue[];
  /** Accepted but noteworthy, e.g. frequency capping dropped for lack of a capable identity provider. */
  warnings: DealIssue[];
}
