// Text from a server or an ad call never acts on the terminal: the real binary against a simulator holding deals
// with hostile names, and `decode` of eids with hostile ids. Human output shows every control escaped; --json and
// --csv keep the exact value.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { DealApiClient } from '../../src/deals/index.js';
import { createDealApiSimulator } from '../../src/simulator/index.js';
import { terminalSafe } from '../../src/core/terminal.js';
import { validDeal } from '../deals/fixtures.js';
import { DEFAULTS, manyDeals } from '../deals/plan/helpers.js';
import { eidkit, eidkitOnTerminal, home, simulatorEnv } from './helpers.js';

/** What a deal name or an eid id could carry to take over a terminal. */
const HOSTILE = {
  title: 'set \x1b]0;pwned title\x07 done',
  colour: '\x1b[31mred\x1b[0m and \x1b[2J cleared',
  hyperlink: '\x1b]8;;https://evil.test/\x1b\\click me\x1b]8;;\x1b\\',
  c1: 'csi \u009b31m one byte \u009d0;t\u009c',
  forgedLine: 'ok\nid 999 forged line\r overwritten',
  bidi: 'invoice \u202efdp.exe\u202c \u2066x\u2069 zero\u200bwidth \ufeffbom',
  del: 'rub\x7fout \x00 nul \x08 backspace',
  // Characters a terminal draws as nothing: TAG characters spelling a hidden sentence, a variation selector, the
  // soft hyphen, the combining grapheme joiner, a Hangul filler.
  invisible: `pay ${[...'ignore previous'].map((c) => String.fromCodePoint(0xe0000 + c.charCodeAt(0))).join('')}now \ufe0f\u00ad\u034f\u3164`,
};
const NAMES = Object.values(HOSTILE);

/**
 * Raw characters a terminal acts on, or that forge or hide text: any control but `\n` (C0, DEL, C1), every format
 * character (bidi, zero-width, TAG characters…), every default-ignorable code point, line and paragraph separators.
 */
const RAW_CONTROL = /(?!\n)[\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}\p{Zl}\p{Zp}\p{Cs}]/u;

const sim = createDealApiSimulator({ seed: { deals: 2 }, authLimit: { attempts: 1000 } }); // every run logs in
let env: Record<string, string> = {};
let close = async () => {};
const ids: Record<string, number> = {};

beforeAll(async () => {
  const listening = await sim.listen();
  close = listening.close;
  env = { ...simulatorEnv(sim, listening.url), EIDKIT_TOKEN_FILE: '/dev/null/none' };
  const credentials = {
    clientId: env.EIDKIT_CLIENT_ID,
    clientSecret: env.EIDKIT_CLIENT_SECRET,
    username: env.EIDKIT_USERNAME,
    password: env.EIDKIT_PASSWORD,
  };
  const { EIDKIT_BASE_URL: baseUrl, EIDKIT_AUTH_URL: authUrl, EIDKIT_AUDIENCE: audience } = env;
  const client = new DealApiClient({ baseUrl: baseUrl, authUrl, audience, credentials });
  for (const [key, name] of Object.entries(HOSTILE)) {
    ids[key] = (await client.deals.create(validDeal({ name }) as never)).id;
  }
});
afterAll(async () => {
  await close();
  rmSync(home, { recursive: true, force: true });
});

