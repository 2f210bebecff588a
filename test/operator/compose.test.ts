import { describe, expect, test } from 'vitest';
import { Window } from 'happy-dom';
import { readFileSync } from 'node:fs';
import { composeTag, MODULES, parseNetworksConfig } from '../../src/operator/index.js';
import { COMPILE_HINT, forgetStatement, keysLeftOut } from '../../src/operator/compose.js';

const dist = new URL('../../dist/', import.meta.url);
const read = (f: string) => readFileSync(new URL(f, dist), 'utf8');
/** A built file without its compile hint line (a composition moves it first). */
const unhinted = (f: string) => read(f).replace(COMPILE_HINT + '\n', '');
const config = parseNetworksConfig({
  networks: { '1': { modules: [] }, '2': { modules: [...MODULES] }, '3': { modules: ['uid2', 'prebid'] } },
});

describe('composeTag', () => {
  test('serves the built core to a network with no module and to an unknown network, then deletes the modules’ keys', () => {
    const forget = '\n' + forgetStatement(['_sas_hem', '_sas_idl', '_sas_xid']);
    expect(composeTag(1, config)).toBe(read('sas.js') + forget);
    expect(composeTag('999', config)).toBe(read('sas.js') + forget);
    expect(composeTag(1, config, { debug: true })).toBe(read('sas.debug.js') + forget);
  });

  test('serves the operator switches and the full build when every module is on: nothing to delete', () => {
    expect(composeTag(2, config)).toBe(
      `${COMPILE_HINT}\nwindow.__sasop=${JSON.stringify({ modules: MODULES })};\n` + unhinted('sas.full.js'),
    );
  });

  test('serves the switches, the core and the enabled add-ons in order otherwise, then deletes the others’ keys', () => {
    expect(composeTag(3, config)).toBe(
      [
        COMPILE_HINT,
        'window.__sasop={"modules":["uid2","prebid"]};',
        unhinted('sas.js'),
        read('modules/uid2.js'),
        read('modules/prebid.js'),
        forgetStatement(['_sas_hem', '_sas_idl', '_sas_xid']),
      ].join('\n'),
    );
    expect(keysLeftOut(['identityLink', 'criteo'])).toEqual(['_sas_idl', '_sas_xid']);
    expect(keysLeftOut(['idLinking'], true)).toEqual(['_sas_hem']);
  });

  test('serves the experiments: on the switch line, with the add-on; [] serves the add-on alone', () => {
    const xp = parseNetworksConfig({
      networks: {
        '5': {
          modules: ['criteo'],
          experiments: [
            { id: 'id5-lift', modules: ['idLinking'], share: 10, note: 'ticket 12' },
            { id: 'crit', sources: ['criteo.com', 'uidapi.com'], share: 2.5 },
          ],
        },
        '6': { modules: [], experiments: [] },
        '7': { modules: [...MODULES], experiments: [{ id: 'x', sources: ['a.example'], share: 50 }] },
      },
    });
    const declared = [
      { id: 'id5-lift', sources: ['id5-sync.com'], share: 10 },
      { id: 'crit', sources: ['criteo.com', 'uidapi.com'], share: 2.5 },
    ];
    expect(composeTag(5, xp)).toBe(
      [
        COMPILE_HINT,
        `window.__sasop=${JSON.stringify({ modules: ['criteo'], experiments: declared })};`,
        unhinted('sas.js'),
        read('modules/criteo.js'),
        read('modules/experiments.js'),
        forgetStatement(['_sas_hem', '_sas_idl']),
      ].join('\n'),
    );
    expect(composeTag(6, xp)).toBe(
      [
        COMPILE_HINT,
        'window.__sasop={"modules":[]};',
        unhinted('sas.js'),
        read('modules/experiments.js'),
        forgetStatement(['_sas_hem', '_sas_idl']),
      ].join('\n'),
    );
    expect(composeTag(7, xp)).toBe(
      `${COMPILE_HINT}\nwindow.__sasop=${JSON.stringify({ modules: MODULES, experiments: [{ id: 'x', sources: ['a.example'], share: 50 }] })};\n` +
        unhinted('sas.full.js'),
    );
    // The debug script serves the readable add-on.
    expect(composeTag(5, xp, { debug: true })).toContain(read('modules/experiments.debug.js'));
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

describe("V8's compile hint in a served script", () => {
  // V8 compiles eagerly only the functions after the hint, and reads the hint only before the script's first
  // statement: anything ahead of it but comments (the operator's switch line) turns it off for the whole script.
  test("comes before the operator's switch line and every other statement, once, in every composition", () => {
    const networks = parseNetworksConfig({
      networks: {
        '1': { modules: [] },
        '2': { modules: [...MODULES] },
        '3': { modules: ['uid2', 'prebid'] },
        '4': { modules: ['identityLink'] },
      },
    });
    for (const id of [1, 2, 3, 4, 999])
      for (const debug of [false, true]) {
        const script = composeTag(id, networks, { debug });
        const at = script.indexOf(COMPILE_HINT + '\n');
        expect(at, `network ${id}${debug ? ' (debug)' : ''}`).toBeGreaterThanOrEqual(0);
        // Only comments (the banner) before it.
        expect(
          script
            .slice(0, at)
            .replace(/\/\*[\s\S]*?\*\//g, '')
            .trim(),
          `network ${id}`,
        ).toBe('');
        expect(script.split(COMPILE_HINT).length, `network ${id}`).toBe(2);
        if (id !== 1 && id !== 999) expect(script.indexOf('window.__sasop=')).toBeGreaterThan(at);
      }
  });

  test('is in the built core and the full build, under the banner', () => {
    for (const f of ['sas.js', 'sas.full.js', 'sas.debug.js', 'sas.full.debug.js'])
      expect(read(f), f).toMatch(new RegExp(`^/\\*! eidkit v\\S+ \\*/\n${COMPILE_HINT}\n`));
  });
});

describe('what a script deletes for the modules it leaves out', () => {
  test('run in a page, it deletes their keys from localStorage and cookies, and nothing else', () => {
    const win = new Window({ url: 'https://news.example/' });
    const { document, localStorage } = win;
    for (const k of ['_sas_hem', '_sas_idl', '_sas_xid', '_lr_env', 'other']) {
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
