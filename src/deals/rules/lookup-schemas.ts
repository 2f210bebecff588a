/**
 * zod 4 schemas of the lookup items (docs/deal-rules.md#lookups), the lookup resources and which schema each one's
 * items follow. The API defines only the City and Partner items; the others carry id, name and isArchived plus the
 * fields the deal rules need (flags for multiple-buyer support, guaranteed eligibility, frequency capping).
 */
import { z } from 'zod';

const lookupBase = { id: z.int().nonnegative(), name: z.string(), isArchived: z.boolean() };

/** A generic lookup item: id, name, isArchived. */
export const LookupItemSchema = z.object(lookupBase);
/** City item. */
export const CityItemSchema = z.object({
  ...lookupBase,
  countryId: z.int(),
  regionId: z.int(),
  stateId: z.int(),
  extendedName: z.string(),
});
/** Partner item. */
export const PartnerItemSchema = z.object({ ...lookupBase, isMultiBuyerDealForbidden: z.boolean() });
/** DSP item: the partner item shape (DSPs replaced partners). */
export const DspItemSchema = PartnerItemSchema;
/** Buyer seat item; `isGuaranteedDealEligible` says whether the buyer may have a guaranteed deal. */
export const BuyerItemSchema = z.object({ ...lookupBase, dspId: z.int(), isGuaranteedDealEligible: z.boolean() });
/** Country item: ISO 3166-1 alpha-2 `code` is what `countryCodes` takes. */
export const CountryItemSchema = z.object({ ...lookupBase, code: z.string().length(2) });
/** Region item. */
export const RegionItemSchema = z.object({ ...lookupBase, countryId: z.int() });
/** State item. */
export const StateItemSchema = z.object({ ...lookupBase, countryId: z.int(), regionId: z.int() });
/** DMA item (USA only). */
export const DmaItemSchema = z.object({ ...lookupBase, code: z.string(), countryId: z.int() });
/** Publisher (network) item. */
export const PublisherItemSchema = z.object({ ...lookupBase, countryId: z.int() });
/** Segment item (audience or semantic), belonging to a provider. */
export const SegmentItemSchema = z.object({ ...lookupBase, providerId: z.int(), cpm: z.number() });
/** Identity provider item; `isFrequencyCappingSupported` says whether frequency capping can work. */
export const IdentityProviderItemSchema = z.object({ ...lookupBase, isFrequencyCappingSupported: z.boolean() });
/** Third-party provider item. */
export const ThirdPartyProviderItemSchema = z.object({ ...lookupBase, defaultCostRate: z.number() });
/** Domain list item. */
export const DomainListItemSchema = z.object({ ...lookupBase, domainCount: z.int().nonnegative() });
/** Creative banner size item; `name` is the `<width>*<height>` string `creativeSizes` takes. */
export const CreativeBannerSizeItemSchema = z.object({ ...lookupBase, width: z.int(), height: z.int() });

/** A generic lookup item. */
export type LookupItem = z.infer<typeof LookupItemSchema>;
/** A city. */
export type CityItem = z.infer<typeof CityItemSchema>;
/** A partner (legacy name of a DSP). */
export type PartnerItem = z.infer<typeof PartnerItemSchema>;
/** A DSP. */
export type DspItem = z.infer<typeof DspItemSchema>;
/** A buyer seat. */
export type BuyerItem = z.infer<typeof BuyerItemSchema>;
/** A country. */
export type CountryItem = z.infer<typeof CountryItemSchema>;
/** A region. */
export type RegionItem = z.infer<typeof RegionItemSchema>;
/** A state. */
export type StateItem = z.infer<typeof StateItemSchema>;
/** A DMA. */
export type DmaItem = z.infer<typeof DmaItemSchema>;
/** A publisher. */
export type PublisherItem = z.infer<typeof PublisherItemSchema>;
/** A segment. */
export type SegmentItem = z.infer<typeof SegmentItemSchema>;
/** An identity provider. */
export type IdentityProviderItem = z.infer<typeof IdentityProviderItemSchema>;
/** A third-party provider. */
export type ThirdPartyProviderItem = z.infer<typeof ThirdPartyProviderItemSchema>;
/** A domain list. */
export type DomainListItem = z.infer<typeof DomainListItemSchema>;
/** A creative banner size. */
export type CreativeBannerSizeItem = z.infer<typeof CreativeBannerSizeItemSchema>;

/** Lookup resources (docs/deal-rules.md#lookups), by canonical name. */
export const LOOKUP_RESOURCES = [
  'buyers',
  'partners',
  'dsps',
  'countries',
  'publishers',
  'impressionTypes',
  'inventoryTypes',
  'cities',
  'states',
  'regions',
  'dmas',
  'videoPlacementTypes',
  'adBreakTypes',
  'videoPlayerSizeBuckets',
  'audienceSegmentProviders',
  'semanticSegmentProviders',
  'audienceSegments',
  'semanticSegments',
  'platforms',
  'creativeBannerSizes',
  'ctvOtt',
  'ctvCategories',
  'ctvChannels',
  'ctvDistributors',
  'ctvNetworks',
  'identityProviders',
  'thirdPartyProviders',
  'domainLists',
] as const;

/** A lookup resource name. */
export type LookupResource = (typeof LOOKUP_RESOURCES)[number];

/** Lookups refused to DSP callers with 403 (docs/deal-rules.md#dsp-callers). */
export const DSP_FORBIDDEN_LOOKUPS: readonly LookupResource[] = [
  'identityProviders',
  'thirdPartyProviders',
  'domainLists',
];

/** The item schema of each lookup resource. */
export const LOOKUP_ITEM_SCHEMAS: Record<LookupResource, z.ZodType> = {
  buyers: BuyerItemSchema,
  partners: PartnerItemSchema,
  dsps: DspItemSchema,
  countries: CountryItemSchema,
  publishers: PublisherItemSchema,
  impressionTypes: LookupItemSchema,
  inventoryTypes: LookupItemSchema,
  cities: CityItemSchema,
  states: StateItemSchema,
  regions: RegionItemSchema,
  dmas: DmaItemSchema,
  videoPlacementTypes: LookupItemSchema,
  adBreakTypes: LookupItemSchema,
  videoPlayerSizeBuckets: LookupItemSchema,
  audienceSegmentProviders: LookupItemSchema,
  semanticSegmentProviders: LookupItemSchema,
  audienceSegments: SegmentItemSchema,
  semanticSegments: SegmentItemSchema,
  platforms: LookupItemSchema,
  creativeBannerSizes: CreativeBannerSizeItemSchema,
  ctvOtt: LookupItemSchema,
  ctvCategories: LookupItemSchema,
  ctvChannels: LookupItemSchema,
  ctvDistributors: LookupItemSchema,
  ctvNetworks: LookupItemSchema,
  identityProviders: IdentityProviderItemSchema,
  thirdPartyProviders: ThirdPartyProviderItemSchema,
  domainLists: DomainListItemSchema,
};
