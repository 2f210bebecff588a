/**
 * The `Link` header of a listing's pages (RFC 8288, formerly 5988): its relations read in one pass whatever a
 * server sends, and the origin check that keeps the token on the base URL's origin.
 */
import { DealApiError } from './errors.js';

/**
 * Parses an RFC 8288 (formerly 5988) `Link` header into its relations, resolved against `base`. One pass, no
 * backtracking regex: the header comes from the network, so its cost stays linear in its length whatever it holds.
 */
export function parseLinkHeader(header: string | null, base: URL): Record<string, URL> {
  const links: Record<string, URL> = {};
  if (!header) return links;
  const n = header.length;
  let i = 0;
  while (i < n) {
    const open = header.indexOf('<', i);
    if (open < 0) break;
    const close = header.indexOf('>', open + 1);
    if (close < 0) break; // no link can follow: every later `<` lacks its `>` too
    const target = header.slice(open + 1, close);
    const params = readLinkParams(header, close + 1);
    i = params.end;
    const rel = params.rel?.trim();
    if (!rel) continue;
    let url: URL;
    try {
      url = new URL(target, base);
    } catch {
      continue; // An unparseable link is ignored; paging falls back to offsets.
    }
    for (const r of rel.split(/\s+/)) links[r.toLowerCase()] = url;
  }
  return links;
}

const isSpace = (c: string | undefined) => c === ' ' || c === '\t';

/**
 * Reads the `; name=value` parameters after a link's `<…>` up to the comma that ends the link value (commas inside
 * a quoted value do not end it). Returns the first `rel` value and where the next link value starts.
 */
function readLinkParams(h: string, start: number): { rel?: string; end: number } {
  const n = h.length;
  let i = start;
  let rel: string | undefined;
  for (;;) {
    while (i < n && isSpace(h[i])) i++;
    if (i >= n) return { rel, end: n };
    if (h[i] === ',') return { rel, end: i + 1 };
    if (h[i] !== ';') {
      i++; // stray text between parameters is skipped
      continue;
    }
    i++;
    let nameEnd = i;
    while (nameEnd < n && !'=;,'.includes(h[nameEnd])) nameEnd++;
    const name = h.slice(i, nameEnd).trim().toLowerCase();
    i = nameEnd;
    if (h[i] !== '=') continue;
    i++;
    while (i < n && isSpace(h[i])) i++;
    let value: string;
    if (h[i] === '"') {
      const endQuote = h.indexOf('"', i + 1);
      const stop = endQuote < 0 ? n : endQuote;
      value = h.slice(i + 1, stop);
      i = stop + 1;
    } else {
      let stop = i;
      while (stop < n && h[stop] !== ';' && h[stop] !== ',') stop++;
      value = h.slice(i, stop);
      i = stop;
    }
    if (name === 'rel' && rel === undefined) rel = value;
  }
}

/** Throws unless `url` is on the same origin as `base` (a bearer token is never sent elsewhere). */
export function assertSameOrigin(url: URL, base: URL): void {
  if (url.origin !== base.origin) {
    throw new DealApiError(`refusing to follow a pagination link to another origin (${url.origin})`);
  }
}
