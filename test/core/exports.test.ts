// The public surface of `eidkit/core` (the isomorphic core), pinned: a name added to or dropped
// from the entry point must be added to or dropped from these lists on purpose.
import { describe, test } from 'vitest';
import { expectExports } from '../support/exports.js';

const VALUES = [
  'CACHE_KEY',
  'ConfigurationError',
  'HASH_KEY',
  'MAX_ID_LENGTH',
  'MAX_INT32',
  'MODULE_KEYS',
  'PROVIDERS',
  'UNKNOWN_PROVIDER',
  'US_SECTIONS',
  'XID_KEY',
  'decodeBase64Json',
  'decodeBase64Loose',
  'decodeBase64Text',
  'encodeBase64Url',
  'encodeEids',
  'findEmail',
  'hasEmail',
  'isInt32',
  'isKnownSource',
  'isObject',
  'isValidAtype',
  'issueOfProblem',
  'jsonSizeBound',
  'looksPersonal',
  'mergeEids',
  'normaliseEmail',
  'overlayEids',
  'providerById',
  'providerForSource',
  'providerIdForSource',
  'scrubUrl',
  'unescapeAll',
  'unescapeAny',
  'usDenial',
  'usSectionName',
  'validateEids',
];

const TYPES = [
  'Eid',
  'EidLimits',
  'Experiment',
  'ExperimentDeclaration',
  'ExperimentEntry',
  'Issue',
  'Provider',
  'Result',
  'Uid',
  'UsFields',
  'ValidateOptions',
];

describe('the exports of eidkit/core', () => {
  test('exactly the pinned values at run time, and the pinned values and types in the types', async () => {
    await expectExports(new URL('../../src/core/index.ts', import.meta.url), VALUES, TYPES);
  });
});
