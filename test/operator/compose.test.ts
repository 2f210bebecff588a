import { describe, expect, test } from 'vitest';
import { Window } from 'happy-dom';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { composeTag, MODULES, parseNetworksConfig } from '../../src/operator/index.js';
import { defaultDistDir, forgetStatement, keysLeftOut, loadTagFiles } from '../../src/operator/compose.js';

const dist = new URL('../../dist/', import.meta.url);
const read = (f: string) => readFileSync(new URL(f, dist), 'utf8');
const config = parseNetworksConfig({
  networks: { '1': { modules: [] }, '2': { modules: [...MODULES] }, '3': { modules: ['uid2', 'prebid'] } },
});

describe('composeTag', () => {
  test('serves the built core to a network with no module and to an unknown network, then deletes the modules’ keys', () => {
    const forget = '\n' + forgetStatement(['_sas_hem', '_sas_idl']);
    expect(composeTag(1, config)).toBe(read('sas.js') + forget);
    expect(composeTag('999', config)).toBe(read('sas.js') + forget);
    expect(composeTag(1, config, { debug: true })).toBe(read('sas.debug.js') + forget);
  });

  test('serves the operator switches and the full build when every module is on: nothing to delete', () => {
    expect(composeTag(2, config)).toBe(
      `window.__sasop=${JSON.stringify({ modules: MODULES })};\n` + read('sas.full.js'),
    );
  });

  test('serves the switches, the core and the enabled add-ons in order otherwise, then deletes the others’ keys', () => {
    expect(composeTag(3, config)).toBe(
      [
        'window.__sasop={"modules":["uid2","prebid"]};',
        read('sas.js'),
        read('modules/uid2.js'),
        read('modules/prebid.js'),
        forgetStatement(['_sas_hem', '_sas_idl']),
      ].join('\n'),
    );
    expect(keysLeftOut(['identityLink', 'criteo'])).toEqual(['_sas_idl']);
    expect(keysLeftOut(['idLinking'])).toEqual(['_sas_hem']);
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

describe('what a script deletes for the modules it leaves out', () => {
  test('run in a page, it deletes their keys from localStorage and cookies, and nothing else', () => {
    const win = new Window({ url: 'https://news.example/' });
    const { document, localStorage } = win;
    for (const k of ['_sas_hem', '_sas_idl', '_lr_env', 'other']) {
      localStorage.setItem(k, '1');
      document.cookie = `${k}=1;path=/`;
    }
    win.eval(forgetStatement(keysLeftOut(['criteo'])));
    expect(Object.keys(localStorage).sort()).toEqual(['_lr_env', 'other']);
    expect(document.cookie.split('; ').sort()).toEqual(['_lr_env=1', 'other=1']);
    win.close();
  });

  test('where storage throws (a sandboxed frame), it throws nothing into the page', () => {
    const win = new Window({ url: 'https://news.example/' });
    Object.defineProperty(win, 'localStorage', {
      get() {
        throw new Error('SecurityError');
      },
    });
    expect(() => win.eval(forgetStatement(['_sas_hem']))).not.toThrow();
    win.close();
  });
});

describe('defaultDistDir', () => {
  test('is the dist/ this module was built into, tag built or not, so a missing tag file is named where it belongs', () => {
    const root = mkdtempSync(join(tmpdir(), 'eidkit-dist-'));
    try {
      const built = join(root, 'dist', 'node', 'operator', 'compose.js');
      const dist = join(root, 'dist') + sep;
      expect(defaultDistDir(pathToFileURL(built).href)).toBe(dist);
      expect(() => loadTagFiles(defaultDistDir(pathToFileURL(built).href))).toThrow(
        `tag file ${join(dist, 'sas.js')} is missing: build the tag first (npm run build)`,
      );
      expect(defaultDistDir(pathToFileURL(join(root, 'src', 'operator', 'compose.ts')).href)).toBe(join(root, 'dist'));
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
