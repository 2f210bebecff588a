/**
 * The simulator's seeded reference data: every lookup resource, believable and deterministic.
 * Countries are the real ISO 3166-1 list; cities, states, DMAs and providers are real names.
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

const named = (names: string[], first = 1): LookupItem[] =>
  names.map((name, i) => ({ id: first + i, name, isArchived: false }));

/** Builds a fresh copy of the seeded reference data. */
export function createReferenceData(): ReferenceData {
  const countries: CountryItem[] = ISO_3166_COUNTRIES.map(([code, name], i) => ({
    id: i + 1,
    code,
    name,
    isArchived: false,
  }));
  const countryId = (code: string) => countries.find((c) => c.code === code)!.id;

  const regionRows: [string, string][] = [
    ['FR', 'Île-de-France'],
    ['FR', 'Provence-Alpes-Côte d’Azur'],
    ['FR', 'Auvergne-Rhône-Alpes'],
    ['FR', 'Occitanie'],
    ['FR', 'Nouvelle-Aquitaine'],
    ['FR', 'Hauts-de-France'],
    ['DE', 'Bavaria'],
    ['DE', 'Berlin'],
    ['DE', 'Hamburg'],
    ['DE', 'North Rhine-Westphalia'],
    ['GB', 'England'],
    ['GB', 'Scotland'],
    ['GB', 'Wales'],
    ['GB', 'Northern Ireland'],
    ['ES', 'Community of Madrid'],
    ['ES', 'Catalonia'],
    ['IT', 'Lombardy'],
    ['IT', 'Lazio'],
    ['US', 'Northeast'],
    ['US', 'Midwest'],
    ['US', 'South'],
    ['US', 'West'],
    ['CA', 'Ontario'],
    ['CA', 'Quebec'],
  ];
  const regions: RegionItem[] = regionRows.map(([cc, name], i) => ({
    id: i + 1,
    name,
    countryId: countryId(cc),
    isArchived: false,
  }));
  const regionId = (name: string) => regions.find((r) => r.name === name)!.id;

  const usStates: [string, string][] = [
    ['New York', 'Northeast'],
    ['California', 'West'],
    ['Illinois', 'Midwest'],
    ['Texas', 'South'],
    ['Florida', 'South'],
    ['Pennsylvania', 'Northeast'],
    ['Massachusetts', 'Northeast'],
    ['Washington', 'West'],
    ['Georgia', 'South'],
    ['Colorado', 'West'],
    ['Arizona', 'West'],
    ['Michigan', 'Midwest'],
    ['Ohio', 'Midwest'],
    ['New Jersey', 'Northeast'],
    ['District of Columbia', 'South'],
    ['Oregon', 'West'],
    ['Minnesota', 'Midwest'],
    ['Nevada', 'West'],
  ];
  const states: StateItem[] = usStates.map(([name, region], i) => ({
    id: i + 1,
    name,
    countryId: countryId('US'),
    regionId: regionId(region),
    isArchived: false,
  }));
  const stateId = (name: string) => states.find((s) => s.name === name)?.id ?? 0;

  const cityRows: [string, string, string, string?][] = [
    ['Paris', 'FR', 'Île-de-France'],
    ['Marseille', 'FR', 'Provence-Alpes-Côte d’Azur'],
    ['Lyon', 'FR', 'Auvergne-Rhône-Alpes'],
    ['Toulouse', 'FR', 'Occitanie'],
    ['Nice', 'FR', 'Provence-Alpes-Côte d’Azur'],
    ['Bordeaux', 'FR', 'Nouvelle-Aquitaine'],
    ['Lille', 'FR', 'Hauts-de-France'],
    ['Munich', 'DE', 'Bavaria'],
    ['Berlin', 'DE', 'Berlin'],
    ['Hamburg', 'DE', 'Hamburg'],
    ['Cologne', 'DE', 'North Rhine-Westphalia'],
    ['London', 'GB', 'England'],
    ['Manchester', 'GB', 'England'],
    ['Edinburgh', 'GB', 'Scotland'],
    ['Cardiff', 'GB', 'Wales'],
    ['Belfast', 'GB', 'Northern Ireland'],
    ['Madrid', 'ES', 'Community of Madrid'],
    ['Barcelona', 'ES', 'Catalonia'],
    ['Milan', 'IT', 'Lombardy'],
    ['Rome', 'IT', 'Lazio'],
    ['New York', 'US', 'Northeast', 'New York'],
    ['Los Angeles', 'US', 'West', 'California'],
    ['San Francisco', 'US', 'West', 'California'],
    ['Chicago', 'US', 'Midwest', 'Illinois'],
    ['Houston', 'US', 'South', 'Texas'],
    ['Dallas', 'US', 'South', 'Texas'],
    ['Miami', 'US', 'South', 'Florida'],
    ['Philadelphia', 'US', 'Northeast', 'Pennsylvania'],
    ['Boston', 'US', 'Northeast', 'Massachusetts'],
    ['Seattle', 'US', 'West', 'Washington'],
    ['Atlanta', 'US', 'South', 'Georgia'],
    ['Denver', 'US', 'West', 'Colorado'],
    ['Toronto', 'CA', 'Ontario'],
    ['Montreal', 'CA', 'Quebec'],
  ];
  const cities: CityItem[] = cityRows.map(([name, cc, region, state], i) => {
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

  const dmaRows: [number, string][] = [
    [501, 'New York'],
    [803, 'Los Angeles'],
    [602, 'Chicago'],
    [504, 'Philadelphia'],
    [623, 'Dallas-Ft. Worth'],
    [807, 'San Francisco-Oakland-San Jose'],
    [511, 'Washington, DC (Hagerstown, MD)'],
    [618, 'Houston'],
    [506, 'Boston (Manchester)'],
    [524, 'Atlanta'],
    [819, 'Seattle-Tacoma'],
    [753, 'Phoenix (Prescott)'],
    [505, 'Detroit'],
    [613, 'Minneapolis-St. Paul'],
    [528, 'Miami-Ft. Lauderdale'],
    [751, 'Denver'],
  ];
  const dmas: DmaItem[] = dmaRows.map(([code, name]) => ({
    id: code,
    code: String(code),
    name,
    countryId: countryId('US'),
    isArchived: false,
  }));

  const dspRows: [string, boolean][] = [
    ['The Trade Desk', false],
    ['Google Display & Video 360', false],
    ['Xandr Invest', false],
    ['Amazon DSP', true],
    ['MediaMath', false],
    ['Adform', false],
    ['Criteo', true],
    ['Yahoo DSP', false],
    ['StackAdapt', true],
    ['Zeta Global', false],
  ];
  const dsps: DspItem[] = dspRows.map(([name, forbidden], i) => ({
    id: i + 1,
    name,
    isMultiBuyerDealForbidden: forbidden,
    isArchived: false,
  }));

  const agencies = ['Havas Media', 'Publicis Media', 'GroupM', 'Omnicom Media Group', 'Dentsu', 'IPG Mediabrands'];
  const buyers: BuyerItem[] = [];
  for (const dsp of dsps) {
    agencies.forEach((agency, j) => {
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

  const publisherRows: [string, string][] = [
    ['Le Monde', 'FR'],
    ['Le Figaro', 'FR'],
    ['L’Équipe', 'FR'],
    ['Marmiton', 'FR'],
    ['The Guardian', 'GB'],
    ['The Telegraph', 'GB'],
    ['BBC Good Food', 'GB'],
    ['Der Spiegel', 'DE'],
    ['Die Zeit', 'DE'],
    ['El País', 'ES'],
    ['Marca', 'ES'],
    ['Corriere della Sera', 'IT'],
    ['The Weather Channel', 'US'],
    ['Fandom', 'US'],
    ['Allrecipes', 'US'],
    ['Le Devoir', 'CA'],
  ];
  const publishers: PublisherItem[] = publisherRows.map(([name, cc], i) => ({
    id: 2001 + i,
    name,
    countryId: countryId(cc),
    isArchived: false,
  }));

  const audienceSegmentProviders = named([
    'Eyeota',
    'Lotame',
    'LiveRamp Data Marketplace',
    'Oracle Advertising',
    'Experian',
  ]);
  const audienceSegmentRows: [string, number, number][] = [
    ['Auto intenders', 1, 1.2],
    ['Frequent travellers', 1, 0.9],
    ['Young parents', 2, 1.0],
    ['Luxury shoppers', 2, 1.5],
    ['Sports fans', 3, 0.8],
    ['Small business owners', 3, 1.8],
    ['Home buyers', 4, 1.4],
    ['Gamers', 4, 0.7],
    ['Pet owners', 5, 0.6],
    ['High income households', 5, 2.0],
  ];
  const audienceSegments: SegmentItem[] = audienceSegmentRows.map(([name, providerId, cpm], i) => ({
    id: 5001 + i,
    name,
    providerId,
    cpm,
    isArchived: false,
  }));
  const semanticSegmentProviders = named(['Peer39', 'Integral Ad Science', 'DoubleVerify', 'Seedtag']);
  const semanticSegmentRows: [string, number, number][] = [
    ['Automotive', 1, 0.3],
    ['Travel', 1, 0.3],
    ['Food & Drink', 2, 0.25],
    ['Personal Finance', 2, 0.35],
    ['Sports', 3, 0.2],
    ['Technology & Computing', 3, 0.3],
    ['Health & Fitness', 4, 0.25],
    ['Style & Fashion', 4, 0.3],
  ];
  const semanticSegments: SegmentItem[] = semanticSegmentRows.map(([name, providerId, cpm], i) => ({
    id: 6001 + i,
    name,
    providerId,
    cpm,
    isArchived: false,
  }));

  const sizes: [number, number][] = [
    [300, 250],
    [728, 90],
    [160, 600],
    [300, 600],
    [320, 50],
    [320, 100],
    [336, 280],
    [468, 60],
    [970, 90],
    [970, 250],
    [300, 50],
    [120, 600],
  ];
  const creativeBannerSizes: CreativeBannerSizeItem[] = sizes.map(([width, height], i) => ({
    id: i + 1,
    name: `${width}*${height}`,
    width,
    height,
    isArchived: false,
  }));

  return {
    buyers,
    partners: dsps.map((d) => ({ ...d })),
    dsps,
    countries,
    publishers,
    impressionTypes: Object.entries(IMPRESSION_TYPES).map(([id, name]) => ({
      id: Number(id),
      name,
      isArchived: false,
    })),
    inventoryTypes: named(['Web', 'WebMobile', 'MobileApp']),
    cities,
    states,
    regions,
    dmas,
    videoPlacementTypes: named(['In-Stream', 'In-Banner', 'In-Article', 'In-Feed', 'Interstitial', 'Floating']),
    adBreakTypes: named(['Pre-roll', 'Mid-roll', 'Post-roll']),
    videoPlayerSizeBuckets: named([
      'Small (under 400 px)',
      'Medium (400–639 px)',
      'Large (640–1279 px)',
      'Extra large (1280 px and above)',
    ]),
    audienceSegmentProviders,
    semanticSegmentProviders,
    audienceSegments,
    semanticSegments,
    platforms: Object.entries(PLATFORMS).map(([id, name]) => ({ id: Number(id), name, isArchived: false })),
    creativeBannerSizes,
    ctvOtt: named(['Samsung TV Plus', 'Roku Channel', 'Pluto TV', 'Rakuten TV', 'LG Channels', 'Tubi']),
    ctvCategories: named(['News', 'Sports', 'Movies', 'Series', 'Kids & Family', 'Documentary', 'Music', 'Lifestyle']),
    ctvChannels: named(['France 24', 'Euronews', 'Red Bull TV', 'Bloomberg TV', 'beIN Sports XTRA', 'Fashion TV']),
    ctvDistributors: named(['Samsung', 'Roku', 'LG', 'Amazon Fire TV', 'Google TV', 'Vizio']),
    ctvNetworks: named(['TF1', 'M6', 'ProSiebenSat.1', 'Channel 4', 'Paramount', 'Warner Bros. Discovery']),
    identityProviders: [
      { id: 1, name: 'LiveRamp RampID', isFrequencyCappingSupported: true, isArchived: false },
      { id: 2, name: 'ID5', isFrequencyCappingSupported: true, isArchived: false },
      { id: 3, name: 'Unified ID 2.0', isFrequencyCappingSupported: true, isArchived: false },
      { id: 4, name: 'European Unified ID', isFrequencyCappingSupported: true, isArchived: false },
      { id: 5, name: 'Utiq', isFrequencyCappingSupported: false, isArchived: false },
      { id: 6, name: 'SharedID (pubcid.org)', isFrequencyCappingSupported: false, isArchived: false },
    ],
    thirdPartyProviders: [
      { id: 1, name: 'Integral Ad Science', defaultCostRate: 0.05, isArchived: false },
      { id: 2, name: 'DoubleVerify', defaultCostRate: 0.05, isArchived: false },
      { id: 3, name: 'Moat (Oracle)', defaultCostRate: 0.03, isArchived: true },
      { id: 4, name: 'Peer39', defaultCostRate: 0.04, isArchived: false },
    ],
    domainLists: [
      { id: 1, name: 'Premium news FR', domainCount: 48, isArchived: false },
      { id: 2, name: 'Brand-safe sports', domainCount: 132, isArchived: false },
      { id: 3, name: 'Cooking and recipes', domainCount: 27, isArchived: false },
      { id: 4, name: 'Blocked: made-for-advertising sites', domainCount: 2140, isArchived: false },
    ],
  };
}

/** Canonical resource name for a lookup path segment, matched case-insensitively. */
export function canonicalResource(segment: string, resources: readonly LookupResource[]): LookupResource | undefined {
  const lower = segment.toLowerCase();
  return resources.find((r) => r.toLowerCase() === lower);
}
