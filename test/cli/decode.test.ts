import { beforeAll, describe, expect, test } from 'vitest';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// Spawns the real built binary (`npm run build` first; `npm test` builds before the suites run).
const bin = fileURLToPath(new URL('../../dist/node/cli/index.js', import.meta.url));
const run = (args: string[], input?: string) =>
  spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', input });

const eids = [
  { source: 'id5-sync.com', uids: [{ id: 'ID5*abc', atype: 1, ext: { linkType: 2 } }] },
  { source: 'uidapi.com', uids: [{ id: 'uid2-token', atype: 3 }] },
  { source: 'example.org', uids: [{ id: 'x1' }] },
  {
    source: 'hemsha256',
    uids: [
      { id: 'f'.repeat(64), atype: 9 },
      { id: 'e'.repeat(64), atype: '3' },
    ],
  },
  { source: 'pubcid.org', uids: [{ id: '' }] },
];
const b64url = Buffer.from(JSON.stringify(eids)).toString('base64url');

describe('eidkit decode', () => {
  beforeAll(() => {
    if (!existsSync(bin)) throw new Error('build first: npm run build');
  });

  test('prints each eid of an ad-call URL with its provider id and name, and every issue', () => {
    const r = run(['decode', `https://ads.example/ac?nwid=1234&siteid=5&pgid=6&fmtid=7&eids=${b64url}`]);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('network: 1234');
    expect(r.stdout).toMatch(/id5-sync\.com\s+2\s+ID5/);
    expect(r.stdout).toMatch(/uidapi\.com\s+4\s+Unified ID 2\.0/);
    expect(r.stdout).toMatch(/example\.org\s+0\s+Unknown/);
    expect(r.stdout).toContain('eids[3].uids[0].atype: atype 9 is not 1, 2, 3 or >= 500 (AdCOM); kept as sent');
    expect(r.stdout).toContain('eids[3].uids[1].atype: atype must be an integer; atype dropped, uid kept');
    expect(r.stdout).toContain('eids[4]: eid "pubcid.org" has no valid uid and is dropped');
    expect(r.stdout).toContain('4 issues');
  });

  test('decodes a standard Base64 string with --json', () => {
    const r = run(['decode', '--json', Buffer.from(JSON.stringify(eids.slice(0, 2))).toString('base64')]);
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({ input: 'base64', decoded: true, issues: [] });
    expect(out.eids.map((e: { providerId: number; providerName: string }) => [e.providerId, e.providerName])).toEqual([
      [2, 'ID5'],
      [4, 'Unified ID 2.0'],
    ]);
  });

  test('reads the input from stdin with -', () => {
    const r = run(['decode', '-'], b64url + '\n');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('4 eids');
  });

  test('exits 3 with a clear message for input that is not Base64', () => {
    const r = run(['decode', 'not*base64!']);
    expect(r.status).toBe(3);
    expect(r.stderr).toContain('eidkit: could not decode the eids: not valid Base64');
  });

  test('exits 3 for Base64 that holds no JSON array, and for a URL without eids', () => {
    const notArray = run(['decode', '--json', Buffer.from('{"a":1}').toString('base64')]);
    expect(notArray.status).toBe(3);
    expect(JSON.parse(notArray.stdout)).toMatchObject({
      decoded: false,
      issues: [{ path: 'eids', message: 'eids must be an array' }],
    });
    const noParam = run(['decode', 'https://ads.example/ac?nwid=1']);
    expect(noParam.status).toBe(3);
    expect(noParam.stderr).toContain('the URL has no eids parameter');
  });

  test('decodes a POST ad-call body read from stdin, and refuses a body that is not JSON', () => {
    const body = JSON.stringify({
      networkId: 1234,
      siteId: 5,
      formats: [{ id: 7, tagId: 'top' }],
      eids: eids.slice(0, 3),
    });
    const r = run(['decode', '--json', '-'], body);
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      input: 'body',
      decoded: true,
      call: { endpoint: 'genericpost', networkId: 1234 },
      issues: [],
    });
    const broken = run(['decode', '{"networkId": 1, "eids": ['], '');
    expect(broken.status).toBe(3);
    expect(broken.stderr).toContain('could not decode the eids: not valid JSON; body ignored');
  });

  test('exits 3, not 0, when the eids parameter is empty or its percent-encoding is broken', () => {
    const empty = run(['decode', '/ac?nwid=1&eids=']);
    expect(empty.status).toBe(3);
    expect(empty.stderr).toContain('could not decode the eids: the eids parameter is empty');
    const broken = run(['decode', '--json', '/ac?nwid=1&eids=%E0%A4%A']);
    expect(broken.status).toBe(3);
    expect(JSON.parse(broken.stdout)).toMatchObject({
      decoded: false,
      issues: [{ path: 'eids', message: 'malformed percent-encoding; ignored' }],
    });
  });

  test('a URL the WHATWG parser refuses is still read as the ad server reads it, never an unexpected error', () => {
    const r = run(['decode', `http://[bad/ac?nwid=1&eids=${b64url}`]);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('4 eids');
    expect(r.stderr).toBe('');
  });

  test('exits 3 for a body whose eids is null, and still 0 when a count cap dropped some eids', () => {
    const nullEids = run(['decode', '{"networkId": 1, "eids": null}']);
    expect(nullEids.status).toBe(3);
    expect(nullEids.stderr).toContain('the body has no eids field');
    const many = Array.from({ length: 70 }, (_, i) => ({ source: `s${i}.example`, uids: [{ id: 'x' }] }));
    const capped = run(['decode', '--json', JSON.stringify({ networkId: 1, eids: many })]);
    expect(capped.status).toBe(0);
    expect(JSON.parse(capped.stdout)).toMatchObject({
      decoded: true,
      issues: [{ path: 'eids', message: 'more than 64 eids: 6 dropped' }],
    });
  });

  test('exits 2 when the input argument is missing', () => {
    expect(run(['decode']).status).toBe(2);
  });
});

