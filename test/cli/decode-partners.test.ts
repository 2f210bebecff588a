import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
// @ts-expect-error: plain JS helper shared with the demo CMP
import { encodeTcString } from '../support/tcf/tc-string.mjs';

// Spawns the real built binary (`npm run build` first; `npm test` builds before the suites run).
const bin = fileURLToPath(new URL('../../dist/node/cli/index.js', import.meta.url));
const run = (args: string[]) => spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8' });

const eids = [
  { source: 'id5-sync.com', uids: [{ id: 'ID5*abc', atype: 1 }], inserter: 'news.example', mm: 4 },
  { source: 'uidapi.com', uids: [{ id: 'uid2-token', atype: 3 }] },
  { source: 'pubcid.org', uids: [{ id: 'first-party' }] },
];
const tc = encodeTcString([1, 2, 4], [45]) as string;
const url = `https://ads.example/ac?nwid=1&gdpr=1&gdpr_consent=${tc}&eids=${Buffer.from(JSON.stringify(eids)).toString('base64url')}`;

let dir: string;
const file = (name: string, value: unknown) => {
  const path = join(dir, name);
  writeFileSync(path, typeof value === 'string' ? value : JSON.stringify(value));
  return path;
};

describe('eidkit decode --partners', () => {
  beforeAll(() => {
    if (!existsSync(bin)) throw new Error('build first: npm run build');
    dir = mkdtempSync(join(tmpdir(), 'eidkit-partners-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const policy = {
    partners: [
      { id: 'equativ', gvlVendorId: 45 },
      { id: 'dsp-b', gvlVendorId: 131, openrtb: '2.5' },
    ],
    permissions: [{ source: 'uidapi.com', partners: ['dsp-b'] }],
    consent: { allowSources: ['pubcid.org'] },
  };

  test('prints, per partner, each eid it would receive (+) or not (-) with the rule or consent reason', () => {
    const r = run(['decode', '--partners', file('policy.json', policy), url]);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/id5-sync\.com\s+2\s+ID5\s+\(inserter news\.example, mm 4\)/);
    expect(r.stdout).toContain('forwarding to 2 partners');
    expect(r.stdout).toContain('equativ  (OpenRTB 2.6): receives 2 of 3 eids');
    expect(r.stdout).toMatch(/- uidapi\.com\s+permissions\[0\] \(source uidapi\.com\) allows only dsp-b/);
    expect(r.stdout).toContain(
      'dsp-b  (OpenRTB 2.5): receives 1 of 3 eids; consent: GDPR applies: vendor 131 has no consent in the TC string',
    );
    expect(r.stdout).toMatch(/\+ pubcid\.org\s+pubcid\.org is in allowSources/);
  });

  test('--json adds the forwarding per partner, and the eids keep their provenance', () => {
    const r = run(['decode', '--json', '--partners', file('list.json', [{ id: 'a', gvlVendorId: 45 }]), url]);
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.eids[0]).toMatchObject({ source: 'id5-sync.com', inserter: 'news.example', mm: 4, providerId: 2 });
    expect(out.forwarding).toEqual([
      {
        partner: 'a',
        openrtb: '2.6',
        kept: [0, 1, 2].map((index) => ({
          index,
          source: eids[index].source,
          reason: { code: 'no-rule', message: expect.any(String) },
        })),
        removed: [],
      },
    ]);
  });

  test('a bad partners file exits 3 naming the file and the bad rule, before reading the input', () => {
    const bad = run([
      'decode',
      '--partners',
      file('bad.json', { partners: [{ id: 'a' }], permissions: [{ source: 'x.example', partners: ['nobody'] }] }),
      '-',
    ]);
    expect(bad.status).toBe(3);
    expect(bad.stderr).toMatch(
      /bad\.json: invalid forwarding policy: permissions\[0\]\.partners: unknown partner "nobody"/,
    );
    expect(run(['decode', '--partners', file('broken.json', '{'), url]).stderr).toMatch(/broken\.json: not valid JSON/);
    expect(run(['decode', '--partners', file('empty.json', { permissions: [] }), url]).stderr).toMatch(
      /needs a non-empty list of partners/,
    );
    const missing = run(['decode', '--partners', join(dir, 'missing.json'), url]);
    expect(missing.status).toBe(3);
    expect(missing.stderr).toMatch(/missing\.json: could not be read \(no such file\)/);
    expect(missing.stderr).not.toMatch(/ENOENT/);
  });
});
