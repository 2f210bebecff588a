/**
 * What the simulator's routes are built from: the app context (store, auth, reference data, clock, limits) and
 * the hono environment that carries the authenticated user from the token check to the handlers.
 */
import type { AuthService } from '../auth.js';
import type { ReferenceData } from '../reference.js';
import type { SimulatorStore } from '../store.js';
import type { SimulatorUser } from '../users.js';

/** Everything the routes need. */
export interface AppContext {
  store: SimulatorStore;
  auth: AuthService;
  reference: ReferenceData;
  now: () => number;
  audience: string;
  quotas: { creationsPerDay: number; updatesPerDay: number };
  maxBodyBytes: number;
  /** The OpenAPI document's JSON text, with `origin` (the request's) as its server. */
  openapi: (origin: string) => string;
}

/**
 * The hono environment of the API: the caller's socket address (absent in-process), and the user the user token
 * names, set before any deal or lookup handler runs.
 */
export interface ApiEnv {
  Bindings: { remoteAddress?: string };
  Variables: { user: SimulatorUser };
}
