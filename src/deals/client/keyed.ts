/**
 * Deal keys: a caller-chosen stable name carried in `callerDealIds` as the marker `eidkit:<key>` (optionally
 * `eidkit:<key>#<hash>`, the hash of the fields `eidkit deals apply` last wrote), so the live deal of a key is
 * found by listing, from any machine, with no local state. And `create(deal, { key })`: a create that is never
 * lost or doubled although the API has no idempotency key and caps creations at 15 a day.
 */
import type { DealRead, DealWriteInput } from '../rules/index.js';
import { DealApiError, ValidationError } from './errors.js';
import { sleep } from './sleep.js';

/** The prefix of a key marker in `callerDealIds`. */
export const DEAL_KEY_PREFIX = 'eidkit:';
/** How far back (ms) the recovery lookup lists deals (`createdOrModifiedSince`), to absorb clock skew. */
export const RECOVERY_LOOKBACK_MS = 60 * 60_000;

const NAME = '[A-Za-z0-9][A-Za-z0-9._-]{0,99}';
const KEY = new RegExp(`^(?:${NAME}/)?${NAME}$`);
const NAMESPACE = new RegExp(`^${NAME}$`);
const MARKER = new RegExp(`^eidkit:((?:${NAME}/)?${NAME})(?:#([0-9a-f]{12}))?$`);

/**
 * True when `key` is a valid deal key: 1–100 of letters, digits, `.`, `_`, `-`, starting with a letter or digit,
 * optionally behind one `namespace/` of the same form (a deals file with a `namespace` keys its deals that way).
 */
export function isDealKey(key: unknown): key is string {
  return typeof key === 'string' && KEY.test(key);
}

/** True when `name` is a valid namespace of deal keys (the same form as a key without `/`). */
export function isDealKeyNamespace(name: unknown): name is string {
  return typeof name === 'string' && NAMESPACE.test(name);
}

/** The namespace part of a key (`team-a` of `team-a/spring`), or undefined for a key without one. */
export function dealKeyNamespace(key: string): string | undefined {
  const slash = key.indexOf('/');
  return slash === -1 ? undefined : key.slice(0, slash);
}

/** The marker of a key: `eidkit:<key>`, or `eidkit:<key>#<hash>` when the applied fields' hash is given. */
export function dealKeyMarker(key: string, hash?: string): string {
  if (!isDealKey(key))
    throw new TypeError(
      `a deal key must be 1-100 letters, digits, ".", "_" or "-" (starting with a letter or digit), got ${JSON.stringify(key)}`,
    );
  return hash ? `${DEAL_KEY_PREFIX}${key}#${hash}` : `${DEAL_KEY_PREFIX}${key}`;
}

/** Parses one `callerDealIds` entry; undefined when it is not a key marker. */
export function parseDealKeyMarker(value: unknown): { key: string; hash?: string } | undefined {
  const m = typeof value === 'string' ? MARKER.exec(value) : null;
  if (!m) return undefined;
  return m[2] ? { key: m[1], hash: m[2] } : { key: m[1] };
}

/** The key marker a deal carries (the first one), or undefined. */
export function dealKeyOf(deal: {
  callerDealIds?: readonly string[] | null;
}): { key: string; hash?: string } | undefined {
  for (const id of deal.callerDealIds ?? []) {
    const parsed = parseDealKeyMarker(id);
    if (parsed) return parsed;
  }
  return undefined;
}

/** `callerDealIds` without key markers (what the user manages). */
export function userCallerDealIds(ids: readonly string[] | null | undefined): string[] {
  return (ids ?? []).filter((id) => !parseDealKeyMarker(id));
}

/** `callerDealIds` with the marker of `key` appended and any other key marker removed. */
export function withDealKeyMarker(ids: readonly string[] | null | undefined, key: string, hash?: string): string[] {
  return [...userCallerDealIds(ids), dealKeyMarker(key, hash)];
}

/** What a keyed create needs from the client. */
export interface KeyedCreateContext {
  /** The client's clock. */
  now(): number;
  /** How many times a create that may have reached the service, and is not found by its key, is sent again. */
  maxRecoveries: number;
  /** Sends one create (validated, retried only while provably unsent). */
  send(
    deal: DealWriteInput,
  ): Promise<{ id: number; location: string; historyId?: string; deal?: DealRead; recovered: boolean }>;
  /** The deals created or modified since a date, across pages. */
  list(since: Date): AsyncIterable<DealRead>;
  /** The URL of a deal by id. */
  urlOf(id: number): string;
  /** A scrubbed warning line. */
  warn(message: string): void;
  /** The caller's signal: aborting it ends the wait between recoveries at once. */
  signal?: AbortSignal;
}

/** Finds the live deal of a key among the deals created or modified since `since` (the oldest when doubled). */
export async function findDealByKey(deals: AsyncIterable<DealRead>, key: string): Promise<DealRead | undefined> {
  let found: DealRead | undefined;
  for await (const deal of deals) {
    if (dealKeyOf(deal)?.key === key && (!found || deal.id < found.id)) found = deal;
  }
  return found;
}

/**
 * Creates a deal carrying the marker of `key`. When the create fails in a way that may have created it, the key is
 * looked up among recently created deals before deciding: found, that deal is returned with `recovered: true`;
 * not found, the service did not create it, so the create is sent again.
 */
export async function createWithKey(
  ctx: KeyedCreateContext,
  deal: DealWriteInput,
  key: string,
): Promise<{ id: number; location: string; historyId?: string; deal?: DealRead; recovered: boolean }> {
  if (!isDealKey(key)) {
    throw new ValidationError(
      `key must be 1-100 letters, digits, ".", "_" or "-", starting with a letter or digit, got ${JSON.stringify(key)}`,
      [{ path: 'key', message: 'is not a valid deal key' }],
      { attempts: 0 },
    );
  }
  const existing = dealKeyOf(deal);
  const marked = existing?.key === key ? deal : { ...deal, callerDealIds: withDealKeyMarker(deal.callerDealIds, key) };
  const since = new Date(ctx.now() - RECOVERY_LOOKBACK_MS);
  for (let recovery = 0; ; recovery++) {
    try {
      return await ctx.send(marked);
    } catch (err) {
      // Every error of a create says whether it may have created the deal (errors.ts markCreateOutcome).
      if (!(err instanceof DealApiError && err.mayHaveCreated === true)) throw err;
      ctx.warn(
        `create of key ${key} may have reached the service (${(err as Error).message}); looking the key up before deciding`,
      );
      let found: DealRead | undefined;
      try {
        found = await findDealByKey(ctx.list(since), key);
      } catch (lookupErr) {
        // Cannot tell whether it was created: report the original failure, which says so.
        ctx.warn(`looking up key ${key} failed: ${(lookupErr as Error).message}`);
        throw err;
      }
      if (found) return { id: found.id, location: ctx.urlOf(found.id), deal: found, recovered: true };
      if (recovery >= ctx.maxRecoveries) throw err;
      // Not there: the service did not create it, so sending it again cannot double it.
      await sleep(Math.min(2_000, 50 * 2 ** recovery), ctx.signal);
    }
  }
}
