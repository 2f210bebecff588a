/** The served document is clean under Spectral's `spectral:oas` ruleset (its recommended rules, every severity). */
import { expect, test } from 'vitest';
import spectralCore from '@stoplight/spectral-core';
import spectralParsers from '@stoplight/spectral-parsers';
import spectralRulesets from '@stoplight/spectral-rulesets';
import { createDealApiSimulator } from '../../src/simulator/index.js';

const { Document, Spectral } = spectralCore;

test('spectral:oas finds nothing; every operation has an operationId, tags and a description', async () => {
  const sim = createDealApiSimulator();
  const text = await (await sim.fetch('/openapi.json')).text();
  const spectral = new Spectral();
  spectral.setRuleset({ extends: [spectralRulesets.oas] }); // what `extends: spectral:oas` means
  const results = await spectral.run(new Document(text, spectralParsers.Json, 'openapi.json'));
  const findings = results.map((r) => `${r.code} at ${r.path.join('.')}: ${r.message}`);
  expect(findings).toEqual([]);
  interface Op {
    operationId?: string;
    tags?: string[];
    description?: string;
  }
  const doc = JSON.parse(text) as { paths: Record<string, Record<string, Op>> };
  const ops = Object.values(doc.paths).flatMap((item) => Object.values(item));
  expect(ops.length).toBeGreaterThanOrEqual(38);
  for (const op of ops) expect([op.operationId, op.tags?.length, op.description]).not.toContain(undefined);
});