describe('terminalSafe (src/core/terminal.ts)', () => {
  test('shows C0, DEL, C1, bidi and zero-width characters escaped, and leaves other text alone', () => {
    expect(terminalSafe('a\x1b]0;t\x07b')).toBe('a\\x1b]0;t\\x07b');
    expect(terminalSafe('\u009b1m\x7f')).toBe('\\x9b1m\\x7f');
    expect(terminalSafe('\u202eabc\u2066\u200b\ufeff')).toBe('\\u202eabc\\u2066\\u200b\\ufeff');
    expect(terminalSafe('one\ntwo\r\t')).toBe('one\\x0atwo\\x0d\\x09');
    expect(terminalSafe('one\ntwo\r', { keepNewlines: true })).toBe('one\ntwo\\x0d');
    expect(terminalSafe('Prix: 2,50 € — déjà vu 日本 🙂')).toBe('Prix: 2,50 € — déjà vu 日本 🙂');
  });

  test('shows every format, control and default-ignorable character escaped: nothing hides a sentence', () => {
    expect(terminalSafe(HOSTILE.invisible)).toBe(
      'pay \\u{e0069}\\u{e0067}\\u{e006e}\\u{e006f}\\u{e0072}\\u{e0065}\\u{e0020}\\u{e0070}\\u{e0072}\\u{e0065}\\u{e0076}' +
        '\\u{e0069}\\u{e006f}\\u{e0075}\\u{e0073}now \\ufe0f\\xad\\u034f\\u3164',
    );
    let hidden = 0;
    for (let c = 0; c <= 0x10ffff; c++) {
      if (c >= 0xd800 && c <= 0xdfff) continue;
      const ch = String.fromCodePoint(c);
      if (RAW_CONTROL.test(ch)) {
        hidden++;
        expect(terminalSafe(ch), `U+${c.toString(16)}`).not.toMatch(RAW_CONTROL);
      }
    }
    expect(hidden).toBeGreaterThan(4_200); // 4,146 default-ignorable code points were left raw before
    expect(terminalSafe('\ud800 lone \udfff')).toBe('\\ud800 lone \\udfff');
  });

  test('no unsafe character survives, whatever the text', () => {
    let all = '';
    for (let c = 0; c < 0x3000; c++) all += String.fromCharCode(c);
    all += '\ufeff\ufff9\ufffa\ufffb';
    expect(terminalSafe(all)).not.toMatch(RAW_CONTROL);
    expect(terminalSafe(all, { keepNewlines: true }).split('\n')).toHaveLength(2);
  });
});

