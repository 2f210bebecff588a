// The guides' whole-program examples run as written (test/support/doc-example.ts): the receiving path of
// docs/ad-server.md and the Prebid.js ad server of docs/tag.md are copied out of their guides and started; a page
// origin they allow reads the answer, another does not. test/e2e/doc-examples.spec.ts calls them from real pages.
// The deal client example of docs/deals.md names domain lists the simulator has, so it runs against it.
import { afterAll, describe, expect, test } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { exampleAfter, startExample, type RunningExample } from '../support/doc-example.js';
import { startSimulator, VALID_DEAL } from '../deals/client/sim.js';
import { codeBlocksOf, readMarkdown } from './markdown.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const running: RunningExample[] = [];
afterAll(async () => {
  await Promise.all(running.map((r) => r.stop()));
});

describe('docs/ad-server.md', () => {
  test('the whole receiving path runs as written: it answers allowed pages with CORS and logs providers', async () => {
    const example = await startExample(exampleAfter('ad-server.md', 'The whole receiving path as one program'), {
      PAGE_ORIGINS: 'https://pub.example,https://*.news.example',
    });
    running.push(example);
    const { url } = example;
    const stdout = example.stdout;
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
    await expect.poll(() => stdout().split('\n').filter(Boolean).length).toBeGreaterThanOrEqual(2);
    expect(JSON.parse(stdout().split('\n')[0])).toMatchObject({
      endpoint: expect.any(String),
      networkId: 1234,
      providerIds: [2],
    });
  });
});

describe('docs/deals.md', () => {
  test('the domain lists the client example attaches and detaches exist in the simulator, so it runs there', async () => {
    const code = codeBlocksOf(readMarkdown(root, 'docs/deals.md'))
      .filter((b) => b.lang === 'ts')
      .map((b) => b.text)
      .join('\n');
    const calls = [...code.matchAll(/client\.deals\.(attach|detach)DomainList\(id, (\d+)\)/g)];
    expect(calls.map((m) => m[1])).toEqual(['attach', 'detach']);
    const { client, close } = await startSimulator('in-process');
    try {
      const { id } = await client.deals.create(VALID_DEAL);
      for (const [, op, list] of calls) {
        await (op === 'attach' ? client.deals.attachDomainList : client.deals.detachDomainList).call(
          client.deals,
          id,
          Number(list),
        );
      }
    } finally {
      await close();
    }
  });
});

describe('docs/tag.md', () => {
  test('the /prebid/v1 ad server runs as written: bids for the allowed pages, CORS on the bids and the notices', async () => {
    const example = await startExample(exampleAfter('tag.md', 'The ad server side'), {
      PAGE_ORIGINS: 'https://pub.example',
    });
    running.push(example);
    const body = {
      networkId: 1234,
      siteId: 1,
      pageId: 2,
      units: [{ bidId: 'b1', adUnitCode: 'top', formatId: 11, banner: [[728, 90]] }],
      eids: [{ source: 'id5-sync.com', uids: [{ id: 'ID5*x', atype: 1 }] }],
    };
    // As the adapter sends it: a text/plain body with the visitor's cookies.
    const answer = await fetch(`${example.url}/prebid/v1`, {
      method: 'POST',
      headers: { Origin: 'https://pub.example', 'Content-Type': 'text/plain' },
      body: JSON.stringify(body),
    });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('access-control-allow-origin')).toBe('https://pub.example');
    expect(answer.headers.get('access-control-allow-credentials')).toBe('true');
    expect(await answer.json()).toMatchObject({ bids: [{ requestId: 'b1', cpm: 2.5, dealId: 'EDK-1-016R2P2' }] });
    const timeout = await fetch(`${example.url}/prebid/v1/timeout`, {
      method: 'POST',
      headers: { Origin: 'https://pub.example', 'Content-Type': 'text/plain' },
      body: JSON.stringify({ bidId: 'b1', adUnitCode: 'top', timeout: 1000 }),
    });
    expect(timeout.status).toBe(204);
    expect(timeout.headers.get('access-control-allow-origin')).toBe('https://pub.example');
    const foreign = await fetch(`${example.url}/prebid/v1`, {
      method: 'POST',
      headers: { Origin: 'https://evil.example' },
      body: JSON.stringify(body),
    });
    expect(foreign.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('server examples in the guides', () => {
  /** Every ```js / ```ts block of the README and the guides. */
  const blocks = () =>
    [
      'README.md',
      ...readdirSync(join(root, 'docs'))
        .filter((f) => f.endsWith('.md'))
        .map((f) => `docs/${f}`),
    ].flatMap((file) =>
      [...readFileSync(join(root, file), 'utf8').matchAll(/```(?:js|ts|mjs)\n([\s\S]*?)```/g)].map((m) => ({
        file,
        code: m[1],
      })),
    );

  test('every example that answers requests from a page goes through the shipped CORS helper', () => {
    const servers = blocks().filter(({ code }) => /\bapp\.(get|post|on|all)\(|createServer\(/.test(code));
    expect(servers.length).toBeGreaterThanOrEqual(3);
    for (const { file, code } of servers) {
      expect(code, `${file}: ${code.slice(0, 200)}`).toMatch(/\b(corsMiddleware|corsForNode)\(/);
    }
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
