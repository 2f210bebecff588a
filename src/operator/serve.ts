/**
 * Serving the per-network tag dynamically (`eidkit tags serve`, or mounted in an operator's own hono app):
 * `GET|HEAD /tag/<network_id>/sas.js` and `sas.debug.js`.
 *
 * - Strong ETag per representation, `If-None-Match` → 304.
 * - `Cache-Control: public, max-age=300, stale-while-revalidate=86400` ({@link TAG_CACHE_CONTROL}): the URL has no
 *   version in it (publishers paste it once), so an operator's switch change or a tag release must reach pages
 *   within minutes; past that, browsers and CDNs revalidate with the ETag (a 304 costs a few hundred bytes) and may
 *   keep using the old copy for a day while they do, so a slow origin never delays a page.
 * - Brotli or gzip by `Accept-Encoding` (precompressed once per distinct script), `Vary: Accept-Encoding`.
 * - `Access-Control-Allow-Origin: *`: the script carries no user data, and pages may load it with `crossorigin`
 *   for Subresource Integrity.
 * - A network that is not configured gets the core alone; an id with leading zeros is the network without them;
 *   any other path (traversal, overlong, other files) → 404.
 * - `sas.<version>.js` / `sas.debug.<version>.js`: the immutable copy of a script by content (the manifest's
 *   `versioned.file`), `Cache-Control: public, max-age=31536000, immutable`, for pages that pin it with Subresource
 *   Integrity; it keeps answering the same bytes after the configuration changes. An unknown version → 404.
 */
import { Hono, type Context } from 'hono';
import { enabledModules, MODULES, networkExperiments, type ModuleName, type NetworksConfig } from './config.js';
import type { Experiment } from '../core/experiments.js';
import { composeModules, loadTagFiles, type TagFiles } from './compose.js';
import { createEncoder, scriptVersion, type EncodedScript } from './encode.js';

/** The `Cache-Control` of served tags (see the file comment for why). */
export const TAG_CACHE_CONTROL = 'public, max-age=300, stale-while-revalidate=86400';

/** The `Cache-Control` of versioned (content-addressed) scripts: they never change. */
export const VERSIONED_CACHE_CONTROL = 'public, max-age=31536000, immutable';

/** Longest request path answered: `/tag/` + a 12-digit id + `/sas.debug.<16 hex>.js` fits with room to spare. */
const MAX_PATH = 64;

/** Every module list a configuration can enable, in tag order (2^5 lists: the versions a server can have served). */
function everyModuleList(): ModuleName[][] {
  return Array.from({ length: 2 ** MODULES.length }, (_, bits) => MODULES.filter((_, i) => bits & (1 << i)));
}

/** Options of {@link createTagApp}. */
export interface TagAppOptions {
  /**
   * The networks configuration, or a function that returns the current one (read on every request, so a
   * reloaded configuration takes effect at once; scripts are cached by module list, not by network).
   */
  config: NetworksConfig | (() => NetworksConfig);
  /** Built tag files (default: the package's dist/). */
  files?: TagFiles;
  /** Overrides {@link TAG_CACHE_CONTROL}. */
  cacheControl?: string;
  /**
   * Told of an unexpected error while serving (the client gets a plain 500, never a stack trace). Default: one
   * `eidkit tags:` line on stderr; give your own logger to route it elsewhere.
   */
  onError?: (err: unknown) => void;
}