describe('eidkit prints hostile text escaped, and exact in --json / --csv', () => {
  test('deals list: one table line per deal, no raw control character, every name visible escaped', async () => {
    const r = await eidkit(['deals', 'list', '--no-cache', '--columns', 'id,name'], env);
    expect(r.code).toBe(0);
    expect(r.stdout).not.toMatch(RAW_CONTROL);
    expect(r.stderr).not.toMatch(RAW_CONTROL);
    expect(r.stdout.trimEnd().split('\n')).toHaveLength(2 + 2 + NAMES.length);
    expect(r.stdout).toContain('set \\x1b]0;pwned title\\x07 done');
    expect(r.stdout).toContain('ok\\x0aid 999 forged line\\x0d overwritten');
    expect(r.stdout).not.toMatch(/^id 999/m);
  });

  test('deals list --json and --csv keep every name byte for byte', async () => {
    const json = await eidkit(['deals', 'list', '--no-cache', '--json'], env);
    const names = (JSON.parse(json.stdout) as { name: string }[]).map((d) => d.name);
    for (const name of NAMES) expect(names).toContain(name);
    const csv = await eidkit(['deals', 'list', '--no-cache', '--csv', '--columns', 'name'], env);
    expect(csv.stdout).toContain(HOSTILE.title);
    expect(csv.stdout).toContain(`"${HOSTILE.forgedLine}"`);
  });

  test.each(Object.keys(HOSTILE))('deals get (%s): the record is terminal-safe; --json is exact', async (key) => {
    const r = await eidkit(['deals', 'get', String(ids[key]), '--no-cache'], env);
    expect(r.code).toBe(0);
    expect(r.stdout).not.toMatch(RAW_CONTROL);
    const shown = terminalSafe(HOSTILE[key as keyof typeof HOSTILE]);
    expect(
      r.stdout
        .split('\n')
        .find((l) => l.startsWith('name '))!
        .replace(/^name +/, ''),
    ).toBe(shown);
    const json = await eidkit(['deals', 'get', String(ids[key]), '--no-cache', '--json'], env);
    expect(JSON.parse(json.stdout).name).toBe(HOSTILE[key as keyof typeof HOSTILE]);
  });

  test('an error quoting a name is one terminal-safe line on stderr', async () => {
    const id = String(ids.title);
    const invalid = ['--set', `name=${HOSTILE.forgedLine}`, '--set', 'price=-1'];
    const r = await eidkit(['deals', 'update', id, '--no-cache', ...invalid], env);
    expect(r.code).toBe(3);
    expect(r.stderr).not.toMatch(RAW_CONTROL);
    const write = await eidkit(['deals', 'update', id, '--no-cache', '--set', `name=${HOSTILE.colour}`], env);
    expect(write.code).toBe(0);
    expect(write.stdout).not.toMatch(RAW_CONTROL);
    expect(write.stderr).not.toMatch(RAW_CONTROL);
  });

  test('decode: hostile eid ids, inserter and ext print escaped; --json keeps them exact', async () => {
    const eids = NAMES.map((id, i) => ({
      source: `example${i}.org`,
      inserter: HOSTILE.title,
      uids: [{ id, ext: { note: HOSTILE.c1 } }],
    }));
    const payload = Buffer.from(JSON.stringify(eids)).toString('base64url');
    const url = `https://ads.example/ac?nwid=1&uid=${encodeURIComponent(HOSTILE.hyperlink)}&eids=${payload}`;
    for (const input of [JSON.stringify(eids), url]) {
      const r = await eidkit(['decode', input]);
      expect(r.code).toBe(0);
      expect(r.stdout).not.toMatch(RAW_CONTROL);
      expect(r.stderr).not.toMatch(RAW_CONTROL);
      expect(r.stdout).toContain(`      ${terminalSafe(HOSTILE.forgedLine)}`);
      expect(r.stdout).not.toMatch(/^id 999/m);
      const json = await eidkit(['decode', '--json', input]);
      const out = JSON.parse(json.stdout) as { eids: { inserter: string; uids: { id: string }[] }[] };
      expect(out.eids.map((e) => e.uids[0].id)).toEqual(NAMES);
      expect(out.eids[0].inserter).toBe(HOSTILE.title);
    }
  });

  test('--json on a terminal writes them as \\u escapes, still JSON of the same values; piped, byte for byte', async () => {
    const id = `${HOSTILE.c1} ${HOSTILE.bidi} ${HOSTILE.invisible}`;
    const input = JSON.stringify([{ source: 'example.org', uids: [{ id }] }]);
    const tty = await eidkitOnTerminal(['decode', '--json', input]);
    expect(tty.code).toBe(0);
    expect(tty.stdout).not.toMatch(RAW_CONTROL);
    expect(tty.stdout).toContain('csi \\u009b31m');
    expect(tty.stdout).toContain('\\udb40\\udc69'); // a TAG character, as JSON writes one above U+FFFF
    expect((JSON.parse(tty.stdout) as { eids: { uids: { id: string }[] }[] }).eids[0].uids[0].id).toBe(id);
    const piped = await eidkit(['decode', '--json', input]);
    expect(piped.stdout).toContain(JSON.stringify(id));
    const list = await eidkitOnTerminal(['deals', 'list', '--no-cache', '--json'], env);
    expect(list.code).toBe(0);
    expect(list.stdout).not.toMatch(RAW_CONTROL);
    const names = (JSON.parse(list.stdout) as { name: string }[]).map((d) => d.name);
    for (const name of [HOSTILE.c1, HOSTILE.bidi, HOSTILE.invisible]) expect(names).toContain(name);
  });

  test('deals plan: names from a deals file print escaped; --json keeps them', async () => {
    const file = join(home, 'hostile-deals.yaml');
    const deals = NAMES.map((name, i) => ({ ...manyDeals(NAMES.length)[i], name }));
    writeFileSync(file, stringify({ defaults: DEFAULTS, deals }));
    const r = await eidkit(['deals', 'plan', '-f', file, '--simulator']);
    expect(r.code).toBe(0);
    expect(r.stdout).not.toMatch(RAW_CONTROL);
    expect(r.stdout).toContain(terminalSafe(JSON.stringify(HOSTILE.c1)));
    expect(r.stdout).not.toMatch(/^id 999/m);
    const json = await eidkit(['deals', 'plan', '-f', file, '--simulator', '--json']);
    expect((JSON.parse(json.stdout) as { items: { name: string }[] }).items.map((i) => i.name)).toEqual(NAMES);
  });
});
