/**
 * Envelope expansion: one provider sends an encrypted identity envelope; the service
 * decrypts it and shares the ids inside (the provider's own id, Unified ID 2.0 `uidapi.com` and `euid.eu`,
 * a publisher-link id and a connect id `yahoo.com`) as extra eids when forwarding.
 *
 * The provider's real envelope format is private. Decryption is therefore a pluggable step
 * ({@link EnvelopeDecryptor}); what ships is a REFERENCE format of our own, documented in docs/ad-server.md
 * ("Envelope expansion"), so the whole path can be tested end to end. It is not the provider's format.
 * See docs/wire-format.md#identity-envelopes.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { mergeEids, validateEids } from '../../core/index.js';
import type { Eid, Issue, Result } from '../../core/index.js';
import { resolveLimits } from '../parse/index.js';
import type { AdCallLimits } from '../parse/index.js';

/** Decrypts one envelope into the eids it holds. Plug the provider's real decryption in here. */
export interface EnvelopeDecryptor {
  /** The eid source whose uid ids are envelopes (for example `liveramp.com`). */
  readonly source: string;
  /**
   * The eids inside `envelope`. Returns no eids and no issue for a value that is not an envelope (a plain id);
   * an issue for an envelope it cannot open. May be asynchronous (a key service, a vendor SDK).
   */
  decrypt(envelope: string): Result<Eid[]> | Promise<Result<Eid[]>>;
}

/** Options of {@link expandEnvelopes}. */
export interface ExpandOptions {
  /** Set as `inserter` on every added eid: the canonical domain of the service adding them (OpenRTB 2.6). */
  inserter?: string;
  /** Most envelopes opened per call. Default 4. */
  maxEnvelopes?: number;
  /** Longest wait for one decryption, in milliseconds; slower ones are skipped with an issue. Default 50. */
  timeoutMs?: number;
  /**
   * Caps the eids a decryptor returns are held to, as received eids are (defaults in `DEFAULT_LIMITS`): they are
   * forwarded to every partner, and a decryptor is code from elsewhere.
   */
  limits?: Partial<AdCallLimits>;
}

/**
 * Opens the envelopes among the eids and returns the extra eids they hold (never those already received,
 * source and id alike). Never throws: a failing or slow decryptor yields issues, not errors.
 * @example const { value: extra } = await expandEnvelopes(call.eids, decryptor, { inserter: 'ads.example' });
 */
export async function expandEnvelopes(
  eids: readonly Eid[],
  decryptor: EnvelopeDecryptor,
  options: ExpandOptions = {},
): Promise<Result<Eid[]>> {
  const issues: Issue[] = [];
  const max = options.maxEnvelopes ?? 4;
  const timeoutMs = options.timeoutMs ?? 50;
  const limits = resolveLimits(options.limits);
  const source = decryptor.source.toLowerCase();
  const candidates: { id: string; path: string }[] = [];
  eids.forEach((e, i) => {
    if (e.source.toLowerCase() === source)
      e.uids.forEach((u, j) => candidates.push({ id: u.id, path: `eids[${i}].uids[${j}]` }));
  });
  if (candidates.length > max)
    issues.push({ path: 'envelopes', message: `more than ${max} envelopes: ${candidates.length - max} not opened` });
  const opened = await Promise.all(
    candidates.slice(0, max).map(async ({ id, path }) => {
      let timer: NodeJS.Timeout | undefined;
      try {
        const timeout = new Promise<'timeout'>((resolve) => {
          timer = setTimeout(() => resolve('timeout'), timeoutMs);
        });
        const r = await Promise.race([Promise.resolve().then(() => decryptor.decrypt(id)), timeout]);
        if (r === 'timeout') {
          issues.push({ path, message: `envelope not decrypted within ${timeoutMs} ms` });
          return [];
        }
        const checked = validateEids(r.value, limits);
        for (const i of [...r.issues, ...checked.issues]) {
          issues.push({ path: `${path}.${i.path}`, message: i.message });
        }
        return checked.value;
      } catch (err) {
        issues.push({
          path,
          message: `envelope decryptor failed: ${err instanceof Error ? err.message : String(err)}`,
        });
        return [];
      } finally {
        clearTimeout(timer);
      }
    }),
  );
  const received = new Set(eids.flatMap((e) => e.uids.map((u) => `${e.source.toLowerCase()}\n${u.id}`)));
  const extra: Eid[] = [];
  for (const eid of mergeEids(opened.flat())) {
    const uids = eid.uids.filter((u) => !received.has(`${eid.source.toLowerCase()}\n${u.id}`));
    // Envelopes each within the uid cap still merge by source: the cap holds for the eid forwarded.
    if (uids.length > limits.maxUids) {
      const message = `more than ${limits.maxUids} uids of source "${eid.source}" once merged: ${uids.length - limits.maxUids} dropped`;
      issues.push({ path: 'envelopes', message });
      uids.length = limits.maxUids;
    }
    if (uids.length) extra.push({ ...eid, uids, ...(options.inserter ? { inserter: options.inserter } : {}) });
  }
  return { value: extra, issues };
}

