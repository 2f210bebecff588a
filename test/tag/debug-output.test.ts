// What `?sas_debug=1` prints from the built files, as docs/tag.md ("Debug mode") describes it: the production
// sas.js logs the eids as the objects themselves, the readable sas.debug.js names each with its provider.
import { describe, expect, test } from 'vitest';
import { readFileSync } from 'node:fs';
import { runInNewContext } from 'node:vm';

const dist = new URL('../../dist/', import.meta.url);

/** Runs a built tag file in a bare window with `?sas_debug=1`, sets eids, and returns every console call. */
async function consoleOf(
  file: string,
  commands: ((sas: any) => unknown)[] = [],
  fetchImpl: (url: string) => Promise<Response> = async () => new Response('ok'),
): Promise<unknown[][]> {
  const calls: unknown[][] = [];
  const record = (...args: unknown[]) => calls.push(args);
  const window: Record<string, unknown> = {
    console: { log: record, warn: record, error: record, info: record },
    location: { search: '?sas_debug=1', href: 'https://publisher.example/?sas_debug=1' },
    document: { currentScript: { src: 'https://cdn.example/tag/1234/' + file }, cookie: '' },
    navigator: {},
    setTimeout,
    clearTimeout,
    // The tag runs the page's queued commands in a task of its own, through a message to itself.
    MessageChannel,
    btoa,
    atob,
    addEventListener: () => undefined,
    removeEventListener: () => undefined,
    postMessage: () => undefined,
    fetch: fetchImpl,
    sas: {
      cmd: [
        () =>
          (window.sas as { setEids(e: unknown): void }).setEids([
            { source: 'id5-sync.com', uids: [{ id: 'ID5*abc', atype: 1 }] },
            { source: 'example.org', uids: [{ id: 'x', atype: 1 }] },
          ]),
        ...commands.map((c) => () => c(window.sas)),
      ],
    },
  };
  window.window = window;
  window.self = window;
  runInNewContext(readFileSync(new URL(file, dist), 'utf8'), window);
  await new Promise((r) => setTimeout(r, 10));
  return calls;
}

describe('debug output of the built tag', () => {
  test('sas.debug.js names the likely causes of a call the browser refused (CORS, mixed content)', async () => {
    const refused = async () => {
      throw new TypeError('Failed to fetch');
    };
    const calls = await consoleOf(
      'sas.debug.js',
      [(sas) => sas.setup({ domain: 'https://ads.example' }), (sas) => sas.call('std', {})],
      refused,
    );
    const lines = calls.map((c) => c.map(String).join(' '));
    expect(lines).toContain('[sas] call failed: Failed to fetch');
    expect(lines.join('\n')).toMatch(/likely causes are CORS .*Access-Control-Allow-Credentials: true.*mixed content/);
  });

  test('production sas.js: "[sas] page eids" followed by the eids objects, to expand in the console', async () => {
    const calls = await consoleOf('sas.js');
    const line = calls.find((c) => c[0] === '[sas]' && c[1] === 'page eids');
    expect(line).toBeDefined();
    expect(Array.isArray(line![2])).toBe(true);
    expect((line![2] as { source: string }[]).map((e) => e.source)).toEqual(['id5-sync.com', 'example.org']);
  });

  test('sas.debug.js: each eid named with its provider id and name, as text', async () => {
    const calls = await consoleOf('sas.debug.js');
    const line = calls.find((c) => c[0] === '[sas]' && c[1] === 'page eids');
    expect(line?.[2]).toMatch(/^id5-sync\.com \(\d+ [^)]+\), example\.org \(0 Unknown\)$/);
  });

  test('sas.debug.js logs only text, as the guide shows it: no array or object to expand, no [Object]', async () => {
    const calls = await consoleOf('sas.debug.js', [
      (sas) => sas.setup({ domain: 'https://ads.example', uid: 'u-1' }),
      (sas) => sas.call('std', {}),
    ]);
    expect(calls.length).toBeGreaterThan(3);
    for (const c of calls) for (const arg of c) expect(typeof arg, JSON.stringify(c)).toBe('string');
    const setup = calls.find((c) => c[1] === 'setup');
    expect(setup).toEqual(['[sas]', 'setup', '{"networkid":1234,"domain":"https://ads.example","uid":"u-1"}']);
  });

  test('sas.debug.js says when a uid or a target holding an email is left out of the calls', async () => {
    const sent: string[] = [];
    const calls = await consoleOf(
      'sas.debug.js',
      [
        (sas) => sas.setup({ domain: 'https://ads.example', uid: 'jane@example.com' }),
        (sas) => sas.call('std', { target: 'mail=jane%40example.com' }),
      ],
      async (url: string) => {
        sent.push(url);
        return new Response('ok');
      },
    );
    const lines = calls.map((c) => c.join(' ')).join('\n');
    expect(lines).toMatch(/setup: uid holds an email address: left out of every call/);
    expect(lines).toMatch(/std: target holds an email address: left out of the call/);
    expect(sent).toHaveLength(1);
    expect(sent[0]).not.toMatch(/example\.com/);
  });
});
