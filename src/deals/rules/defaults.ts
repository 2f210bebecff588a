/**
 * The values a PUT resets omitted fields to (docs/deal-rules.md#a-put-replaces-the-whole-deal).
 */
import { DEAL_WRITE_FIELDS, MANDATORY_DEAL_FIELDS, type DealWrite } from './schemas.js';

/**
 * Write fields whose default is not null: lists (`[]`), segment expressions (`''`), isCTV and isDspSyncEnabled
 * (`false`).
 */
type NonNullDefaultField =
  | { [K in keyof DealWrite]-?: NonNullable<DealWrite[K]> extends readonly unknown[] ? K : never }[keyof DealWrite]
  | 'audienceSegmentsTargeting'
  | 'semanticSegmentsTargeting'
  | 'domainCategorySegmentsTargeting'
  | 'isCTV'
  | 'isDspSyncEnabled';

/** A deal write shape with every field present: lists, expressions and flags defaulted, other optional fields null. */
export type CompleteDealWrite = {
  [K in keyof DealWrite]-?: K extends NonNullDefaultField
    ? NonNullable<DealWrite[K]>
    : Exclude<DealWrite[K], undefined>;
};

/** The optional write fields and their defaults. */
export type DealWriteDefaults = Omit<CompleteDealWrite, (typeof MANDATORY_DEAL_FIELDS)[number]>;

const EMPTY_STRING_FIELDS = new Set([
  'audienceSegmentsTargeting',
  'semanticSegmentsTargeting',
  'domainCategorySegmentsTargeting',
]);
const FALSE_FIELDS = new Set(['isCTV', 'isDspSyncEnabled']);
const ARRAY_FIELDS = new Set([
  'buyerIds',
  'dspIds',
  'callerDealIds',
  'spoTargetingIds',
  'thirdPartyProviderCosts',
  'templateIds',
  'childrenDealIds',
  'contentGenreNames',
  'contentCategoryNames',
  'contentContextIds',
  'contentIds',
  'contentLanguageIso6391Alpha2Codes',
  'contentChannelNames',
  'contentNetworkNames',
  'videoMaxAdDurationIds',
  'scoNodeBucketIds',
  'domains',
  'countryCodesPostalCodes',
  'cityIds',
  'countryCodes',
  'creativeSizes',
  'ctvOttIds',
  'ctvCategoryIds',
  'ctvChannelIds',
  'ctvDistributorIds',
  'ctvNetworkIds',
  'dmaIds',
  'impressionTypeIds',
  'inventoryTypeIds',
  'platformIds',
  'networkIds',
  'regionIds',
  'stateIds',
  'videoAdBreakTypeIds',
  'videoPlacementTypeIds',
  'videoPlayerSizeBucketIds',
  'coordinates',
  'budgetIds',
]);

function defaultOf(field: string): unknown {
  if (ARRAY_FIELDS.has(field)) return [];
  if (EMPTY_STRING_FIELDS.has(field)) return '';
  if (FALSE_FIELDS.has(field)) return false;
  return null;
}

/**
 * The default of every optional write field: `[]` for lists, `''` for segment expressions, `false` for isCTV and
 * isDspSyncEnabled, `null` for everything else. A fresh object on every call.
 * @example const body = { ...dealWriteDefaults(), ...myChanges }; // what a PUT stores
 */
export function dealWriteDefaults(): DealWriteDefaults {
  const mandatory = new Set<string>(MANDATORY_DEAL_FIELDS);
  const out: Record<string, unknown> = {};
  for (const field of DEAL_WRITE_FIELDS) if (!mandatory.has(field)) out[field] = defaultOf(field);
  return out as DealWriteDefaults;
}

/**
 * Fills every omitted or null optional field of a parsed write body with its default, as a PUT does.
 * Mandatory fields are copied as given.
 */
export function applyDealDefaults(deal: DealWrite): CompleteDealWrite {
  const out: Record<string, unknown> = dealWriteDefaults();
  for (const field of DEAL_WRITE_FIELDS) {
    const v = (deal as Record<string, unknown>)[field];
    if (v !== undefined && v !== null) out[field] = v;
    else if (!(field in out)) out[field] = v ?? null;
  }
  return out as CompleteDealWrite;
}
