import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createDealApiSimulator } from '../../src/simulator/index.js';
import { eidkit, home as dir, simulatorEnv } from './helpers.js';

// Some tests spawn the binary a dozen times; a loaded machine needs room.
vi.setConfig({ testTimeout: 90_000 });

const DEAL = {
  name: 'CLI deal',
  isActive: true,
  beginDate: null,
  endDate: null,
  currency: 'EUR',
  pricingModel: 1,
  price: 2.5,
  minCompanyVendorCost: 0.1,
  buyerIds: [101],
  countryCodes: ['FR'],
};

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('eidkit deals --simulator (no credentials needed)', () => {
  test('list prints a table of the demo deals; --json and --csv print every deal', async () => {
    const table = await eidkit(['deals', 'list', '--simulator']);
    expect(table.code).toBe(0);
    expect(table.stdout.split('\n')[0]).toMatch(/^id\s+dealId\s+name\s+isActive/);
    expect(table.stdout.trim().split('\n')).toHaveLength(2 + 25);
    const json = await eidkit(['deals', 'list', '--simulator', '--json', '--limit', '7']);
    expect(JSON.parse(json.stdout)).toHaveLength(7);
    const csv = await eidkit(['deals', 'list', '--simulator', '--csv', '--columns', 'id,name,price']);
    const lines = csv.stdout.trimEnd().split('\r\n');
    expect(lines[0]).toBe('id,name,price');
    expect(lines).toHaveLength(26);
    expect(csv.stderr).toBe('');
  });

  test('--progress reports on stderr, data stays on stdout', async () => {
    const r = await eidkit(['deals', 'list', '--simulator', '--json', '--progress']);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/fetched 25 of 25 deals/);
    expect(JSON.parse(r.stdout)).toHaveLength(25);
  });

  test('get, count and lookups', async () => {
    const get = await eidkit(['deals', 'get', '100001', '--simulator', '--json']);
    expect(get.code).toBe(0);
    expect(JSON.parse(get.stdout).id).toBe(100001);
    const count = await eidkit(['deals', 'count', '--simulator', '--json']);
    expect(JSON.parse(count.stdout).total).toBe(25);
    const lookups = await eidkit(['lookups', 'dsps', '--simulator', '--search', 'amazon', '--csv']);
    expect(lookups.stdout).toBe('id,name,isArchived\r\n4,Amazon DSP,false\r\n');
  });

  test('create, update, pause, resume, domainlist and delete work with --simulator-data across commands; delete without a terminal needs --yes', async () => {
    const data = join(dir, 'sim.json');
    const env = { EIDKIT_SIMULATOR_DATA: data };
    const created = await eidkit(['deals', 'create', '--simulator', '--file', '-'], env, JSON.stringify(DEAL));
    expect(created.code).toBe(0);
    const id = created.stdout.trim();
    expect(id).toMatch(/^\d+$/);
    expect(created.stderr).toMatch(/created deal \d+/);
    const updated = await eidkit(
      ['deals', 'update', id, '--simulator', '--set', 'name=Renamed', '--set', 'price=3', '--json'],
      env,
    );
    expect(updated.code).toBe(0);
    expect(JSON.parse(updated.stdout)).toMatchObject({
      name: 'Renamed',
      price: 3,
      countryCodes: ['FR'],
      minCompanyVendorCost: 0.1,
    });
    expect(updated.stderr).toMatch(/^updated deal \d+/);
    // The same patch again changes nothing: no PUT, and no claim of one.
    const again = await eidkit(
      ['deals', 'update', id, '--simulator', '--set', 'name=Renamed', '--set', 'price=3'],
      env,
    );
    expect(again.code).toBe(0);
    expect(again.stderr).toBe(`deal ${id} already has these values; nothing changed\n`);
    expect(JSON.parse((await eidkit(['deals', 'pause', id, '--simulator', '--json'], env)).stdout).isActive).toBe(
      false,
    );
    expect(JSON.parse((await eidkit(['deals', 'resume', id, '--simulator', '--json'], env)).stdout).isActive).toBe(
      true,
    );
    expect((await eidkit(['deals', 'domainlist', 'attach', id, '2', '--simulator'], env)).code).toBe(0);
    expect(JSON.parse((await eidkit(['deals', 'get', id, '--simulator', '--json'], env)).stdout).domainListId).toBe(2);
    expect((await eidkit(['deals', 'domainlist', 'detach', id, '2', '--simulator'], env)).code).toBe(0);
    const refused = await eidkit(['deals', 'delete', id, '--simulator'], env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/needs --yes when it cannot ask .*nothing was deleted/);
    expect((await eidkit(['deals', 'get', id, '--simulator'], env)).code).toBe(0);
    const del = await eidkit(['deals', 'delete', id, '--simulator', '--yes'], env);
    expect(del.code).toBe(0);
    const gone = await eidkit(['deals', 'get', id, '--simulator'], env);
    expect(gone.code).toBe(5);
    expect(gone.stderr).toMatch(/404 Not Found/);
    expect(gone.stdout).toBe('');
  });

  test('create --copy-of copies the deal, with --data changing fields of the copy or alone as it is', async () => {
    const data = join(dir, 'copy.json');
    const env = { EIDKIT_SIMULATOR_DATA: data };
    const json = await eidkit(['deals', 'create', '--simulator', '--copy-of', '100001', '--json'], env);
    // --json prints the deal created, a copy as it is: its own id and dealId, the source's name and fields.
    const created = JSON.parse(json.stdout) as Record<string, unknown>;
    const original = JSON.parse((await eidkit(['deals', 'get', '100001', '--simulator', '--json'], env)).stdout);
    expect(created.id).not.toBe(100001);
    expect(created).toMatchObject({ name: original.name, price: original.price, countryCodes: original.countryCodes });
    expect(created.dealId).not.toBe(original.dealId);
    const renamed = await eidkit(
      ['deals', 'create', '--simulator', '--copy-of', '100001', '--data', '{"name":"Copy of spring"}'],
      env,
    );
    expect(renamed.stderr).toMatch(/^created deal \d+/);
    expect(renamed.code).toBe(0);
    const source = JSON.parse((await eidkit(['deals', 'get', '100001', '--simulator', '--json'], env)).stdout);
    const copy = JSON.parse(
      (await eidkit(['deals', 'get', renamed.stdout.trim(), '--simulator', '--json'], env)).stdout,
    );
    expect(copy).toMatchObject({
      name: 'Copy of spring',
      price: source.price,
      currency: source.currency,
      countryCodes: source.countryCodes,
    });
    const asIs = await eidkit(['deals', 'create', '--simulator', '--copy-of', '100001'], env);
    expect(asIs.code).toBe(0);
    expect(asIs.stdout.trim()).toMatch(/^\d+$/);
  });

  test('--dry-run validates and prints the request with the token masked, sending nothing', async () => {
    const r = await eidkit(['deals', 'create', '--simulator', '--dry-run', '--data', JSON.stringify(DEAL)]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^POST http:\/\/simulator\.local\/current\/deals\n/);
    expect(r.stdout).toContain('authorization: Bearer [REDACTED]');
    expect(r.stdout).toContain('"name": "CLI deal"');
    expect(r.stderr).toMatch(/was not sent/);
    const count = await eidkit(['deals', 'count', '--simulator', '--json']);
    expect(JSON.parse(count.stdout).total).toBe(25);
  });

  test('each error is printed once: a validation summary then one line per issue; a server error on one line', async () => {
    const invalid = await eidkit([
      'deals',
      'create',
      '--simulator',
      '--data',
      JSON.stringify({ ...DEAL, partnerIds: [1], price: -1 }),
    ]);
    expect(invalid.stderr.split('\n')[0]).toBe('eidkit: the deal was refused before sending (create)');
    expect(invalid.stderr.split('must be at least 0').length - 1).toBe(1);
    const missing = await eidkit(['deals', 'get', '999', '--simulator']);
    expect(missing.stderr).toBe('eidkit: GET /current/deals/999 failed with 404 Not Found: Deal 999 not found\n');
  });

  test('get --columns limits the table and CSV to those columns, in that order', async () => {
    const table = await eidkit(['deals', 'get', '100001', '--simulator', '--columns', 'price,id,name']);
    expect(
      table.stdout
        .trimEnd()
        .split('\n')
        .map((l) => l.split(/\s+/)[0]),
    ).toEqual(['price', 'id', 'name']);
    const csv = await eidkit(['deals', 'get', '100001', '--simulator', '--csv', '--columns', 'id,price']);
    expect(csv.stdout).toMatch(/^id,price\r\n100001,[\d.]+\r\n$/);
  });

  test('--columns with a name that is no field is refused, exit 2, with the closest field; nothing printed', async () => {
    for (const args of [
      ['deals', 'list', '--csv'],
      ['deals', 'get', '100001'],
      ['lookups', 'countries'],
      ['deals', 'count'],
    ]) {
      const r = await eidkit([...args, '--simulator', '--columns', 'id,nmae']);
      expect({ args, code: r.code, stdout: r.stdout }).toEqual({ args, code: 2, stdout: '' });
      expect(r.stderr).toMatch(/^eidkit: --columns: no field named "(id|nmae)"/);
    }
    const list = await eidkit(['deals', 'list', '--simulator', '--columns', 'id,nmae']);
    expect(list.stderr).toMatch(
      /^eidkit: --columns: no field named "nmae" \(did you mean name\?\); the fields are id, /,
    );
    const count = await eidkit(['deals', 'count', '--simulator', '--csv', '--columns', 'count,status']);
    expect(count.stdout).toMatch(/^count,status\r\n\d+,total\r\n/);
  });

  test('exit codes: validation 3 with field issues, usage 2, forbidden 5', async () => {
    const invalid = await eidkit([
      'deals',
      'create',
      '--simulator',
      '--data',
      JSON.stringify({ ...DEAL, partnerIds: [1], price: -1 }),
    ]);
    expect(invalid.code).toBe(3);
    expect(invalid.stderr).toMatch(/^\s+partnerIds: /m);
    expect(invalid.stderr).toMatch(/^\s+price: /m);
    const brokenJson = await eidkit(['deals', 'create', '--simulator', '--data', '{nope']);
    expect(brokenJson.code).toBe(3);
    expect((await eidkit(['deals', 'frobnicate'])).code).toBe(2);
    expect((await eidkit(['deals', 'get'])).code).toBe(2);
    const noConfig = await eidkit(['deals', 'list']);
    expect(noConfig.code).toBe(2);
    expect(noConfig.stderr).toMatch(/EIDKIT_BASE_URL/);
    const dsp = await eidkit(['lookups', 'domainLists', '--simulator', '--as', 'dsp']);
    expect(dsp.code).toBe(5);
    expect(dsp.stderr).toMatch(/403 Forbidden/);
  });
});

