/**
 * The simulator's seeded reference data: every lookup resource, believable and deterministic, built fresh for each
 * simulator from the frozen rows of ./reference-tables.ts. Countries are the real ISO 3166-1 list; cities, states, DMAs
 * and providers are real names.
 */
import {
  ISO_3166_COUNTRIES,
  IMPRESSION_TYPES,
  PLATFORMS,
  type BuyerItem,
  type CityItem,
  type CountryItem,
  type CreativeBannerSizeItem,
  type DmaItem,
  type DomainListItem,
  type DspItem,
  type IdentityProviderItem,
  type LookupItem,
  type LookupResource,
  type PublisherItem,
  type RegionItem,
  type SegmentItem,
  type StateItem,
  type ThirdPartyProviderItem,
} from '../deals/rules/index.js';
import {
  AGENCIES,
  AUDIENCE_SEGMENT_PROVIDERS,
  AUDIENCE_SEGMENT_ROWS,
  BANNER_SIZES,
  CITY_ROWS,
  DMA_ROWS,
  DOMAIN_LISTS,
  DSP_ROWS,
  IDENTITY_PROVIDERS,
  NAMED_LOOKUPS,
  PUBLISHER_ROWS,
  REGION_ROWS,
  SEMANTIC_SEGMENT_PROVIDERS,
  SEMANTIC_SEGMENT_ROWS,
  THIRD_PARTY_PROVIDERS,
  US_STATE_ROWS,
} from './reference-tables.js';

/** Every lookup table of the simulator, by resource. */
export interface ReferenceData {
  buyers: BuyerItem[];
  partners: DspItem[];
  dsps: DspItem[];
  countries: CountryItem[];
  publishers: PublisherItem[];
  impressionTypes: LookupItem[];
  inventoryTypes: LookupItem[];
  cities: CityItem[];
  states: StateItem[];
  regions: RegionItem[];
  dmas: DmaItem[];
  videoPlacementTypes: LookupItem[];
  adBreakTypes: LookupItem[];
  videoPlayerSizeBuckets: LookupItem[];
  audienceSegmentProviders: LookupItem[];
  semanticSegmentProviders: LookupItem[];
  audienceSegments: SegmentItem[];
  semanticSegments: SegmentItem[];
  platforms: LookupItem[];
  creativeBannerSizes: CreativeBannerSizeItem[];
  ctvOtt: LookupItem[];
  ctvCategories: LookupItem[];
  ctvChannels: LookupItem[];
  ctvDistributors: LookupItem[];
  ctvNetworks: LookupItem[];
  identityProviders: IdentityProviderItem[];
  thirdPartyProviders: ThirdPartyProviderItem[];
  domainLists: DomainListItem[];
}

/** Name-only lookup items, ids from `first`. */
const named = (names: readonly string[], first = 1): LookupItem[] =>
  names.map((name, i) => ({ id: first + i, name, isArchived: false }));

/** A fresh copy of each row of a frozen table. */
const copies = <T extends object>(rows: readonly Readonly<T>[]): T[] => rows.map((row) => ({ ...row }) as T);

/** Builds a fresh copy of the seeded reference data. */
export function createReferenceData(): ReferenceData {
  const countries: CountryItem[] = ISO_3166_COUNTRIES.map(([code, name], i) => ({
    id: i + 1,
    code,
    name,
    isArchived: false,
  }));
  const { regions, states, cities, dmas, publishers } = createPlaces(countries);
  const dsps = createDsps();
  const segments = createSegments();
  return {
    buyers: createBuyers(dsps),
    partners: dsps.map((d) => ({ ...d })),
    dsps,
    countries,
    publishers,
    impressionTypes: Object.entries(IMPRESSION_TYPES).map(([id, name]) => ({
      id: Number(id),
      name,
      isArchived: false,
    })),
    inventoryTypes: named(NAMED_LOOKUPS.inventoryTypes),
    cities,
    states,
    regions,
    dmas,
    videoPlacementTypes: named(NAMED_LOOKUPS.videoPlacementTypes),
    adBreakTypes: named(NAMED_LOOKUPS.adBreakTypes),
    videoPlayerSizeBuckets: named(NAMED_LOOKUPS.videoPlayerSizeBuckets),
    ...segments,
    platforms: Object.entries(PLATFORMS).map(([id, name]) => ({ id: Number(id), name, isArchived: false })),
    creativeBannerSizes: BANNER_SIZES.map(([width, height], i) => ({
      id: i + 1,
      name: `${width}*${height}`,
      width,
      height,
      isArchived: false,
    })),
    ctvOtt: named(NAMED_LOOKUPS.ctvOtt),
    ctvCategories: named(NAMED_LOOKUPS.ctvCategories),
    ctvChannels: named(NAMED_LOOKUPS.ctvChannels),
    ctvDistributors: named(NAMED_LOOKUPS.ctvDistributors),
    ctvNetworks: named(NAMED_LOOKUPS.ctvNetworks),
    identityProviders: copies(IDENTITY_PROVIDERS),
    thirdPartyProviders: copies(THIRD_PARTY_PROVIDERS),
    domainLists: copies(DOMAIN_LISTS),
  };
}

