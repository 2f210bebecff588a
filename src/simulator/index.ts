/**
 * `eidkit/simulator`: a local deal management API that keeps to docs/deal-rules.md, in
 * process (a fetch-compatible handler) or over HTTP on loopback. The same rules as the client (`eidkit/deals`).
 * @example
 * const sim = createDealApiSimulator();
 * const res = await sim.fetch('/oauth/token', { method: 'POST', body: new URLSearchParams({ ... }) });
 * const { url, close } = await sim.listen({ port: 0 });
 * @packageDocumentation
 */
import type { AddressInfo } from 'node:net';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { serve } from '@hono/node-server';
import { validateDeal } from '../deals/rules/index.js';
import { createApp } from './app.js';
import { makeDealId, toRead } from './deal-view.js';
import { AUTH_ATTEMPT_LIMIT, DEFAULT_QUOTAS, DEFAULT_REALM, PASSWORD_REALM_GRANT } from '../deals/rules/index.js';
import { AuthService, DEFAULT_AUDIENCE } from './auth.js';
import { openApiText } from './openapi-text.js';
import type { SimulatorExchange } from './record.js';
import { createPipeline, DroppedConnection, fetchFailed, type FaultOptions, type RequestLogEntry } from './pipeline.js';
import { createReferenceData, type ReferenceData } from './reference.js';
import { generateDeals } from './seed.js';
import { SimulatorStore } from './store.js';
import { DEMO_USERS, parseUsers, type SimulatorUser } from './users.js';
import type { DealRead } from '../deals/rules/index.js';

/** Demo deals a simulator started from the CLI begins with (`simulate` and `--simulator`), so lists show something. */
export const DEMO_SEED_DEALS = 25;
export { DEMO_USERS, loadUsersFile, parseUsers, SimulatorUserSchema, type SimulatorUser } from './users.js';
export { DEFAULT_AUDIENCE } from './auth.js';
export type { ReferenceData } from './reference.js';
export type { SimulatorExchange } from './record.js';

export type { FaultKind, FaultOptions, RequestLogEntry } from './pipeline.js';

/** Options of createDealApiSimulator. Every one is optional. */
export interface DealApiSimulatorOptions {
  /** Clock in ms since the epoch, for quotas, token expiry and flight phases; default `Date.now`. */
  now?: () => number;
  /** Accepted users; default DEMO_USERS. */
  users?: SimulatorUser[];
  /** Audience the token request must name; default DEFAULT_AUDIENCE. */
  audience?: string;
  /** Data file: loaded at start, rewritten atomically on every change. Default: memory only. */
  dataFile?: string;
  /** Added latency per request, in ms (for benchmarks). */
  latencyMs?: number;
  /** Random failures. */
  faults?: FaultOptions;
  /** Daily quotas per company; default 15 creations and 500 updates. */
  quotas?: { creationsPerDay?: number; updatesPerDay?: number };
  /**
   * Auth attempt limit: token requests per window per client id and user, successful ones included, as the service
   * counts them, and failed ones per source address (default 10 per 5 minutes); how many source addresses are
   * remembered (default 10,000), and how many live tokens are kept (default 10,000; the oldest go first).
   */
  authLimit?: { attempts?: number; windowMs?: number; maxTrackedAddresses?: number; maxTokens?: number };
  /** Token lifetime in seconds; default 36000 (10 hours). Client-credentials tokens live 600 s. */
  tokenTtlSeconds?: number;
  /** Largest accepted request body in bytes; default 1 MiB (larger: 413). */
  maxBodyBytes?: number;
  /** Deals to generate at start (skipped when the data file already holds deals), for company 1 unless `companyId`. */
  seed?: { deals: number; companyId?: number; seed?: number };
  /** Called after every request. */
  onRequest?: (entry: RequestLogEntry) => void;
  /**
   * Called with each answered request and its response, headers and bodies included, credentials scrubbed (for
   * contract checks against the OpenAPI document). Also set by the `EIDKIT_SIMULATOR_RECORD=<file>` environment
   * variable, which appends every exchange of every simulator in the process to that file as JSON lines.
   */
  onExchange?: (exchange: SimulatorExchange) => void;
}

