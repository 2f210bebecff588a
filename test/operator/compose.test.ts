import { describe, expect, test } from 'vitest';
import { readFileSync } from 'node:fs';
import { composeTag, MODULES, parseNetworksConfig } from '../../src/operator/index.js';

const dist = new URL('../../dist/', import.meta.url);
const read = (f: string) => readFileSync(new URL(f, dist), 'utf8');
const config = parseNetworksConfig({
  networks: { '1': { modules: [] }, '2': { modules: [...MODULES] }, '3': { modules: ['uid2', 'prebid'] } },
});

describe('composeTag', () => {
  test('serves the built core byte for byte to a network with no module and to an unknown network', () => {
    expect(composeTag(1, config)).toBe(read('sas.js'));
    expect(composeTag('999', config)).toBe(read('sas.js'));
    expect(composeTag(1, config, { debug: true })).toBe(read('sas.debug.js'));
  });

  test('serves the operator switches and the full build when every module is on', () => {
    expect(composeTag(2, config)).toBe(
      `window.__sasop=${JSON.stringify({ modules: MODULES })};\n` + read('sas.full.js'),
    );
  });

  test('serves the switches, the core and the enabled add-ons in order otherwise', () => {
    expect(composeTag(3, config)).toBe(
      [
        'window.__sasop={"modules":["uid2","prebid"]};',
        read('sas.js'),
        read('modules/uid2.js'),
        read('modules/prebid.js'),
      ].join('\n'),
    );
  });

  test('leaves a globally disabled module out of every network', () => {
    const off = parseNetworksConfig({
      disabledModules: ['prebid'],
      networks: { '3': { modules: ['uid2', 'prebid'] } },
    });
    expect(composeTag(3, off)).toContain('window.__sasop={"modules":["uid2"]};');
    expect(composeTag(3, off)).not.toContain(read('modules/prebid.js'));
  });
});