/** The encoding to send for an `Accept-Encoding` header: `br`, `gzip`, or undefined for none. */
export function negotiateEncoding(header: string | undefined): 'br' | 'gzip' | undefined {
  const q: Record<string, number> = {};
  for (const part of (header ?? '').toLowerCase().split(',')) {
    const [name, ...params] = part.trim().split(';');
    const qv = params.map((p) => /^\s*q=([\d.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
    if (name) q[name] = qv === undefined ? 1 : Number(qv) || 0;
  }
  const ok = (name: string) => (q[name] ?? q['*'] ?? 0) > 0;
  return ok('br') ? 'br' : ok('gzip') ? 'gzip' : undefined;
}

/**
 * True when an `If-None-Match` header names one of `etags` (or is `*`); weak validators compare weakly
 * (RFC 9110 §13.1.2).
 */
function matches(header: string | undefined, etags: string[]): boolean {
  if (!header) return false;
  return header.split(',').some((t) => {
    const tag = t.trim().replace(/^W\//, '');
    return tag === '*' || etags.includes(tag);
  });
}

/**
 * A hono app answering `/tag/<network_id>/sas.js` and `sas.debug.js` (mount it with `app.route('/', createTagApp(...))`
 * or use its `fetch` directly).
 * @example serve({ fetch: createTagApp({ config: loadNetworksConfig('networks.json') }).fetch, port: 8090 })
 */
export function createTagApp({
  config,
  files = loadTagFiles(),
  cacheControl = TAG_CACHE_CONTROL,
  onError = (err) => {
    console.error('eidkit tags:', err);
  },
}: TagAppOptions): Hono {
  const encode = createEncoder();
  const byModules = new Map<string, EncodedScript>();
  const current = () => (typeof config === 'function' ? config() : config);
  const scriptFor = (network: string, debug: boolean) => {
    const cfg = current();
    const modules = enabledModules(cfg, network);
    const experiments = networkExperiments(cfg, network);
    // Keyed by what the script holds: the configured networks bound the experiments' part.
    const key = `${debug}:${modules.join()}:${JSON.stringify(experiments)}`;
    let e = byModules.get(key);
    if (!e) byModules.set(key, (e = encode(composeModules(modules, { files, debug, experiments }), debug)));
    return e;
  };

  // version → module list, over every list the built files allow (computed on the first versioned request:
  // 64 compositions, so the map is bounded whatever the requests ask for), then the scripts of the networks with
  // experiments in the configuration of now (indexed once per configuration: bounded by its networks).
  interface Found {
    modules: ModuleName[];
    debug: boolean;
    experiments?: Experiment[];
  }
  let versions: Map<string, Found> | undefined;
  const withExperiments = new WeakMap<NetworksConfig, Map<string, Found>>();
  const byVersion = (version: string, debug: boolean) => {
    if (!versions) {
      versions = new Map();
      for (const modules of everyModuleList()) {
        // Hashed only: compressing 64 scripts (brotli 11) to index them would stall the first versioned request.
        for (const d of [false, true]) {
          versions.set(scriptVersion(composeModules(modules, { files, debug: d })), { modules, debug: d });
        }
      }
    }
    const cfg = current();
    let more = withExperiments.get(cfg);
    if (!more) {
      withExperiments.set(cfg, (more = new Map<string, Found>()));
      for (const network of Object.keys(cfg.networks)) {
        const experiments = networkExperiments(cfg, network);
        if (!experiments) continue;
        const modules = enabledModules(cfg, network);
        for (const d of [false, true])
          more.set(scriptVersion(composeModules(modules, { files, debug: d, experiments })), {
            modules,
            debug: d,
            experiments,
          });
      }
    }
    const found = versions.get(version) ?? more.get(version);
    if (found?.debug !== debug) return undefined;
    return encode(composeModules(found.modules, { files, debug, experiments: found.experiments }), debug);
  };

  const send = (c: Context, debug: boolean, version?: string) => {
    const versioned = version !== undefined;
    const network = c.req.param('network') ?? '';
    // Checked here, not in the route pattern: hono joins the patterns of all routes into one expression, where an
    // alternation such as `\d{1,12}|default` lost its anchors and took the first 12 digits of a 13-digit id.
    if (!/^(?:\d{1,12}|default)$/.test(network)) return c.text('not found', 404);
    // `04321` is network 4321: the tag reads the id in its own path as a number, so its ad calls say 4321, and it
    // must run 4321's modules (docs/operator.md). The bytes and ETag are those of `/tag/4321/sas.js`.
    const e = versioned
      ? byVersion(version, debug)
      : scriptFor(network === 'default' ? network : String(Number(network)), debug);
    if (!e) return c.text('not found', 404);
    const enc = negotiateEncoding(c.req.header('accept-encoding'));
    const etags = [e.etag, e.etag.replace(/"$/, '-br"'), e.etag.replace(/"$/, '-gz"')];
    const etag = enc === 'br' ? etags[1] : enc === 'gzip' ? etags[2] : etags[0];
    const headers: Record<string, string> = {
      ETag: etag,
      'Cache-Control': versioned ? VERSIONED_CACHE_CONTROL : cacheControl,
      Vary: 'Accept-Encoding',
      'Access-Control-Allow-Origin': '*',
      'X-Content-Type-Options': 'nosniff',
    };
    // Any representation of the same script is still fresh: the client may have cached another encoding.
    if (matches(c.req.header('if-none-match'), etags)) return c.body(null, 304, headers);
    const body = enc === 'br' ? e.br : enc === 'gzip' ? e.gzip : e.raw;
    if (enc) headers['Content-Encoding'] = enc;
    headers['Content-Type'] = 'text/javascript; charset=utf-8';
    headers['Content-Length'] = String(body.length);
    return c.req.method === 'HEAD' ? c.body(null, 200, headers) : c.body(new Uint8Array(body), 200, headers);
  };

  const app = new Hono();
  // Only under /tag/: mounted in an operator's own app, the check must not touch its other routes.
  app.use('/tag/*', async (c, next) => {
    // Checked on the raw URL: a `..` segment or an overlong path never reaches a route.
    const path = c.req.path;
    if (path.length > MAX_PATH || /(^|\/)\.\.?(\/|$)|%2e|%2f|\\/i.test(new URL(c.req.url).pathname))
      return c.text('not found', 404);
    await next();
  });
  app.on(['GET', 'HEAD'], '/tag/:network/sas.js', (c) => send(c, false));
  app.on(['GET', 'HEAD'], '/tag/:network/sas.debug.js', (c) => send(c, true));
  const versionOf = (c: Context) => c.req.param('file')!.slice(-19, -3);
  app.on(['GET', 'HEAD'], '/tag/:network/:file{sas\\.[0-9a-f]{16}\\.js}', (c) => send(c, false, versionOf(c)));
  app.on(['GET', 'HEAD'], '/tag/:network/:file{sas\\.debug\\.[0-9a-f]{16}\\.js}', (c) => send(c, true, versionOf(c)));
  app.notFound((c) => c.text('not found', 404));
  // Never a crash, never a stack trace to the client.
  app.onError((err, c) => {
    onError(err);
    return c.text('internal error', 500);
  });
  return app;
}
