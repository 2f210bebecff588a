// The public surface of `eidkit/simulator` (the deal API simulator), pinned: a name added to or dropped
// from the entry point must be added to or dropped from these lists on purpose.
import { describe, test } from 'vitest';
import { expectExports } from '../support/exports.js';

const VALUES = [
  'DEFAULT_AUDIENCE',
  'DEMO_SEED_DEALS',
  'DEMO_USERS',
  'IN_PROCESS_ORIGIN',
  'SimulatorUserSchema',
  'createDealApiSimulator',
  'loadUsersFile',
  'parseUsers',
  'passwordRealmForm',
];

const TYPES = [
  'DealApiSimulator',
  'DealApiSimulatorOptions',
  'FaultKind',
  'FaultOptions',
  'ReferenceData',
  'RequestLogEntry',
  'SimulatorExchange',
  'SimulatorListener',
  'SimulatorUser',
];

describe('the exports of eidkit/simulator', () => {
  test('exactly the pinned values at run time, and the pinned values and types in the types', async () => {
    await expectExports(new URL('../../src/simulator/index.ts', import.meta.url), VALUES, TYPES);
  });
});
