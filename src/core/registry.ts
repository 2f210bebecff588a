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
export const UNKNOWN_PROVIDER: Provider = /*#__PURE__*/ Object.freeze({ id: 0, source: 'unknown', name: 'Unknown' });

// Two parallel lists indexed by id - 1, so the tag can keep the sources without the names (size budget).
// Ids are positions: never reorder or remove, only append.
const SOURCES: readonly string[] = [
  'liveramp.com', // 1
  'id5-sync.com', // 2
  // Criteo: only its ad-side id is transferred, not the marketing-side one (spec §2.2).
  'criteo.com', // 3
  // Unified ID 2.0 uses one source for US users and another for European users (spec §2.2).
  'uidapi.com', // 4
  'euid.eu', // 5
  'adserver.org', // 6
  'pubcid.org', // 7
  'yahoo.com', // 8
  '33across.com', // 9
  'amazon.com', // 10
  'liveintent.com', // 11
  'merkleinc.com', // 12
  'netid.de', // 13
  'neustar.biz', // 14
  'zeotap.com', // 15
  'intentiq.com', // 16
  'crwdcntrl.net', // 17
  'quantcast.com', // 18
  'permutive.com', // 19
  'teads.com', // 20
  'utiq.com', // 21
  'audigent.com', // 22
  'pubmatic.com', // 23
  'openx.net', // 24
  'rubiconproject.com', // 25
  'lotame.com', // 26
  'sharethrough.com', // 27
  'adnxs.com', // 28
  'novatiq.com', // 29
  'hadron.ad.gt', // 30
  'epsilon.com', // 31
  'tapad.com', // 32
  'parrable.com', // 33
  'deepintent.com', // 34
  'kpuid.com', // 35
  'britepool.com', // 36
  'google.com', // 37
  'trustpid.com', // 38
  'mediawallahscript.com', // 39
  'adquery.io', // 40
  'bidswitch.net', // 41
  'hemsha256', // 42
  'ip', // 43
  'operaads.com', // 44
  'rtbhouse.com', // 45
];

const NAMES: readonly string[] = [
  'LiveRamp RampID', // 1
  'ID5', // 2
  'Criteo', // 3
  'Unified ID 2.0', // 4
  'European Unified ID', // 5
  'Unified ID 1.0', // 6
  'SharedID', // 7
  'Yahoo ConnectID', // 8
  '33Across ID', // 9
  'Amazon Publisher Services', // 10
  'LiveIntent nonID', // 11
  'Merkle ID', // 12
  'netID', // 13
  'Fabrick ID', // 14
  'Zeotap ID+', // 15
  'Intent IQ', // 16
  'Lotame Panorama ID', // 17
  'Quantcast ID', // 18
  'Permutive', // 19
  'Teads ID', // 20
  'Utiq', // 21
  'Audigent', // 22
  'PubMatic', // 23
  'OpenX', // 24
  'Magnite', // 25
  'Lotame', // 26
  'Sharethrough', // 27
  'Microsoft Xandr', // 28
  'Novatiq Snowflake ID', // 29
  'Audigent Hadron ID', // 30
  'Epsilon PublinkID', // 31
  'Tapad', // 32
  'Parrable', // 33
  'DeepIntent', // 34
  'Kinesso ID', // 35
  'BritePool', // 36
  'Google PAIR', // 37
  'Trustpid', // 38
  'MediaWallah', // 39
  'Adquery QID', // 40
  'BidSwitch', // 41
  'Hashed email (SHA-256)', // 42
  'IP address', // 43
  'Opera Ads ID', // 44
  'RTB House', // 45
];

/** Every named provider (ids 1–45), in id order. `Unknown` is not included; see {@link UNKNOWN_PROVIDER}. */
export const PROVIDERS: readonly Provider[] = /*#__PURE__*/ Object.freeze(
  /*#__PURE__*/ SOURCES.map((source, i) => Object.freeze({ id: i + 1, source, name: NAMES[i] })),
);

/**
 * The provider id of an EID `source`, case-insensitively; 0 (Unknown) for anything else.
 * Needs only the source list, so the tag can use it without carrying the provider names.
 */
export function providerIdForSource(source: unknown): number {
  return typeof source === 'string' ? SOURCES.indexOf(source.trim().toLowerCase()) + 1 : 0;
}

/**
 * Maps an EID `source` to its provider, case-insensitively; anything unregistered is `Unknown` (id 0).
 * @example providerForSource('UIDAPI.com') // { id: 4, source: 'uidapi.com', name: 'Unified ID 2.0' }
 */
export function providerForSource(source: unknown): Provider {
  return providerById(providerIdForSource(source));
}

/** Looks a provider up by its numeric id; `Unknown` for 0 or any id not in the registry. */
export function providerById(id: number): Provider {
  return (Number.isInteger(id) && PROVIDERS[id - 1]) || UNKNOWN_PROVIDER;
}

/** True when the source belongs to a registered provider. */
export function isKnownSource(source: unknown): boolean {
  return providerIdForSource(source) > 0;
}
