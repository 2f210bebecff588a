import { describe, expect, test } from 'vitest';
import { ConfigurationError } from '../../src/core/index.js';
import {
  createCorsPolicy,
  createForwardingPolicy,
  CorsPolicyError,
  DmpConfigError,
  ForwardingPolicyError,
  parseDmpConfig,
} from '../../src/adserver/index.js';
import { NetworksConfigError, parseNetworksConfig } from '../../src/operator/index.js';
import { ConfigError, DealsFileError, loadConnectionConfig, parseDealsFile } from '../../src/deals/index.js';

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error('did not throw');
}

describe('ConfigurationError', () => {
  test("every entry point's configuration error is one, keeping its own class, message and issues with paths", () => {
    const cases: [unknown, new (...args: never[]) => Error, string][] = [
      [
        thrown(() => createForwardingPolicy({ permissions: [{ partners: '*' }] } as never)),
        ForwardingPolicyError,
        'permissions[0]',
      ],
      [thrown(() => parseDmpConfig([{ dmp: '', source: 'x' }])), DmpConfigError, 'dmps[0].dmp'],
      [thrown(() => createCorsPolicy({ origins: ['not an origin'] })), CorsPolicyError, 'origins[0]'],
      [
        thrown(() => parseNetworksConfig({ networks: { '1': { modules: ['nope'] } } })),
        NetworksConfigError,
        'networks.1.modules[0]',
      ],
    ];
    for (const [err, cls, path] of cases) {
      expect(err).toBeInstanceOf(cls);
      expect(err).toBeInstanceOf(ConfigurationError);
      expect(err).toBeInstanceOf(TypeError);
      expect((err as ConfigurationError).issues.map((i) => i.path)).toContain(path);
      expect((err as Error).name).toBe(cls.name);
    }
    expect(thrown(() => parseDmpConfig([{ dmp: 'a', source: 'x' }]))).toMatchObject({
      issues: [{ path: 'dmps[0].source', message: '("x"): is not a registered provider source' }],
    });
    const config = thrown(() => loadConnectionConfig({ path: '/nonexistent/eidkit-config.json', env: {} }));
    expect(config).toBeInstanceOf(ConfigError);
    expect(config).toBeInstanceOf(ConfigurationError);
    const file = thrown(() => parseDealsFile('{', 'deals.json'));
    expect(file).toBeInstanceOf(DealsFileError);
    expect(file).toBeInstanceOf(ConfigurationError);
  });
});
