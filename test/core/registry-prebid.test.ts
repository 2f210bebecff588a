// The registry against the ids Prebid.js's user-id modules send: prebid-sources.mjs reads every module's eids
// configuration from the installed `prebid.js` package now, and each row of the checked-in evidence table
// (prebid-sources.json) must still be sent and must resolve to the provider the table names.
import { beforeAll, describe, expect, test } from 'vitest';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { providerForSource } from '../../src/core/index.js';

interface Row {
  module: string;
  key: string;
  source: string | null;
  how: string;
  provider?: number;
  name?: string;
}
interface Sources {
  rows: Row[];
  withoutEids: string[];
}

const script = fileURLToPath(new URL('prebid-sources.mjs', import.meta.url));
const table = JSON.parse(readFileSync(new URL('prebid-sources.json', import.meta.url), 'utf8')) as Sources & {
  prebid: string;
};
const docs = readFileSync(new URL('../../docs/providers.md', import.meta.url), 'utf8');
const { version } = JSON.parse(
  readFileSync(new URL('../../node_modules/prebid.js/package.json', import.meta.url), 'utf8'),
);
const regenerate = 'regenerate it: npm run build && node test/core/prebid-sources.mjs --write, then review the diff';
const sent = ({ module, key, source, how }: Row) => ({ module, key, source, how });

let live: Sources;
beforeAll(() => {
  live = JSON.parse(execFileSync(process.execPath, [script], { encoding: 'utf8' })) as Sources;
}, 60_000);

describe('the evidence table', () => {
  test('is for the installed prebid.js and lists exactly the sources its user-id modules send', () => {
    expect(table.prebid, `the table is for another prebid.js: ${regenerate}`).toBe(version);
    expect(table.rows.map(sent), regenerate).toEqual(live.rows);
    expect(table.withoutEids, regenerate).toEqual(live.withoutEids);
  });

  test('covers the modules the registry cares about, each through its own eids configuration', () => {
    const modules = new Set(table.rows.map((r) => r.module));
    for (const m of [
      'operaadsIdSystem',
      'hadronIdSystem',
      'merkleIdSystem',
      'pubmaticIdSystem',
      'liveIntentIdSystem',
    ]) {
      expect(modules).toContain(m);
    }
  });
});

const mapped = table.rows.filter(
  (r): r is Row & { source: string; provider: number; name: string } => r.source !== null,
);

for (const row of mapped)
  describe(`${row.module} sends ${row.source} (${row.key})`, () => {
    test(`the registry resolves it to ${row.provider ? `${row.name} (${row.provider})` : 'Unknown (0)'}`, () => {
      expect(live.rows).toContainEqual(sent(row));
      expect(providerForSource(row.source)).toMatchObject({ id: row.provider, name: row.name });
    });

    if (row.provider) {
      test('docs/providers.md names the source and the module file on a row of that provider', () => {
        const evidence = (l: string) =>
          l.startsWith(`| ${row.provider} |`) && l.includes(`\`${row.source}\``) && l.includes(`\`${row.module}.js\``);
        expect(docs.split('\n').some(evidence)).toBe(true);
      });
    }
  });
