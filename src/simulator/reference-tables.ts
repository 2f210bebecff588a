/**
 * The simulator's seeded reference rows, as frozen module constants: real names (regions, US states, cities, DMAs,
 * DSPs, agencies, publishers, data and verification providers, CTV outlets), each row what ./reference.ts needs to
 * build one lookup item. The countries are the ISO 3166-1 list of the deal rules.
 */
import type { DomainListItem, IdentityProviderItem, ThirdPartyProviderItem } from '../deals/rules/index.js';

/** Freezes a table and each of its rows. */
function frozen<T extends object>(rows: T[]): readonly Readonly<T>[] {
  for (const row of rows) Object.freeze(row);
  return Object.freeze(rows);
}

/** Regions: country code, name (ids from 1, in this order). */
export const REGION_ROWS = frozen<[string, string]>([
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
]);

/** US states: name, region (ids from 1). */
export const US_STATE_ROWS = frozen<[string, string]>([
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
]);

/** Cities: name, country code, region, US state if any (ids from 1001). */
export const CITY_ROWS = frozen<[string, string, string, string?]>([
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
]);

/** Nielsen DMAs: code (also the id), name. */
export const DMA_ROWS = frozen<[number, string]>([
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
]);

/** DSPs: name, whether they forbid multiple-buyer deals (ids from 1). */
export const DSP_ROWS = frozen<[string, boolean]>([
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
]);

/** Agencies, one buyer seat per DSP for most of them. */
export const AGENCIES = Object.freeze([
  'Havas Media',
  'Publicis Media',
  'GroupM',
  'Omnicom Media Group',
  'Dentsu',
  'IPG Mediabrands',
]);

/** Publishers: name, country code (ids from 2001). */
export const PUBLISHER_ROWS = frozen<[string, string]>([
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
]);

/** Audience segment providers (ids from 1). */
export const AUDIENCE_SEGMENT_PROVIDERS = Object.freeze([
  'Eyeota',
  'Lotame',
  'LiveRamp Data Marketplace',
  'Oracle Advertising',
  'Experian',
]);

/** Audience segments: name, provider id, CPM (ids from 5001). */
export const AUDIENCE_SEGMENT_ROWS = frozen<[string, number, number]>([
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
]);

/** Semantic segment providers (ids from 1). */
export const SEMANTIC_SEGMENT_PROVIDERS = Object.freeze(['Peer39', 'Integral Ad Science', 'DoubleVerify', 'Seedtag']);

/** Semantic segments: name, provider id, CPM (ids from 6001). */
export const SEMANTIC_SEGMENT_ROWS = frozen<[string, number, number]>([
  ['Automotive', 1, 0.3],
  ['Travel', 1, 0.3],
  ['Food & Drink', 2, 0.25],
  ['Personal Finance', 2, 0.35],
  ['Sports', 3, 0.2],
  ['Technology & Computing', 3, 0.3],
  ['Health & Fitness', 4, 0.25],
  ['Style & Fashion', 4, 0.3],
]);

/** Banner sizes: width, height (ids from 1). */
export const BANNER_SIZES = frozen<[number, number]>([
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
]);

/** The lookups that are names only (ids from 1, in this order), by resource. */
export const NAMED_LOOKUPS = Object.freeze({
  inventoryTypes: Object.freeze(['Web', 'WebMobile', 'MobileApp']),
  videoPlacementTypes: Object.freeze(['In-Stream', 'In-Banner', 'In-Article', 'In-Feed', 'Interstitial', 'Floating']),
  adBreakTypes: Object.freeze(['Pre-roll', 'Mid-roll', 'Post-roll']),
  videoPlayerSizeBuckets: Object.freeze([
    'Small (under 400 px)',
    'Medium (400–639 px)',
    'Large (640–1279 px)',
    'Extra large (1280 px and above)',
  ]),
  ctvOtt: Object.freeze(['Samsung TV Plus', 'Roku Channel', 'Pluto TV', 'Rakuten TV', 'LG Channels', 'Tubi']),
  ctvCategories: Object.freeze([
    'News',
    'Sports',
    'Movies',
    'Series',
    'Kids & Family',
    'Documentary',
    'Music',
    'Lifestyle',
  ]),
  ctvChannels: Object.freeze([
    'France 24',
    'Euronews',
    'Red Bull TV',
    'Bloomberg TV',
    'beIN Sports XTRA',
    'Fashion TV',
  ]),
  ctvDistributors: Object.freeze(['Samsung', 'Roku', 'LG', 'Amazon Fire TV', 'Google TV', 'Vizio']),
  ctvNetworks: Object.freeze(['TF1', 'M6', 'ProSiebenSat.1', 'Channel 4', 'Paramount', 'Warner Bros. Discovery']),
});

/** Identity providers, as the lookup lists them. */
export const IDENTITY_PROVIDERS = frozen<IdentityProviderItem>([
  { id: 1, name: 'LiveRamp RampID', isFrequencyCappingSupported: true, isArchived: false },
  { id: 2, name: 'ID5', isFrequencyCappingSupported: true, isArchived: false },
  { id: 3, name: 'Unified ID 2.0', isFrequencyCappingSupported: true, isArchived: false },
  { id: 4, name: 'European Unified ID', isFrequencyCappingSupported: true, isArchived: false },
  { id: 5, name: 'Utiq', isFrequencyCappingSupported: false, isArchived: false },
  { id: 6, name: 'SharedID (pubcid.org)', isFrequencyCappingSupported: false, isArchived: false },
]);

/** Third-party (verification) providers, as the lookup lists them. */
export const THIRD_PARTY_PROVIDERS = frozen<ThirdPartyProviderItem>([
  { id: 1, name: 'Integral Ad Science', defaultCostRate: 0.05, isArchived: false },
  { id: 2, name: 'DoubleVerify', defaultCostRate: 0.05, isArchived: false },
  { id: 3, name: 'Moat (Oracle)', defaultCostRate: 0.03, isArchived: true },
  { id: 4, name: 'Peer39', defaultCostRate: 0.04, isArchived: false },
]);

/** Domain lists, as the lookup lists them. */
export const DOMAIN_LISTS = frozen<DomainListItem>([
  { id: 1, name: 'Premium news FR', domainCount: 48, isArchived: false },
  { id: 2, name: 'Brand-safe sports', domainCount: 132, isArchived: false },
  { id: 3, name: 'Cooking and recipes', domainCount: 27, isArchived: false },
  { id: 4, name: 'Blocked: made-for-advertising sites', domainCount: 2140, isArchived: false },
]);
