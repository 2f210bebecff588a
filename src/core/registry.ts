/**
 * The provider registry: every extended-id provider the service logs, as `{ id, source, name }`.
 * Spec: extended-ids.md §2.2 — 45 named providers with ids 1–45, plus `Unknown` = 0.
 * Fixed by the spec: `Unknown` = 0, `hemsha256` = 42, `ip` = 43. Ids are stable: never renumber, only append.
 */

/** One supported extended-id provider. */
export interface Provider {
  /** Numeric id the service logs and reports (0 = Unknown). */
  readonly id: number;
  /** The `source` value of its EIDs (lower case). */
  readonly source: string;
  /** Human-readable provider name. */
  readonly name: string;
}

/** The entry every unregistered source maps to. */
export const UNKNOWN_PROVIDER: Provider = Object.freeze({ id: 0, source: 'unknown', name: 'Unknown' });

const TABLE: ReadonlyArray<readonly [number, string, string]> = [
  [1, 'liveramp.com', 'LiveRamp RampID'],
  [2, 'id5-sync.com', 'ID5'],
  // Criteo: only its ad-side id is transferred, not the marketing-side one (spec §2.2).
  [3, 'criteo.com', 'Criteo'],
  // Unified ID 2.0 uses one source for US users and another for European users (spec §2.2).
  [4, 'uidapi.com', 'Unified ID 2.0'],
  [5, 'euid.eu', 'European Unified ID'],
  [6, 'adserver.org', 'Unified ID 1.0'],
  [7, 'pubcid.org', 'SharedID'],
  [8, 'yahoo.com', 'Yahoo ConnectID'],
  [9, '33across.com', '33Across ID'],
  [10, 'amazon.com', 'Amazon Publisher Services'],
  [11, 'liveintent.com', 'LiveIntent nonID'],
  [12, 'merkleinc.com', 'Merkle ID'],
  [13, 'netid.de', 'netID'],
  [14, 'neustar.biz', 'Fabrick ID'],
  [15, 'zeotap.com', 'Zeotap ID+'],
  [16, 'intentiq.com', 'Intent IQ'],
  [17, 'crwdcntrl.net', 'Lotame Panorama ID'],
  [18, 'quantcast.com', 'Quantcast ID'],
  [19, 'permutive.com', 'Permutive'],
  [20, 'teads.com', 'Teads ID'],
  [21, 'utiq.com', 'Utiq'],
  [22, 'audigent.com', 'Audigent'],
  [23, 'pubmatic.com', 'PubMatic'],
  [24, 'openx.net', 'OpenX'],
  [25, 'rubiconproject.com', 'Magnite'],
  [26, 'lotame.com', 'Lotame'],
  [27, 'sharethrough.com', 'Sharethrough'],
  [28, 'adnxs.com', 'Microsoft Xandr'],
  [29, 'novatiq.com', 'Novatiq Snowflake ID'],
  [30, 'hadron.ad.gt', 'Audigent Hadron ID'],
  [31, 'epsilon.com', 'Epsilon PublinkID'],
  [32, 'tapad.com', 'Tapad'],
  [33, 'parrable.com', 'Parrable'],
  [34, 'deepintent.com', 'DeepIntent'],
  [35, 'kpuid.com', 'Kinesso ID'],
  [36, 'britepool.com', 'BritePool'],
  [37, 'google.com', 'Google PAIR'],
  [38, 'trustpid.com', 'Trustpid'],
  [39, 'mediawallahscript.com', 'MediaWallah'],
  [40, 'adquery.io', 'Adquery QID'],
  [41, 'bidswitch.net', 'BidSwitch'],
  [42, 'hemsha256', 'Hashed email (SHA-256)'],
  [43, 'ip', 'IP address'],
  [44, 'operaads.com', 'Opera Ads ID'],
  [45, 'rtbhouse.com', 'RTB House'],
];

/** Every named provider (ids 1–45), in id order. `Unknown` is not included; see {@link UNKNOWN_PROVIDER}. */
export const PROVIDERS: readonly Provider[] = Object.freeze(
  TABLE.map(([id, source, name]) => Object.freeze({ id, source, name })),
);

const BY_SOURCE = new Map<string, Provider>(PROVIDERS.map((p) => [p.source, p]));
const BY_ID = new Map<number, Provider>(PROVIDERS.map((p) => [p.id, p]));

/**
 * Maps an EID `source` to its provider, case-insensitively; anything unregistered is `Unknown` (id 0).
 * @example providerForSource('UIDAPI.com') // { id: 4, source: 'uidapi.com', name: 'Unified ID 2.0' }
 */
export function providerForSource(source: unknown): Provider {
  if (typeof source !== 'string') return UNKNOWN_PROVIDER;
  return BY_SOURCE.get(source.trim().toLowerCase()) ?? UNKNOWN_PROVIDER;
}

/** Looks a provider up by its numeric id; `Unknown` for 0 or any id not in the registry. */
export function providerById(id: number): Provider {
  return BY_ID.get(id) ?? UNKNOWN_PROVIDER;
}

/** True when the source belongs to a registered provider. */
export function isKnownSource(source: unknown): boolean {
  return providerForSource(source) !== UNKNOWN_PROVIDER;
}
