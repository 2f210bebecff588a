/**
 * zod 4 schemas of the deal API: the write shape, the read shape and the count breakdown (docs/deal-rules.md); the
 * lookup items are in ./lookup-schemas.ts. Shape only: cross-field rules live in validateDeal.
 */
import { z } from 'zod';
import {
  DealCriticalityIdSchema,
  DealTypeIdSchema,
  ImpressionTypeIdSchema,
  PacingModeSchema,
  PlatformIdSchema,
  PricingModelSchema,
  PriorityIdSchema,
} from './enums.js';
import { ISO_3166_COUNTRIES } from './countries.js';

// Every per-field constraint is written so that z.toJSONSchema carries it into the simulator's OpenAPI document
// (docs/simulator.md "The OpenAPI document"): regular expressions without flags or look-arounds, enumerations,
// multipleOf and bounds rather than `refine`, which JSON Schema cannot express.

const id = z.int().positive();
const ids = z.array(id).max(10_000);
/** A string with something besides white space, at most `max` characters. */
const text = (max: number) => z.string().regex(/\S/, 'must not be empty').trim().max(max);
const idOrString = z.union([id, text(100)]);
const idsOrStrings = z.array(idOrString).max(10_000);
const names = z.array(text(255)).max(10_000);
const DATE_TIME_MESSAGE =
  'must be an ISO 8601 date-time, e.g. 2025-01-31T00:00:00Z, or a date, 2025-01-31 (midnight UTC)';
/** ISO 8601 date-time; without an offset it is read as UTC. */
const isoDateTime = z.iso.datetime({ offset: true, local: true, message: DATE_TIME_MESSAGE });
/** A date alone, `2025-01-31`: read as midnight UTC that day, as `--since` and createdOrModifiedSince read it. */
const isoDate = z.iso.date({ message: DATE_TIME_MESSAGE });
/** A date-time, or a date alone stored as midnight UTC (so the read shape always holds a date-time). */
export const DealDateTimeSchema = z
  .union([isoDate, isoDateTime], { message: DATE_TIME_MESSAGE })
  .transform((v) => (v.length === 10 ? `${v}T00:00:00Z` : v))
  .pipe(isoDateTime);
const dateTime = DealDateTimeSchema;
/** An amount with at most 2 decimals, as the API takes prices and costs. */
const money = z.number().nonnegative().multipleOf(0.01, 'must have at most 2 decimal places');
const rate = money.max(1, 'must be a fraction between 0 and 1 (0.15 means 15%)');
const percentage = z.int().min(0).max(100);
const count = z.int().nonnegative();
/** One term of a segment expression: an id, optionally preceded by `NOT`. */
const SEGMENT_TERM = String.raw`\s*(NOT\s+)?[A-Za-z0-9_.:-]+\s*`;
/** Segment expression: ids joined by `,` (OR) and `;` (AND), each may be preceded by `NOT`; blank = none. */
const segmentExpression = z
  .string()
  .max(10_000)
  .regex(
    new RegExp(String.raw`^(\s*|${SEGMENT_TERM}([;,]${SEGMENT_TERM})*)$`),
    'must be segment ids joined by "," (OR) and ";" (AND), each optionally preceded by "NOT", e.g. "12,34;NOT 56"',
  );
const COUNTRY_CODES = ISO_3166_COUNTRIES.map(([code]) => code) as [string, ...string[]];
/** An upper-case ISO 3166-1 alpha-2 code: an enumeration, so the document lists the accepted codes. */
const countryCode = z.enum(COUNTRY_CODES, {
  message: 'must be an upper-case ISO 3166-1 alpha-2 country code such as FR',
});
/** `<country>:<postal code>`, the country one of the ISO 3166-1 alpha-2 codes. */
const countryPostalCode = z
  .string()
  .regex(
    new RegExp(`^(${COUNTRY_CODES.join('|')}):[A-Za-z0-9 -]{2,12}$`),
    'must be "<ISO 3166-1 alpha-2 country code>:<postal code>", e.g. "FR:75001"',
  );
/** A domain name, case-insensitive (written with both cases, since JSON Schema patterns take no flags). */
const domain = z
  .string()
  .max(253, 'must be a domain name such as example.com')
  .regex(/^([A-Za-z0-9-]+\.)+[A-Za-z0-9-]{2,}$/, 'must be a domain name such as example.com');

/** One point of hyperlocal targeting. */
export const CoordinateSchema = z.strictObject({
  name: z.string().max(255).nullish(),
  latitude: z.number().min(-90, 'must be between -90 and 90').max(90, 'must be between -90 and 90'),
  longitude: z.number().min(-180, 'must be between -180 and 180').max(180, 'must be between -180 and 180'),
  radius: z.int().positive().max(1_000_000, 'must be at most 1,000,000 meters'),
});

