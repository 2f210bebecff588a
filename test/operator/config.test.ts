import { describe, expect, test } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  enabledModules,
  loadNetworksConfig,
  NetworksConfigError,
  parseNetworksConfig,
} from '../../src/operator/index.js';

const issuesOf = (input: unknown) => {
  try {
    parseNetworksConfig(input);
  } catch (e) {
    expect(e).toBeInstanceOf(NetworksConfigError);
    return (e as NetworksConfigError).issues;
  }
  throw new Error('expected a NetworksConfigError');
};

describe('parseNetworksConfig', () => {
  test('accepts networks with their modules and global switches', () => {
    const c = parseNetworksConfig({
      disabledModules: ['idLinking'],
      networks: { '4321': { modules: ['prebid', 'idLinking'] }, '1234': { modules: [] } },
    });
    expect(c.networks['4321'].modules).toEqual(['prebid', 'idLinking']);
    expect(c.disabledModules).toEqual(['idLinking']);
  });

  test('names the network and the field of an unknown module', () => {
    const [issue] = issuesOf({ networks: { '4321': { modules: ['prebid', 'liveIntent'] } } });
    expect(issue).toMatchObject({ network: '4321', path: 'networks.4321.modules[1]' });
    expect(issue.message).toContain('unknown module "liveIntent"');
  });

  test('collects every issue, each naming its network, in one error message', () => {
    let err: NetworksConfigError | undefined;
    try {
      parseNetworksConfig(
        {
          networks: {
            '12': { modules: 'prebid' },
            '13': { modules: ['uid2', 'uid2'] },
            '14': { modules: [], extra: 1 },
          },
        },
        'networks.json',
      );
    } catch (e) {
      err = e as NetworksConfigError;
    }
    expect(err!.issues.map((i) => i.network)).toEqual(['12', '13', '14']);
    expect(err!.message).toMatch(
      /^networks\.json: network 12: networks\.12\.modules: .*; network 13: networks\.13\.modules: lists a module twice; network 14: networks\.14: unknown field extra$/,
    );
  });

  test('refuses a network id that is not a number the tag can read from its path', () => {
    const issues = issuesOf({ networks: { abc: { modules: [] }, '0123': { modules: [] } } });
    expect(issues.length).toBe(2);
    expect(issues[0].message).toContain('1-12 digits');
  });

  test('refuses a misspelt global switch naming the field', () => {
    const [issue] = issuesOf({ disabledModules: ['idlinking'], networks: {} });
    expect(issue.path).toBe('disabledModules[0]');
    expect(issue.network).toBeUndefined();
  });
});

describe('enabledModules', () => {
  const config = parseNetworksConfig({
    disabledModules: ['criteo'],
    networks: { '9': { modules: ['prebid', 'criteo', 'identityLink'] } },
  });

  test("lists a network's modules in tag order without the globally disabled ones", () => {
    expect(enabledModules(config, 9)).toEqual(['identityLink', 'prebid']);
  });

  test('gives none to a network that is not configured (nor to inherited object keys)', () => {
    expect(enabledModules(config, '77')).toEqual([]);
    expect(enabledModules(config, 'constructor')).toEqual([]);
  });
});

describe('loadNetworksConfig', () => {
  test('says which file is not valid JSON', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'eidkit-op-')), 'networks.json');
    writeFileSync(file, '{ "networks": ');
    expect(() => loadNetworksConfig(file)).toThrow(/networks\.json: \(file\): not valid JSON/);
  });

  test('reads the demo configuration', () => {
    const c = loadNetworksConfig(new URL('../../demo/networks.json', import.meta.url).pathname);
    expect(enabledModules(c, 4321).length).toBe(5);
  });
});
