// The public surface of `eidkit/operator` (operator tag delivery), pinned: a name added to or dropped
// from the entry point must be added to or dropped from these lists on purpose.
import { describe, test } from 'vitest';
import { expectExports } from '../support/exports.js';

const VALUES = [
  'DEFAULT_NETWORK',
  'MODULES',
  'NETWORK_ID',
  'NetworksConfigError',
  'TAG_CACHE_CONTROL',
  'TAG_FILES',
  'VERSIONED_CACHE_CONTROL',
  'buildTags',
  'composeModules',
  'composeTag',
  'createTagApp',
  'defaultDistDir',
  'enabledModules',
  'encodeScript',
  'loadNetworksConfig',
  'loadTagFiles',
  'negotiateEncoding',
  'networkExperiments',
  'parseNetworksConfig',
  'versionedFileName',
];

const TYPES = [
  'BuildOptions',
  'BuildResult',
  'ComposeOptions',
  'ConfigIssue',
  'EncodedScript',
  'Manifest',
  'ManifestEntry',
  'ModuleName',
  'NetworksConfig',
  'TagAppOptions',
  'TagFiles',
];

describe('the exports of eidkit/operator', () => {
  test('exactly the pinned values at run time, and the pinned values and types in the types', async () => {
    await expectExports(new URL('../../src/operator/index.ts', import.meta.url), VALUES, TYPES);
  });
});