/** Hyperlocal targeting (docs/deal-rules.md#hyperlocal-targeting): precision 1 = GPS and IP addresses, 2 = GPS only. */
export const HyperLocalTargetingSchema = z.strictObject({
  precision: z.literal([1, 2], { message: 'must be 1 (GPS coordinates and IP addresses) or 2 (GPS coordinates only)' }),
  coordinates: z.array(CoordinateSchema).min(1, 'needs at least one coordinate').max(10_000),
});

/** VPAID / OMSDK compliance requirements. */
export const ApiComplianceSchema = z.strictObject({
  isVpaidCompliant: z.boolean(),
  isOmSdkCompliant: z.boolean(),
});

/** Minimum video player size; at least one of the two is required (checked by validateDeal). */
export const VideoPlayerSizeDimensionSchema = z.strictObject({
  minWidth: z.int().positive().nullish(),
  minHeight: z.int().positive().nullish(),
});

/** A third-party provider cost. */
export const ThirdPartyProviderCostSchema = z.strictObject({
  providerId: id,
  costRate: z.number().nonnegative(),
});

/**
 * Field schemas of the deal write shape, by field. Mandatory fields: beginDate, endDate, currency,
 * isActive, name, pricingModel, price. Every other field is optional and nullable (null means "default").
 */
export const dealWriteFields = {
  // General fields (docs/deal-rules.md#general-fields)
  name: text(255),
  isActive: z.boolean(),
  beginDate: dateTime.nullable(),
  endDate: dateTime.nullable(),
  currency: z.string().regex(/^[A-Z]{3}$/, 'must be an ISO 4217 currency code such as EUR or USD'),
  buyerIds: ids.nullish(),
  dspIds: ids.nullish(),
  expirationDate: dateTime.nullish(),
  callerDealIds: names.nullish(),
  spoTargetingIds: ids.nullish(),
  identityProviderId: id.nullish(),
  thirdPartyProviderCosts: z.array(ThirdPartyProviderCostSchema).max(100).nullish(),
  isDspSyncEnabled: z.boolean().nullish(),
  // Fields the API names without a definition: types chosen to match their names (docs/deals.md "Shared rules").
  salesPersonUserId: id.nullish(),
  ctrTargetingPercentage: percentage.nullish(),
  templateIds: ids.nullish(),
  domainCategorySegmentsTargeting: segmentExpression.nullish(),
  isRewardedVideo: z.boolean().nullish(),
  skippable: z.boolean().nullish(),
  childrenDealIds: ids.nullish(),
  contentGenreNames: names.nullish(),
  contentCategoryNames: names.nullish(),
  contentContextIds: ids.nullish(),
  contentIds: names.nullish(),
  contentLanguageIso6391Alpha2Codes: z
    .array(z.string().regex(/^[a-z]{2}$/, 'must be an ISO 639-1 two-letter language code in lower case'))
    .max(200)
    .nullish(),
  contentChannelNames: names.nullish(),
  contentNetworkNames: names.nullish(),
  videoMaxAdDurationIds: ids.nullish(),
  scoNodeBucketIds: ids.nullish(),
  domains: z.array(domain).max(100_000).nullish(),
  domainListId: id.nullish(),
  countryCodesPostalCodes: z.array(countryPostalCode).max(100_000).nullish(),
  // Pricing fields (docs/deal-rules.md#pricing-fields)
  pricingModel: PricingModelSchema,
  price: money,
  companyVendorCostRate: rate.nullish(),
  minCompanyVendorCost: money.nullish(),
  managementVendorCostCpm: money.nullish(),
  managementVendorCostRate: rate.nullish(),
  smartVendorCostRate: rate.nullish(),
  // Targeting fields (docs/deal-rules.md#targeting-fields)
  apiCompliance: ApiComplianceSchema.nullish(),
  audienceSegmentsTargeting: segmentExpression.nullish(),
  semanticSegmentsTargeting: segmentExpression.nullish(),
  cityIds: idsOrStrings.nullish(),
  countryCodes: z.array(countryCode).max(300).nullish(),
  creativeSizes: z
    .array(z.string().regex(/^[1-9]\d{0,4}\*[1-9]\d{0,4}$/, 'must be "<width>*<height>", e.g. "300*250"'))
    .max(1000)
    .nullish(),
  ctvOttIds: ids.nullish(),
  ctvCategoryIds: ids.nullish(),
  ctvChannelIds: ids.nullish(),
  ctvDistributorIds: ids.nullish(),
  ctvNetworkIds: ids.nullish(),
  dmaIds: idsOrStrings.nullish(),
  impressionTypeIds: z.array(ImpressionTypeIdSchema).max(6).nullish(),
  inventoryTypeIds: ids.nullish(),
  isCTV: z.boolean().nullish(),
  platformIds: z.array(PlatformIdSchema).max(6).nullish(),
  networkIds: ids.nullish(),
  regionIds: idsOrStrings.nullish(),
  stateIds: idsOrStrings.nullish(),
  videoAdBreakTypeIds: idsOrStrings.nullish(),
  videoCompletionTargetingPercentage: percentage.nullish(),
  videoPlacementTypeIds: idsOrStrings.nullish(),
  videoPlayerSizeDimension: VideoPlayerSizeDimensionSchema.nullish(),
  videoPlayerSizeBucketIds: ids.nullish(),
  viewabilityTargetingPercentage: percentage.nullish(),
  hyperLocalTargeting: HyperLocalTargetingSchema.nullish(),
  coordinates: z.array(CoordinateSchema).max(10_000).nullish(),
  // Delivery capping, frequency capping, budgets (docs/deal-rules.md#frequency-capping-and-budgets)
  overallCapUnits: count.nullish(),
  overallCapCents: count.nullish(),
  dailyCapUnits: count.nullish(),
  dailyCapCents: count.nullish(),
  pacingMode: PacingModeSchema.nullish(),
  timeFrameId: id.nullish(),
  impressions: z.int().positive().nullish(),
  budgetIds: ids.nullish(),
  publisherId: id.nullish(),
  shareAllocation: z.number().min(0).max(100).nullish(),
  adjustedTarget: z.number().nonnegative().nullish(),
  softCapped: z.boolean().nullish(),
} as const;