describe('eidkit against a simulator over HTTP with real credentials', () => {
  const sim = createDealApiSimulator({ seed: { deals: 30 } });
  let url = '';
  let close = async () => {};
  beforeAll(async () => {
    ({ url, close } = await sim.listen());
  });
  afterAll(() => close());
  const user = sim.users.find((u) => u.kind === 'company')!;
  const env = () => simulatorEnv(sim, url);

  test('login caches the user token in a file only the user can read; later commands reuse it', async () => {
    const tokenFile = join(dir, 'token-login.json');
    const login = await eidkit(['login', '--token-file', tokenFile], env());
    expect(login.code).toBe(0);
    expect(login.stderr).toMatch(/logged in/);
    expect(statSync(tokenFile).mode & 0o777).toBe(0o600);
    const tokensBefore = sim.requests.filter((r) => r.path.endsWith('/oauth/token')).length;
    const list = await eidkit(['deals', 'list', '--token-file', tokenFile, '--json'], env());
    expect(JSON.parse(list.stdout)).toHaveLength(30);
    // Without the secrets at hand, the cached token still works.
    const { EIDKIT_PASSWORD: _p, EIDKIT_CLIENT_SECRET: _s, ...noSecrets } = env();
    expect((await eidkit(['deals', 'count', '--token-file', tokenFile], noSecrets)).code).toBe(0);
    expect(sim.requests.filter((r) => r.path.endsWith('/oauth/token')).length).toBe(tokensBefore);
  });

  test('after login, commands run with only the base and auth URLs set (no username, no secrets)', async () => {
    const tokenFile = join(dir, 'token-urls-only.json');
    expect((await eidkit(['login', '--token-file', tokenFile], env())).code).toBe(0);
    const tokensBefore = sim.requests.filter((r) => r.path.endsWith('/oauth/token')).length;
    const { EIDKIT_BASE_URL, EIDKIT_AUTH_URL } = env();
    const r = await eidkit(['deals', 'count', '--token-file', tokenFile, '--json'], {
      EIDKIT_BASE_URL,
      EIDKIT_AUTH_URL,
    });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).total).toBe(30);
    expect(sim.requests.filter((r) => r.path.endsWith('/oauth/token')).length).toBe(tokensBefore);
  });

  test('a missing EIDKIT_AUDIENCE is named by the settings check (exit 2), with no token request sent', async () => {
    const { EIDKIT_AUDIENCE: _a, ...noAudience } = env();
    const tokensBefore = sim.requests.filter((r) => r.path.endsWith('/oauth/token')).length;
    const r = await eidkit(['deals', 'count', '--no-cache'], noAudience);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/EIDKIT_AUDIENCE/);
    expect(sim.requests.filter((r) => r.path.endsWith('/oauth/token')).length).toBe(tokensBefore);
  });

  test('credentials from a config file work too; a group-readable one gets a warning', async () => {
    const config = join(dir, 'config.json');
    const e = env();
    writeFileSync(
      config,
      JSON.stringify({
        baseUrl: e.EIDKIT_BASE_URL,
        authUrl: e.EIDKIT_AUTH_URL,
        audience: e.EIDKIT_AUDIENCE,
        clientId: e.EIDKIT_CLIENT_ID,
        clientSecret: e.EIDKIT_CLIENT_SECRET,
        username: e.EIDKIT_USERNAME,
        password: e.EIDKIT_PASSWORD,
      }),
      { mode: 0o644 },
    );
    const r = await eidkit(['deals', 'count', '--config', config, '--no-cache', '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).total).toBe(30);
    expect(r.stderr).toMatch(/chmod 600/);
  });

  test('wrong password exits 4; no secret or token ever reaches stdout or stderr', async () => {
    const tokenFile = join(dir, 'token-redaction.json');
    const wrong = await eidkit(['deals', 'list', '--no-cache'], { ...env(), EIDKIT_PASSWORD: 'wrong-password-123' });
    expect(wrong.code).toBe(4);
    expect(wrong.stderr).toMatch(/invalid_grant/);
    const runs = [
      wrong,
      await eidkit(['deals', 'list', '-v', '--token-file', tokenFile, '--json'], env()),
      await eidkit(
        ['deals', 'update', '100001', '--dry-run', '-v', '--token-file', tokenFile, '--set', 'name=x'],
        env(),
      ),
      await eidkit(['deals', 'get', '999', '-v', '--token-file', tokenFile], env()),
    ];
    const token = JSON.parse(readFileSync(tokenFile, 'utf8')).token as string;
    for (const r of runs) {
      for (const secret of [user.password, user.clientSecret, 'wrong-password-123', token]) {
        expect(r.stdout).not.toContain(secret);
        expect(r.stderr).not.toContain(secret);
      }
      expect(r.stderr + r.stdout).not.toMatch(/sim_(at|ut)_/);
    }
    expect(runs[1].stderr).toMatch(/GET \/current\/deals\?/); // verbose logs were there to leak, and did not
  });

  test('a network failure exits 6', async () => {
    const r = await eidkit(['deals', 'list', '--no-cache', '--timeout', '2000'], {
      ...env(),
      EIDKIT_BASE_URL: 'http://127.0.0.1:59998/current/',
      EIDKIT_AUTH_URL: 'http://127.0.0.1:59998/',
    });
    expect(r.code).toBe(6);
    expect(r.stderr).toMatch(/connection refused by 127\.0\.0\.1:59998 \(ECONNREFUSED\)/);
  });

  test('a half-made configuration names only the setting that is missing', async () => {
    const { EIDKIT_AUTH_URL: _a, ...noAuth } = env();
    const r = await eidkit(['deals', 'count', '--no-cache'], noAuth);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/set EIDKIT_AUTH_URL \(or --auth-url\)/);
    expect(r.stderr).not.toMatch(/EIDKIT_BASE_URL/);
  });

  test('--since that is not an ISO date is refused before any request (exit 2), naming what was given', async () => {
    const before = sim.requests.length;
    const r = await eidkit(['deals', 'list', '--no-cache', '--since', 'yesterday'], env());
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--since must be an ISO 8601 date or date-time .*got "yesterday"/);
    expect(sim.requests.length).toBe(before);
  });

  test('a missing file is named in words, not as ENOENT', async () => {
    const r = await eidkit(['deals', 'create', '--simulator', '--file', join(dir, 'nope.json')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/cannot read .*nope\.json: no such file/);
    const plan = await eidkit(['deals', 'plan', '--simulator', '-f', join(dir, 'nope.yaml')]);
    expect(plan.stderr).toMatch(/cannot read .*nope\.yaml: no such file/);
    expect(plan.stderr + r.stderr).not.toMatch(/ENOENT/);
  });
});