// ---------------------------------------------------------------------------------------------------------
// The reference envelope format (docs/ad-server.md "Envelope expansion"):
//   ERv1.<keyId>.<iv>.<sealed>   iv: 12 random bytes; sealed: AES-256-GCM ciphertext followed by its 16-byte
//   tag; iv and sealed in URL-safe Base64 without padding; the additional authenticated data is "ERv1.<keyId>".
//   The plaintext is UTF-8 JSON {"iat": <unix seconds>, "ids": {"rampId"?, "uid2"?, "euid"?, "publinkId"?,
//   "connectId"?: string}}. Keys are 32 bytes, looked up by keyId, so keys rotate by adding a new id.
// ---------------------------------------------------------------------------------------------------------

const PREFIX = 'ERv1';
const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/;

/** The ids a reference envelope can hold, by name. */
export interface ReferenceEnvelopeIds {
  /** The envelope provider's own person id (`liveramp.com`). */
  rampId?: string;
  /** Unified ID 2.0, US users (`uidapi.com`). */
  uid2?: string;
  /** European Unified ID (`euid.eu`). */
  euid?: string;
  /** Publisher-link id (`epsilon.com`). */
  publinkId?: string;
  /** Connect id (`yahoo.com`). */
  connectId?: string;
}

/** Which eid source each named id becomes; all are person-based ids (atype 3). */
export const REFERENCE_ENVELOPE_SOURCES: Readonly<Record<keyof ReferenceEnvelopeIds, string>> = Object.freeze({
  rampId: 'liveramp.com',
  uid2: 'uidapi.com',
  euid: 'euid.eu',
  publinkId: 'epsilon.com',
  connectId: 'yahoo.com',
});

/** Keys by key id, each 32 bytes given as bytes or Base64 (standard or URL-safe). */
export type EnvelopeKeys = Readonly<Record<string, string | Uint8Array>>;

function toKey(keyId: string, key: string | Uint8Array): Buffer {
  if (!KEY_ID.test(keyId)) throw new TypeError(`envelope key id "${keyId}" must be 1-32 characters of A-Z a-z 0-9 _ -`);
  const bytes = typeof key === 'string' ? Buffer.from(key, 'base64') : Buffer.from(key);
  if (bytes.length !== 32)
    throw new TypeError(`envelope key "${keyId}" must be 32 bytes (AES-256), got ${bytes.length}`);
  return bytes;
}

/**
 * Reads envelope keys from configuration text `keyId:base64key,keyId2:base64key` (for example an
 * environment variable). Throws a TypeError naming the bad entry, never printing a key.
 */
export function envelopeKeysFromText(text: string): Record<string, Buffer> {
  // No prototype: a key id such as `__proto__` stays an ordinary own key instead of vanishing.
  const keys = Object.create(null) as Record<string, Buffer>;
  for (const part of text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const colon = part.indexOf(':');
    if (colon < 1) throw new TypeError('envelope keys must read keyId:base64key[,keyId:base64key]');
    const keyId = part.slice(0, colon);
    const key = toKey(keyId, part.slice(colon + 1));
    if (Object.hasOwn(keys, keyId)) throw new TypeError(`envelope key id "${keyId}" is given twice`);
    keys[keyId] = key;
  }
  return keys;
}