/** A running HTTP listener. */
export interface SimulatorListener {
  /** Base URL, e.g. `http://127.0.0.1:43117` (the auth URL is the same origin). */
  url: string;
  /** Stops listening and closes open connections. */
  close: () => Promise<void>;
}

/** The simulator. */
export interface DealApiSimulator {
  /** Fetch-compatible in-process handler; relative URLs are resolved against `http://simulator.local`. */
  fetch: (input: string | URL | Request, init?: RequestInit) => Promise<Response>;
  /** Serves over HTTP; default host 127.0.0.1, port 0 (any free port). */
  listen(options?: { port?: number; host?: string }): Promise<SimulatorListener>;
  /** Closes every listener opened with `listen`. */
  close(): Promise<void>;
  /** Generates `count` valid deals for a company (default 1), bypassing quotas; returns them in read shape. */
  seedDeals(count: number, options?: { companyId?: number; seed?: number }): DealRead[];
  /** A snapshot of a company's deals in read shape, by id (tests compare before and after). */
  deals(companyId?: number): DealRead[];
  /** The last 10,000 requests (method, path, status), oldest first. */
  readonly requests: RequestLogEntry[];
  /** The accepted users. */
  readonly users: readonly SimulatorUser[];
  /** The audience token requests must name. */
  readonly audience: string;
  /** The seeded lookup data. */
  readonly reference: ReferenceData;
}

/** Base of relative URLs given to the in-process `fetch`. */
export const IN_PROCESS_ORIGIN = 'http://simulator.local';
/**
 * Creates a deal API simulator: auth, lookups and deals with the API's rules, quotas, pagination and persistence.
 * @example
 * const sim = createDealApiSimulator({ seed: { deals: 250 } });
 * const { url, close } = await sim.listen();
 */
export function createDealApiSimulator(options: DealApiSimulatorOptions = {}): DealApiSimulator {
  const now = options.now ?? Date.now;
  const users = parseUsers(options.users ?? [...DEMO_USERS]);
  const audience = options.audience ?? DEFAULT_AUDIENCE;
  const reference = createReferenceData();
  const store = new SimulatorStore(options.dataFile);
  const auth = new AuthService(users, now, {
    attempts: options.authLimit?.attempts ?? AUTH_ATTEMPT_LIMIT.attempts,
    windowMs: options.authLimit?.windowMs ?? AUTH_ATTEMPT_LIMIT.windowMs,
    maxTrackedAddresses: options.authLimit?.maxTrackedAddresses ?? 10_000,
    maxTokens: options.authLimit?.maxTokens ?? 10_000,
    tokenTtlSeconds: options.tokenTtlSeconds ?? 36_000,
    clientCredentialsTtlSeconds: 600,
  });
  const app = createApp({
    store,
    auth,
    reference,
    now,
    audience,
    quotas: {
      creationsPerDay: options.quotas?.creationsPerDay ?? DEFAULT_QUOTAS.creationsPerDay,
      updatesPerDay: options.quotas?.updatesPerDay ?? DEFAULT_QUOTAS.updatesPerDay,
    },
    maxBodyBytes: options.maxBodyBytes ?? 1_048_576,
    openapi: openApiText(audience),
  });

  const { handle, requests } = createPipeline(app, options, now, users);
  const listeners = new Set<SimulatorListener>();

  const seedDeals = (count: number, opts: { companyId?: number; seed?: number } = {}) =>
    seedStore(store, reference, now, count, opts);

  if (options.seed && options.seed.deals > 0) {
    const companyId = options.seed.companyId ?? 1;
    const has = [...store.deals.values()].some((d) => d.companyId === companyId);
    if (!has) seedDeals(options.seed.deals, { companyId, seed: options.seed.seed });
  }

  return {
    async fetch(input, init) {
      const request =
        input instanceof Request && init === undefined
          ? input
          : new Request(typeof input === 'string' && input.startsWith('/') ? IN_PROCESS_ORIGIN + input : input, init);
      try {
        return await handle(request);
      } catch (err) {
        if (err instanceof DroppedConnection) throw fetchFailed();
        throw err;
      }
    },

    listen: (opts = {}) => listenOn(handle, listeners, opts),

    async close() {
      await Promise.all([...listeners].map((l) => l.close()));
    },

    seedDeals,

    deals(companyId = 1) {
      return [...store.deals.values()].filter((d) => d.companyId === companyId).map((d) => toRead(d, reference, now()));
    },

    requests,
    users,
    audience,
    reference,
  };
}