/** The places below a country: regions, US states, cities, DMAs, and the publishers of each country. */
function createPlaces(
  countries: CountryItem[],
): Pick<ReferenceData, 'regions' | 'states' | 'cities' | 'dmas' | 'publishers'> {
  const countryId = (code: string) => countries.find((c) => c.code === code)!.id;
  const regions: RegionItem[] = REGION_ROWS.map(([cc, name], i) => ({
    id: i + 1,
    name,
    countryId: countryId(cc),
    isArchived: false,
  }));
  const regionId = (name: string) => regions.find((r) => r.name === name)!.id;
  const states: StateItem[] = US_STATE_ROWS.map(([name, region], i) => ({
    id: i + 1,
    name,
    countryId: countryId('US'),
    regionId: regionId(region),
    isArchived: false,
  }));
  const stateId = (name: string) => states.find((s) => s.name === name)?.id ?? 0;
  const cities: CityItem[] = CITY_ROWS.map(([name, cc, region, state], i) => {
    const country = countries.find((c) => c.code === cc)!;
    return {
      id: 1001 + i,
      name,
      countryId: country.id,
      regionId: regionId(region),
      stateId: state ? stateId(state) : 0,
      isArchived: false,
      extendedName: [name, state ?? region, country.name].join(', '),
    };
  });
  const dmas: DmaItem[] = DMA_ROWS.map(([code, name]) => ({
    id: code,
    code: String(code),
    name,
    countryId: countryId('US'),
    isArchived: false,
  }));
  const publishers: PublisherItem[] = PUBLISHER_ROWS.map(([name, cc], i) => ({
    id: 2001 + i,
    name,
    countryId: countryId(cc),
    isArchived: false,
  }));
  return { regions, states, cities, dmas, publishers };
}

function createDsps(): DspItem[] {
  return DSP_ROWS.map(([name, forbidden], i) => ({
    id: i + 1,
    name,
    isMultiBuyerDealForbidden: forbidden,
    isArchived: false,
  }));
}

/** Buyer seats: most agencies on each DSP, some eligible for guaranteed deals, one archived. */
function createBuyers(dsps: DspItem[]): BuyerItem[] {
  const buyers: BuyerItem[] = [];
  for (const dsp of dsps) {
    AGENCIES.forEach((agency, j) => {
      if ((dsp.id + j) % 3 === 0) return;
      buyers.push({
        id: 100 + buyers.length + 1,
        name: `${agency} – ${dsp.name}`,
        dspId: dsp.id,
        isGuaranteedDealEligible: j % 2 === 0,
        isArchived: dsp.id === 10 && j === 5,
      });
    });
  }
  return buyers;
}

/** Audience and semantic segments with their providers. */
function createSegments(): Pick<
  ReferenceData,
  'audienceSegmentProviders' | 'semanticSegmentProviders' | 'audienceSegments' | 'semanticSegments'
> {
  const segments = (rows: typeof AUDIENCE_SEGMENT_ROWS, first: number): SegmentItem[] =>
    rows.map(([name, providerId, cpm], i) => ({ id: first + i, name, providerId, cpm, isArchived: false }));
  return {
    audienceSegmentProviders: named(AUDIENCE_SEGMENT_PROVIDERS),
    semanticSegmentProviders: named(SEMANTIC_SEGMENT_PROVIDERS),
    audienceSegments: segments(AUDIENCE_SEGMENT_ROWS, 5001),
    semanticSegments: segments(SEMANTIC_SEGMENT_ROWS, 6001),
  };
}

/** Canonical resource name for a lookup path segment, matched case-insensitively. */
export function canonicalResource(segment: string, resources: readonly LookupResource[]): LookupResource | undefined {
  const lower = segment.toLowerCase();
  return resources.find((r) => r.toLowerCase() === lower);
}