/**
 * Seals ids into a reference envelope (what the provider side would do; used by tests and the demo).
 * @example sealReferenceEnvelope({ rampId: 'XY123', uid2: 'A4A…' }, { keyId: 'k1', key })
 */
export function sealReferenceEnvelope(
  ids: ReferenceEnvelopeIds,
  options: { keyId: string; key: string | Uint8Array; iat?: number },
): string {
  const key = toKey(options.keyId, options.key);
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(`${PREFIX}.${options.keyId}`));
  const plain = JSON.stringify({ iat: options.iat ?? Math.floor(Date.now() / 1000), ids });
  const sealed = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return [PREFIX, options.keyId, iv.toString('base64url'), sealed.toString('base64url')].join('.');
}

/** Options of {@link createReferenceEnvelopeDecryptor}. */
export interface ReferenceDecryptorOptions {
  /** Decryption keys by key id (from configuration; see {@link envelopeKeysFromText}). */
  keys: EnvelopeKeys;
  /** The eid source carrying envelopes. Default `liveramp.com`. */
  source?: string;
  /** Oldest envelope accepted, in milliseconds since its `iat`. Default 30 days. */
  maxAgeMs?: number;
  /** Clock, for tests. */
  now?: () => number;
}

const B64URL = /^[A-Za-z0-9_-]+$/;

/**
 * The decryptor of the reference envelope format: AES-256-GCM, keys by key id from configuration.
 * Values without the `ERv1.` prefix are plain ids, not envelopes: they yield nothing and no issue.
 */
export function createReferenceEnvelopeDecryptor(options: ReferenceDecryptorOptions): EnvelopeDecryptor {
  const keys = new Map(Object.entries(options.keys).map(([id, k]) => [id, toKey(id, k)]));
  const maxAge = options.maxAgeMs ?? 30 * 86_400_000;
  const now = options.now ?? Date.now;
  const fail = (message: string): Result<Eid[]> => ({ value: [], issues: [{ path: 'id', message }] });
  return {
    source: options.source ?? 'liveramp.com',
    decrypt(envelope) {
      if (!envelope.startsWith(PREFIX + '.')) return { value: [], issues: [] };
      const parts = envelope.split('.');
      if (parts.length !== 4 || !B64URL.test(parts[2]) || !B64URL.test(parts[3]))
        return fail('malformed reference envelope');
      const [, keyId, ivText, sealedText] = parts;
      const key = keys.get(keyId);
      if (!key) return fail(`no key configured for envelope key id "${keyId.slice(0, 32)}"`);
      const iv = Buffer.from(ivText, 'base64url');
      const sealed = Buffer.from(sealedText, 'base64url');
      if (iv.length !== 12 || sealed.length < 17) return fail('malformed reference envelope');
      let payload: unknown;
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, iv);
        decipher.setAAD(Buffer.from(`${PREFIX}.${keyId}`));
        decipher.setAuthTag(sealed.subarray(sealed.length - 16));
        const plain = Buffer.concat([decipher.update(sealed.subarray(0, sealed.length - 16)), decipher.final()]);
        payload = JSON.parse(plain.toString('utf8'));
      } catch {
        return fail('envelope failed authentication (wrong key or tampered)');
      }
      const p = payload as { iat?: unknown; ids?: Record<string, unknown> } | null;
      if (!p || typeof p.iat !== 'number' || typeof p.ids !== 'object' || p.ids === null)
        return fail('envelope payload has no iat or ids');
      if (now() - p.iat * 1000 > maxAge) return fail('envelope expired');
      const value: Eid[] = [];
      for (const [name, source] of Object.entries(REFERENCE_ENVELOPE_SOURCES)) {
        const id = p.ids[name];
        if (typeof id === 'string' && id) value.push({ source, uids: [{ id, atype: 3 }] });
      }
      return { value, issues: [] };
    },
  };
}