/** Adds `count` generated deals of a company to the store, past the quotas; returns them in read shape. */
function seedStore(
  store: SimulatorStore,
  reference: ReferenceData,
  now: () => number,
  count: number,
  opts: { companyId?: number; seed?: number },
): DealRead[] {
  const companyId = opts.companyId ?? 1;
  const bodies = generateDeals(count, reference, now(), opts.seed ?? store.nextId);
  const added: number[] = [];
  store.commit(
    () => {
      for (const body of bodies) {
        // Seeded deals obey the same rules as created ones.
        const r = validateDeal(body, { mode: 'create', now: now() });
        if (!r.ok) throw new Error(`generated deal is invalid: ${r.issues[0].path}: ${r.issues[0].message}`);
        const id = store.nextId++;
        // An hour apart, all before today (UTC): seeded deals bypass the quotas, so they must not look like
        // today's creations to a client estimating what is left of the daily quota.
        const stamp = new Date(
          Math.floor(now() / 86_400_000) * 86_400_000 - (count - added.length) * 3_600_000,
        ).toISOString();
        store.deals.set(id, {
          companyId,
          id,
          dealId: makeDealId(companyId, id),
          createdAt: stamp,
          updatedAt: stamp,
          historyId: store.nextHistoryId++,
          write: r.value!,
        });
        added.push(id);
      }
    },
    () => {
      for (const id of added) store.deals.delete(id);
      store.nextId -= added.length;
      store.nextHistoryId -= added.length;
    },
  );
  return added.map((id) => toRead(store.deals.get(id)!, reference, now()));
}

/** Serves `handle` over HTTP (a dropped-connection fault destroys the socket); the listener joins `listeners`. */
function listenOn(
  handle: (request: Request, remoteAddress?: string) => Promise<Response>,
  listeners: Set<SimulatorListener>,
  { port = 0, host = '127.0.0.1' }: { port?: number; host?: string },
): Promise<SimulatorListener> {
  return new Promise<SimulatorListener>((resolve, reject) => {
    const server = serve(
      {
        fetch: async (request, env) => {
          try {
            return await handle(request, (env as { incoming: IncomingMessage }).incoming.socket.remoteAddress);
          } catch (err) {
            if (!(err instanceof DroppedConnection)) throw err;
            const { incoming, outgoing } = env as { incoming: IncomingMessage; outgoing: ServerResponse };
            incoming.socket.destroy();
            outgoing.destroy();
            return new Response(null, { status: 500 });
          }
        },
        port,
        hostname: host,
      },
      (info: AddressInfo) => {
        const hostPart = info.family === 'IPv6' ? `[${info.address}]` : info.address;
        const listener: SimulatorListener = {
          url: `http://${hostPart}:${info.port}`,
          close: () =>
            new Promise<void>((done) => {
              listeners.delete(listener);
              const s = server as Server;
              s.close(() => done());
              s.closeAllConnections?.();
            }),
        };
        listeners.add(listener);
        resolve(listener);
      },
    );
    server.once('error', reject);
  });
}

/** The form fields of a password-realm token request for a user (a convenience for tests and examples). */
export function passwordRealmForm(user: SimulatorUser, audience = DEFAULT_AUDIENCE): URLSearchParams {
  return new URLSearchParams({
    grant_type: PASSWORD_REALM_GRANT,
    realm: DEFAULT_REALM,
    audience,
    username: user.username,
    password: user.password,
    client_id: user.clientId,
    client_secret: user.clientSecret,
  });
}
