// A fake window for unit tests of the tag: records every fetch and every console line.
import { installTag, type SasApi, type TagWindow } from '../../src/tag/tag.js';
import type { TagExtension } from '../../src/tag/extension.js';

/** One request the fake window's fetch received. */
export interface SentRequest {
  url: string;
  method: string;
  body?: string;
  credentials?: string;
  referrerPolicy?: string;
}

/** A window with a recording `fetch` and `console`; `fetchImpl` overrides the default 200 "ok" answer. */
export function fakeWindow(
  opts: { search?: string; href?: string; fetchImpl?: (url: string) => Promise<Response> } = {},
) {
  const sent: SentRequest[] = [];
  const lines: { level: string; text: string }[] = [];
  const record =
    (level: string) =>
    (...args: unknown[]) =>
      lines.push({
        level,
        text: args.map((a) => (typeof a === 'string' ? a : a instanceof Error ? String(a) : safeJson(a))).join(' '),
      });
  const win: TagWindow & { sas: { cmd: unknown[] } & Partial<SasApi> } = {
    sas: { cmd: [] },
    console: { log: record('log'), warn: record('warn') } as unknown as Console,
    // A Location's string form is its URL, which the tag reads for its Referer rule.
    location: { search: opts.search ?? '', toString: () => opts.href ?? 'https://news.example/' },
    fetch: (async (url: string, init: RequestInit = {}) => {
      sent.push({
        url,
        method: init.method ?? 'GET',
        body: init.body as string | undefined,
        credentials: init.credentials,
        referrerPolicy: init.referrerPolicy,
      });
      return opts.fetchImpl ? opts.fetchImpl(url) : new Response('ok', { status: 200 });
    }) as typeof fetch,
  };
  return { win, sent, lines, warnings: () => lines.filter((l) => l.level === 'warn').map((l) => l.text) };
}

function safeJson(v: unknown): string {
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}

/** Installs the tag on a fake window, runs `setup`, and waits for the command queue to drain. */
export async function loadedTag(
  opts: Parameters<typeof fakeWindow>[0] & { extensions?: TagExtension[]; src?: string } = {},
) {
  const fake = fakeWindow(opts);
  const sas = installTag(fake.win, opts.src ?? 'https://cdn.example/tag/1234/sas.js', opts.extensions ?? [])!;
  await flush();
  sas.setup({ domain: 'https://ads.example', debug: true });
  return { ...fake, sas };
}

/** Lets pending microtasks (the queue drain, promise callbacks) run. */
/**
 * Lets the tag's tasks run: the queued commands run in a task of their own (a message the tag posts to itself), then
 * their promise callbacks and timers of 0 ms. Three rounds of a message and a timer, so that no ordering between
 * message ports and timers is relied on.
 */
export const flush = async (): Promise<void> => {
  for (let i = 0; i < 3; i++)
    await new Promise((r) => {
      const m = new MessageChannel();
      m.port1.onmessage = () => {
        m.port1.close();
        setTimeout(r, 0);
      };
      m.port2.postMessage(0);
    });
};

/** Decodes the `eids` query parameter of a GET URL. */
export function eidsParam(url: string): unknown {
  const v = new URL(url).searchParams.get('eids');
  return v === null ? undefined : JSON.parse(Buffer.from(v, 'base64url').toString('utf8'));
}

/** Sample eids: two known providers and one unknown source. */
export const SAMPLE = [
  { source: 'id5-sync.com', uids: [{ id: 'ID5*abc', atype: 1, ext: { linkType: 2, abTestingControlGroup: false } }] },
  { source: 'liveramp.com', uids: [{ id: 'XY1000bIVBVah9ium-sZ3ykhPiXQbEcUpn4GjCtxrrw2BRDGM', atype: 3 }] },
  { source: 'example.org', uids: [{ id: 'u-1' }] },
];