/** The deal write shape (docs/deal-rules.md#deal-fields), of POST and PUT bodies; unknown fields refused. */
export const DealWriteSchema = z.strictObject(dealWriteFields);

/** A deal as written by a caller (POST / PUT body). */
export type DealWrite = z.infer<typeof DealWriteSchema>;
/** A deal write body before parsing (what a caller may send). */
export type DealWriteInput = z.input<typeof DealWriteSchema>;

/** Names of the mandatory write fields. */
export const MANDATORY_DEAL_FIELDS = [
  'name',
  'isActive',
  'beginDate',
  'endDate',
  'currency',
  'pricingModel',
  'price',
] as const;

/** Names of every write field. */
export const DEAL_WRITE_FIELDS = Object.keys(dealWriteFields) as (keyof typeof dealWriteFields)[];

/** Field schemas of the read-only part of a deal, computed by the service. */
export const dealReadOnlyFields = {
  id: id,
  dealId: z.string().min(1),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
  expirationDateUtc: z.iso.datetime().nullable(),
  isDisabledByRegulator: z.boolean(),
  isParentDeal: z.boolean(),
  isArchived: z.boolean(),
  isEditable: z.boolean(),
  isExclusive: z.boolean(),
  isDealPlus: z.boolean(),
  typeId: DealTypeIdSchema,
  priorityId: PriorityIdSchema,
  dealCriticalityId: DealCriticalityIdSchema,
  throttlingRate: z.number(),
  customVendorCost: z.number(),
  keywordTargeting: z.string(),
  keywordIdsTargeting: z.string(),
  semanticSegmentsDataCost: z.number(),
  audienceSegmentsDataCost: z.number(),
  viewabilityDataCost: z.number(),
  videoCompletionDataCost: z.number(),
} as const;

/** Names of the read-only deal fields: accepted (and ignored) in a PUT body, refused in a POST body. */
export const DEAL_READ_ONLY_FIELDS = Object.keys(dealReadOnlyFields) as (keyof typeof dealReadOnlyFields)[];

/** The deal read shape (docs/deal-rules.md#the-read-shape), as GET returns it; unknown fields dropped. */
export const DealReadSchema = z.object({ ...dealWriteFields, ...dealReadOnlyFields });

/** A deal as returned by the service. */
export type DealRead = z.infer<typeof DealReadSchema>;
/** The read-only part of a deal. */
export type DealReadOnly = z.infer<z.ZodObject<typeof dealReadOnlyFields>>;

const dealCount = z.int().nonnegative();
/** GET /deals/countBreakdown: the caller company's deals by state (archived first, then active or paused) and type. */
export const CountBreakdownSchema = z.object({
  total: dealCount,
  active: dealCount,
  paused: dealCount,
  archived: dealCount,
  expiringSoon: dealCount,
  byType: z.object({ PrivateAuction: dealCount, DirectDeal: dealCount, GuaranteedDeal: dealCount }),
});
/** The counts of GET /deals/countBreakdown. */
export type CountBreakdown = z.infer<typeof CountBreakdownSchema>;
