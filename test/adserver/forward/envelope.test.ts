import { describe, expect, test } from 'vitest';
import { randomBytes } from 'node:crypto';
import {
  buildBidRequest,
  createReferenceEnvelopeDecryptor,
  envelopeKeysFromText,
  expandEnvelopes,
  parseAdCall,
  sealReferenceEnvelope,
} from '../../../src/adserver/index.js';
import type { EnvelopeDecryptor } from '../../../src/adserver/index.js';
import { ID5, UID2, b64url } from '../fixtures.js';

const key = randomBytes(32);
const ids = {
  rampId: 'XY-ramp',
  uid2: 'uid2-token',
  euid: 'euid-token',
  publinkId: 'publink-1',
  connectId: 'connect-1',
};
const envelopeEid = (id: string) => ({ source: 'liveramp.com', uids: [{ id, atype: 3 }] });
const NOW = Date.UTC(2025, 2, 1);
const decryptor = createReferenceEnvelopeDecryptor({ keys: { k1: key }, now: () => NOW });
const seal = (i = ids, iat = NOW / 1000) => sealReferenceEnvelope(i, { keyId: 'k1', key, iat });

describe('envelope expansion', () => {
  test('opens a reference envelope into the five ids as extra eids, end to end through the bid request', async () => {
    const q = new URLSearchParams({ nwid: '1', eids: b64url([envelopeEid(seal()), ID5]) });
    const call = parseAdCall({ url: `/ac?${q}` });
    const { value: extra, issues } = await expandEnvelopes(call.eids, decryptor, { inserter: 'ads.example' });
    expect(issues).toEqual([]);
    expect(extra).toEqual(
      [
        'liveramp.com:XY-ramp',
        'uidapi.com:uid2-token',
        'euid.eu:euid-token',
        'epsilon.com:publink-1',
        'yahoo.com:connect-1',
      ].map((s) => {
        const [source, id] = s.split(':');
        return { source, uids: [{ id, atype: 3 }], inserter: 'ads.example' };
      }),
    );
    const req = buildBidRequest(call, { id: 'dsp' }, { extraEids: extra });
    expect(req.user?.eids?.slice(0, 2)).toEqual(call.eids); // the received envelope eid is forwarded unmodified
    expect(req.user?.eids?.map((e) => e.source)).toEqual([
      'liveramp.com',
      'id5-sync.com',
      'liveramp.com',
      'uidapi.com',
      'euid.eu',
      'epsilon.com',
      'yahoo.com',
    ]);
  });

  test('does not repeat an id the call already carries', async () => {
    const { value } = await expandEnvelopes(
      [envelopeEid(seal()), UID2, { source: 'uidapi.com', uids: [{ id: 'uid2-token' }] }],
      decryptor,
    );
    expect(value.map((e) => e.source)).toEqual(['liveramp.com', 'euid.eu', 'epsilon.com', 'yahoo.com']);
  });

  test('leaves a plain id (not an envelope) alone without an issue', async () => {
    expect(await expandEnvelopes([envelopeEid('XY1000plainRampId')], decryptor)).toEqual({ value: [], issues: [] });
  });

  test('refuses a tampered envelope, an unknown key id, an expired envelope and a malformed one, each with an issue', async () => {
    const good = seal();
    const parts = good.split('.');
    const flipped = parts[3].startsWith('A') ? 'B' + parts[3].slice(1) : 'A' + parts[3].slice(1);
    const tampered = [...parts.slice(0, 3), flipped].join('.');
    const otherKey = sealReferenceEnvelope(ids, { keyId: 'k9', key: randomBytes(32), iat: NOW / 1000 });
    const expired = seal(ids, NOW / 1000 - 31 * 86_400);
    const eids = [
      { source: 'liveramp.com', uids: [tampered, otherKey, expired, 'ERv1.k1.!!.??'].map((id) => ({ id })) },
    ];
    const { value, issues } = await expandEnvelopes(eids, decryptor);
    expect(value).toEqual([]);
    expect(issues.map((i) => i.message)).toEqual([
      'envelope failed authentication (wrong key or tampered)',
      'no key configured for envelope key id "k9"',
      'envelope expired',
      'malformed reference envelope',
    ]);
    expect(issues[0].path).toBe('eids[0].uids[0].id');
  });

  test('the key id is authenticated: swapped for another id, even one holding the same key, it fails', async () => {
    // The same key under both ids: only the additional authenticated data ("ERv1.<keyId>") can tell them apart.
    const d = createReferenceEnvelopeDecryptor({ keys: { k1: key, k2: key, k3: randomBytes(32) }, now: () => NOW });
    expect(await expandEnvelopes([envelopeEid(seal())], d)).toMatchObject({ issues: [] });
    for (const id of ['k2', 'k3']) {
      const swapped = seal().replace('ERv1.k1.', `ERv1.${id}.`);
      expect((await expandEnvelopes([envelopeEid(swapped)], d)).issues[0].message).toMatch(/authentication/);
    }
  });

  test('a truncated or altered authentication tag is refused', async () => {
    const [prefix, keyId, iv, sealedText] = seal().split('.');
    const sealed = Buffer.from(sealedText, 'base64url');
    const shortTag = sealed.subarray(0, sealed.length - 4).toString('base64url');
    const flipped = Buffer.from(sealed);
    flipped[flipped.length - 1] ^= 1;
    for (const s of [shortTag, flipped.toString('base64url')]) {
      const { value, issues } = await expandEnvelopes([envelopeEid([prefix, keyId, iv, s].join('.'))], decryptor);
      expect(value).toEqual([]);
      expect(issues[0].message).toMatch(/authentication/);
    }
  });

  test('a key id named like an Object.prototype property is an ordinary key id', async () => {
    const keys = envelopeKeysFromText(`__proto__:${key.toString('base64')},constructor:${key.toString('base64')}`);
    expect(Object.keys(keys).sort()).toEqual(['__proto__', 'constructor']);
    const d = createReferenceEnvelopeDecryptor({ keys, now: () => NOW });
    const e = sealReferenceEnvelope({ rampId: 'p' }, { keyId: '__proto__', key, iat: NOW / 1000 });
    expect((await expandEnvelopes([envelopeEid(e)], d)).value).toEqual([
      { source: 'liveramp.com', uids: [{ id: 'p', atype: 3 }] },
    ]);
  });

  test('rotates keys: envelopes under old and new key ids both open', async () => {
    const k2 = randomBytes(32);
    const d = createReferenceEnvelopeDecryptor({
      keys: envelopeKeysFromText(`k1:${key.toString('base64')}, k2:${k2.toString('base64url')}`),
      now: () => NOW,
    });
    const e2 = sealReferenceEnvelope({ rampId: 'new' }, { keyId: 'k2', key: k2, iat: NOW / 1000 });
    const { value } = await expandEnvelopes(
      [{ source: 'liveramp.com', uids: [{ id: seal({ rampId: 'old' }) }, { id: e2 }] }],
      d,
    );
    expect(value).toEqual([
      {
        source: 'liveramp.com',
        uids: [
          { id: 'old', atype: 3 },
          { id: 'new', atype: 3 },
        ],
      },
    ]);
  });

  test('refuses keys that are not 32 bytes, without printing them', () => {
    expect(() => envelopeKeysFromText('k1:c2hvcnQ=')).toThrow(/32 bytes/);
    try {
      envelopeKeysFromText('k1:c2hvcnQ=');
    } catch (e) {
      expect(String(e)).not.toContain('c2hvcnQ');
    }
    expect(() => envelopeKeysFromText('nokey')).toThrow(/keyId:base64key/);
    const k = key.toString('base64');
    expect(() => envelopeKeysFromText(`k1:${k},k1:${k}`)).toThrow('envelope key id "k1" is given twice');
    try {
      envelopeKeysFromText(`k1:${k},k1:${k}`);
    } catch (e) {
      expect(String(e)).not.toContain(k);
    }
  });

  test('a throwing or slow decryptor yields an issue and the call goes on', async () => {
    const throwing: EnvelopeDecryptor = {
      source: 'liveramp.com',
      decrypt: () => {
        throw new Error('vendor down');
      },
    };
    const slow: EnvelopeDecryptor = { source: 'liveramp.com', decrypt: () => new Promise(() => undefined) };
    expect((await expandEnvelopes([envelopeEid('x')], throwing)).issues[0].message).toBe(
      'envelope decryptor failed: vendor down',
    );
    expect((await expandEnvelopes([envelopeEid('x')], slow, { timeoutMs: 10 })).issues[0].message).toBe(
      'envelope not decrypted within 10 ms',
    );
  });

  test('opens at most maxEnvelopes per call', async () => {
    const eids = [{ source: 'liveramp.com', uids: [1, 2, 3].map((n) => ({ id: seal({ rampId: `r${n}` }) })) }];
    const { value, issues } = await expandEnvelopes(eids, decryptor, { maxEnvelopes: 2 });
    expect(value[0].uids.map((u) => u.id)).toEqual(['r1', 'r2']);
    expect(issues).toEqual([{ path: 'envelopes', message: 'more than 2 envelopes: 1 not opened' }]);
  });
});
