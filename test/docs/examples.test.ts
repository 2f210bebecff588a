// The guides' whole-program examples run as written: the receiving path of docs/ad-server.md is copied out of the
// guide into a file inside the repository (so `eidkit/adserver` resolves to this package's own dist/, as it would
// from node_modules) and started; a page origin it allows reads the answer, another does not.
import { afterAll, describe, expect, test } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

const root = fileURLToPath(new URL('../..', import.meta.url));
const dir = join(root, '.test-results', 'examples');
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) c.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
});

/** The first ```js block after `heading` in a guide. */
function exampleAfter(guide: string, heading: string): string {
  const text = readFileSync(join(root, 'docs', guide), 'utf8');
  const from = text.indexOf(heading);
  const m = /```js\n([\s\S]*?)```/.exec(text.slice(from));
  if (from < 0 || !m) throw new Error(`no js example after ${heading} in ${guide}`);
  return m[1];
}

describe('docs/ad-server.md', () => {
  test('the whole receiving path runs as written: it answers allowed pages with CORS and logs providers', async () => {
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 'receiving-path.mjs');
    writeFileSync(file, exampleAfter('ad-server.md', 'The whole receiving path as one program'));
    const child = spawn(process.execPath, [file], {
      env: { ...process.env, PORT: '0', PAGE_ORIGINS: 'https://pub.example,https://*.news.example' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`not listening: ${stderr}`)), 15_000);
      child.stderr.on('data', (d) => {
        stderr += d;
        const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stderr);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]);
        }
      });
      child.once('exit', (code) => reject(new Error(`exited ${code}: ${stderr}`)));
    });
    const eids = Buffer.from(JSON.stringify([{ source: 'id5-sync.com', uids: [{ id: 'ID5*x', atype: 1 }] }])).toString(
      'base64url',
    );
    const allowed = await fetch(`${url}/ac?nwid=1234&siteid=1&pgid=2&fmtid=3&eids=${eids}`, {
      headers: { Origin: 'https://www.news.example' },
    });
    expect(allowed.status).toBe(200);
    expect(allowed.headers.get('access-control-allow-origin')).toBe('https://www.news.example');
    expect(allowed.headers.get('access-control-allow-credentials')).toBe('true');
    expect(allowed.headers.get('set-cookie')).toMatch(/^pid=/);
    expect(await allowed.json()).toEqual({ ads: [], deal: true, eids: 1 });
    const foreign = await fetch(`${url}/ac?nwid=1234`, { headers: { Origin: 'https://evil.example' } });
    expect(foreign.headers.get('access-control-allow-origin')).toBeNull();
    const preflight = await fetch(`${url}/call`, {
      method: 'OPTIONS',
      headers: { Origin: 'https://pub.example', 'Access-Control-Request-Method': 'POST' },
    });
    expect(preflight.status).toBe(204);
    // The provider log: one JSON line per call, ID5 (provider 2) on the first.
    await expect.poll(() => stdout.split('\n').filter(Boolean).length).toBeGreaterThanOrEqual(2);
    expect(JSON.parse(stdout.split('\n')[0])).toMatchObject({
      endpoint: expect.any(String),
      networkId: 1234,
      providerIds: [2],
    });
  });
});

describe('docs/ad-server.md Redis snippets', () => {
  /** Every `.on('error', handler)` handler written in the guide's code blocks, as source text. */
  function errorHandlers(): string[] {
    const text = readFileSync(join(root, 'docs', 'ad-server.md'), 'utf8');
    const code = [...text.matchAll(/```(?:ts|js)\n([\s\S]*?)```/g)].map((m) => m[1]).join('\n');
    const out: string[] = [];
    for (let at = code.indexOf(".on('error', "); at >= 0; at = code.indexOf(".on('error', ", at + 1)) {
      let depth = 0;
      let i = at + ".on('error', ".length;
      const start = i;
      for (; i < code.length; i++) {
        if (code[i] === '(') depth++;
        else if (code[i] === ')') {
          if (depth === 0) break;
          depth--;
        }
      }
      out.push(code.slice(start, i));
    }
    return out;
  }

  test("each 'error' handler runs on a Redis error without throwing (no undefined logger call)", () => {
    const handlers = errorHandlers();
    expect(handlers.length).toBeGreaterThanOrEqual(2);
    const logged: unknown[] = [];
    const quiet = {
      error: (...a: unknown[]) => logged.push(a),
      warn: (...a: unknown[]) => logged.push(a),
      log: () => undefined,
    };
    for (const source of handlers) {
      // The handler as written, with only the console swapped for a recorder.
      const handler = new Function('console', `return ${source};`)(quiet) as (e: Error) => void;
      expect(() => handler(new Error('connect ECONNREFUSED 127.0.0.1:6379')), source).not.toThrow();
    }
    expect(logged.length).toBe(handlers.length);
  });
});

describe('the guides and the npm package', () => {
  const guide = (name: string) => readFileSync(join(root, 'docs', name), 'utf8');

  test('no guide sends a package user to a source file the package does not ship for its API', () => {
    for (const name of ['ad-server.md', 'tag.md', 'operator.md', 'deals.md', 'simulator.md', 'providers.md']) {
      expect(guide(name), name).not.toMatch(/(documented|exported|described) in\s+`src\//);
    }
  });

  test('the e2e server is named as a repository file for contributors, not as something to import', () => {
    const paragraph = guide('tag.md')
      .split('\n\n')
      .find((p) => p.includes('test/e2e/support/server.ts'))!;
    expect(paragraph).toMatch(/in the repository, not in the npm package/);
  });
});
