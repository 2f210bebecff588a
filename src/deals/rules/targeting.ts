/** The targeting fields validateDeal counts (docs/deal-rules.md#targeting-is-required). */

/** Fields that count as a targeting criterion (and the API's undefined targeting-like ones). */
export const TARGETING_FIELDS = [
  'apiCompliance',
  'audienceSegmentsTargeting',
  'semanticSegmentsTargeting',
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
  'isCTV',
  'platformIds',
  'networkIds',
  'regionIds',
  'stateIds',
  'videoAdBreakTypeIds',
  'videoCompletionTargetingPercentage',
  'videoPlacementTypeIds',
  'videoPlayerSizeDimension',
  'videoPlayerSizeBucketIds',
  'viewabilityTargetingPercentage',
  'hyperLocalTargeting',
  'coordinates',
  'countryCodesPostalCodes',
  'domains',
  'domainListId',
  'domainCategorySegmentsTargeting',
  'contentGenreNames',
  'contentCategoryNames',
  'contentContextIds',
  'contentIds',
  'contentLanguageIso6391Alpha2Codes',
  'contentChannelNames',
  'contentNetworkNames',
  'videoMaxAdDurationIds',
  'ctrTargetingPercentage',
  'isRewardedVideo',
  'skippable',
  'spoTargetingIds',
] as const;

/** Geographic targeting types, only one of which may be active. */
export const GEO_FIELDS = [
  'countryCodes',
  'regionIds',
  'cityIds',
  'stateIds',
  'dmaIds',
  'countryCodesPostalCodes',
] as const;

/** Whether a targeting field is set: non-empty, true, or a compliance flag on. */
export function isSet(field: string, v: unknown): boolean {
  if (v === null || v === undefined) return false;
  if (Array.isArray(v)) return v.length > 0;
  if (typeof v === 'string') return v.trim() !== '';
  if (field === 'isCTV') return v === true;
  if (field === 'apiCompliance') {
    const a = v as { isVpaidCompliant: boolean; isOmSdkCompliant: boolean };
    return a.isVpaidCompliant || a.isOmSdkCompliant;
  }
  return true;
}
