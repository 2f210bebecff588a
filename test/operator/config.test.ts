import { describe, expect, test } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  enabledModules,
  loadNetworksConfig,
  networkExperiments,
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

  test('checks experiments, naming the network and the field of each problem', () => {
    const issues = issuesOf({
      networks: {
        '21': {
          modules: [],
          experiments: [
            { id: 'bad id', sources: ['a.example'], share: 10 },
            { id: 'b', sources: ['A.example'], share: 10 },
            { id: 'c', modules: ['prebid'], share: 10 },
            { id: 'd', sources: ['a.example'], share: 100 },
            { id: 'e', sources: ['a.example'], share: 1.234 },
            { id: 'f', share: 5 },
            { id: 'g', sources: ['a.example'], share: 5, extra: 1 },
          ],
        },
        '22': {
          modules: [],
          experiments: [
            { id: 'x', sources: ['a.example'], share: 5 },
            { id: 'x', sources: ['b.example'], share: 5 },
          ],
        },
      },
    });
    expect(issues.map((i) => [i.network, i.path])).toEqual([
      ['21', 'networks.21.experiments[0].id'],
      ['21', 'networks.21.experiments[1].sources[0]'],
      ['21', 'networks.21.experiments[2].modules[0]'],
      ['21', 'networks.21.experiments[3].share'],
      ['21', 'networks.21.experiments[4].share'],
      ['21', 'networks.21.experiments[5]'],
      ['21', 'networks.21.experiments[6]'],
      ['22', 'networks.22.experiments'],
    ]);
    expect(issues[2].message).toMatch(/module "prebid" has no fixed sources/);
    expect(issues[4].message).toBe('must have at most 2 decimals');
    expect(issues[7].message).toBe('declares an experiment id twice');
  });

  test('serves experiments with modules translated to their sources; none for a network without the key', () => {
    const c = parseNetworksConfig({
      networks: {
        '1': { modules: [], experiments: [{ id: 'u', modules: ['uid2'], sources: ['uidapi.com'], share: 12.5 }] },
        '2': { modules: [] },
      },
    });
    expect(networkExperiments(c, 1)).toEqual([{ id: 'u', sources: ['uidapi.com', 'euid.eu'], share: 12.5 }]);
    expect(networkExperiments(c, 2)).toBeUndefined();
    expect(networkExperiments(c, 'toString')).toBeUndefined();
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
