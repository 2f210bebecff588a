/**
 * The provider registry: every extended-id provider the service logs, as `{ id, source, name }`, and the other
 * sources that resolve to it (docs/providers.md). 45 named providers with ids 1–45, plus `Unknown` = 0; fixed:
 * `Unknown` = 0, `hemsha256` = 42, `ip` = 43. Ids are stable: never renumber, only append.
 */

/** One supported extended-id provider. */
export interface Provider {
  /** Numeric id the service logs and reports (0 = Unknown). */
  readonly id: number;
  /** The `source` value of its EIDs (lower case). */
  readonly source: string;
  /** Other sources that resolve to it, as Prebid.js's id modules send them (`*.` stands for any subdomain). */
  readonly aliases: readonly string[];
  /** Human-readable provider name. */
  readonly name: string;
}

/** The entry every unregistered source maps to. */
export const UNKNOWN_PROVIDER: Provider = /*#__PURE__*/ Object.freeze({
  id: 0,
  source: 'unknown',
  aliases: [],
  name: 'Unknown',
});

// Two parallel lists indexed by id - 1, so the tag can keep the sources without the names (size budget).
// Ids are positions: never reorder or remove, only append (before the aliases). One string split on spaces:
// smaller in the tag than an array literal. Unified ID 2.0 has a US source (4) and a European one (5); Criteo's
// source carries only its ad-side id, not its marketing-side one.
const SOURCES: readonly string[] = (
  'liveramp.com id5-sync.com criteo.com uidapi.com euid.eu ' + // 1–5
  'adserver.org pubcid.org yahoo.com 33across.com amazon.com ' + // 6–10
  'liveintent.com merkleinc.com netid.de neustar.biz zeotap.com ' + // 11–15
  'intentiq.com crwdcntrl.net quantcast.com permutive.com teads.com ' + // 16–20
  'utiq.com audigent.com pubmatic.com openx.net rubiconproject.com ' + // 21–25
  'lotame.com sharethrough.com adnxs.com novatiq.com hadron.ad.gt ' + // 26–30
  'epsilon.com tapad.com parrable.com deepintent.com kpuid.com ' + // 31–35
  'britepool.com google.com trustpid.com mediawallahscript.com adquery.io ' + // 36–40
  'bidswitch.net hemsha256 ip operaads.com rtbhouse.com ' + // 41–45
  // Aliases: other spellings of registered providers' sources, as Prebid.js's id modules send them, with their
  // ids in ALIAS_IDS (the evidence per module: docs/providers.md, "Sources as Prebid.js sends them").
  't.adx.opera.com esp.pubmatic.com true-link-id5-sync.com utiq-mtp.com'
).split(' ');
/** The provider ids of the aliases at the end of SOURCES, in the same order. */
const ALIAS_IDS: readonly number[] = [44, 23, 2, 21];
/** How many providers SOURCES names before its aliases. */
const NAMED = 45;

/**
 * A source as SOURCES spells it: trimmed, lower case. Merkle's module sends one source per SSP it matched for,
 * `<ssp>.merkleinc.com`, so any subdomain of `merkleinc.com` is Merkle's.
 */
function canonical(source: string): string {
  // Anchored: one match attempt, linear in the source's length.
  return source
    .trim()
    .toLowerCase()
    .replace(/^.*\.(?=merkleinc\.com$)/, '');
}

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
  'Audigent Hadron ID', // 22
  'PubMatic', // 23
  'OpenX', // 24
  'Magnite', // 25
  'Lotame', // 26
  'Sharethrough', // 27
  'Microsoft Xandr', // 28
  'Novatiq Snowflake ID', // 29
  'Audigent Hadron ID (hadron.ad.gt)', // 30
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
  /*#__PURE__*/ NAMES.map((name, i) =>
    Object.freeze({
      id: i + 1,
      source: SOURCES[i],
      aliases: Object.freeze([
        ...SOURCES.slice(NAMED).filter((_, a) => ALIAS_IDS[a] === i + 1),
        ...(SOURCES[i] === 'merkleinc.com' ? ['*.merkleinc.com'] : []),
      ]),
      name,
    }),
  ),
);

/**
 * The provider id of an EID `source` or one of its aliases, case-insensitively; 0 (Unknown) for anything else.
 * Needs only the source list, so the tag can use it without carrying the provider names.
 */
export function providerIdForSource(source: unknown): number {
  const i = typeof source === 'string' ? SOURCES.indexOf(canonical(source)) : -1;
  return i < NAMED ? i + 1 : ALIAS_IDS[i - NAMED];
}

/**
 * Maps an EID `source` to its provider, case-insensitively; anything unregistered is `Unknown` (id 0).
 * @example providerForSource('UIDAPI.com') // { id: 4, source: 'uidapi.com', aliases: [], name: 'Unified ID 2.0' }
 */
export function providerForSource(source: unknown): Provider {
  return providerById(providerIdForSource(source));
}

/** Looks a provider up by its numeric id; `Unknown` for 0 or any id not in the registry. */
export function providerById(id: number): Provider {
  return (Number.isInteger(id) && PROVIDERS[id - 1]) || UNKNOWN_PROVIDER;
}

/** True when the source (or an alias of it) belongs to a registered provider. */
export function isKnownSource(source: unknown): boolean {
  return typeof source === 'string' && SOURCES.includes(canonical(source));
}