describe('eidkit decode --post-body', () => {
  const dir = mkdtempSync(join(tmpdir(), 'eidkit-decode-'));
  const file = (name: string, body: unknown) => {
    const path = join(dir, name);
    writeFileSync(path, typeof body === 'string' ? body : JSON.stringify(body));
    return path;
  };
  const device = { source: 'video-ids.example', uids: [{ id: 'dev-4', atype: 4 }] };

  test("reads the video plugin's OpenRTB body from a file: user.eids, atype 4 kept", () => {
    const r = run([
      'decode',
      '--json',
      '--post-body',
      file('video.json', {
        imp: [{ id: '1', tagid: '44' }],
        site: { publisher: { id: '1234' } },
        user: { eids: [device, eids[0]] },
      }),
    ]);
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.call).toMatchObject({
      endpoint: 'openrtb',
      networkId: 1234,
      formats: [{ id: 44, tagId: '44', impId: '1' }],
    });
    expect(out.eids.map((e: { source: string; uids: unknown[] }) => [e.source, e.uids])).toEqual([
      ['video-ids.example', [{ id: 'dev-4', atype: 4 }]],
      ['id5-sync.com', eids[0].uids],
    ]);
  });

  test("reads the Prebid adapter's /prebid/v1 body from stdin", () => {
    const body = {
      networkId: 1234,
      siteId: 1,
      pageId: 2,
      units: [{ bidId: 'b1', adUnitCode: 'top', formatId: 3 }],
      eids: [eids[1]],
    };
    const r = run(['decode', '--post-body', '-'], JSON.stringify(body));
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('endpoint: prebid');
    expect(r.stdout).toMatch(/uidapi\.com\s+4\s+Unified ID 2\.0/);
  });

  test('an OpenRTB 2.6 body with both user.eids and user.ext.eids: user.eids wins, it decodes, exit 0', () => {
    const body = { imp: [{ id: '1' }], user: { eids: [eids[0], eids[1]], ext: { eids: [eids[2]] } } };
    const r = run(['decode', '--json', '--post-body', file('both.json', body)]);
    expect(r.status).toBe(0);
    expect(r.stderr).toBe('');
    const out = JSON.parse(r.stdout);
    expect(out.decoded).toBe(true);
    expect(out.eids.map((e: { source: string }) => e.source)).toEqual(['id5-sync.com', 'uidapi.com']);
    expect(out.issues).toEqual([{ path: 'user.ext.eids', message: 'ignored: user.eids is present and wins' }]);
    const text = run(['decode', '--post-body', file('both.json', body)]);
    expect([text.status, text.stderr]).toEqual([0, '']);
  });

  test('reads OpenRTB 2.5 user.ext.eids, and exits 3 for a body without eids or one that is not JSON', () => {
    expect(run(['decode', '--post-body', file('25.json', { user: { ext: { eids: [eids[0]] } } })]).status).toBe(0);
    const none = run(['decode', '--post-body', file('none.json', { imp: [{ id: '1' }] })]);
    expect(none.status).toBe(3);
    expect(none.stderr).toContain('the body has no eids field');
    expect(run(['decode', '--post-body', file('bad.json', 'eids=abc')]).status).toBe(3);
  });

  test('a --post-body file that cannot be read exits 3, named in words, not as ENOENT', () => {
    const r = run(['decode', '--post-body', join(dir, 'nope.json')]);
    expect(r.status).toBe(3);
    expect(r.stderr).toMatch(/cannot read .*nope\.json: no such file/);
    expect(r.stderr).not.toMatch(/ENOENT/);
  });
});
