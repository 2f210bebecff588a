/** Helpers to run the client against the real simulator, in-process (its fetch) or over HTTP on loopback. */
import {
  createDealApiSimulator,
  IN_PROCESS_ORIGIN,
  type DealApiSimulatorOptions,
} from '../../../src/simulator/index.js';
import { DealApiClient, type DealApiClientOptions } from '../../../src/deals/index.js';
import { validDeal } from '../fixtures.js';

export type Transport = 'in-process' | 'http';

/** A valid fixed-price deal targeting one buyer and one country. */
export const VALID_DEAL = validDeal({ name: 'Spring sale', minCompanyVendorCost: 0.1 });

export async function startSimulator(
  transport: Transport,
  options: DealApiSimulatorOptions = {},
  clientOptions: Partial<DealApiClientOptions> & { user?: 'company' | 'dsp' | 'other' } = {},
) {
  const sim = createDealApiSimulator(options);
  let origin = IN_PROCESS_ORIGIN;
  let fetchImpl: typeof fetch = sim.fetch;
  if (transport === 'http') {
    const listener = await sim.listen();
    origin = listener.url;
    fetchImpl = globalThis.fetch;
  }
  const wanted = clientOptions.user ?? 'company';
  const user = sim.users.find((u) => (wanted === 'other' ? u.username.startsWith('other') : u.kind === wanted))!;
  const credentials = {
    clientId: user.clientId,
    clientSecret: user.clientSecret,
    username: user.username,
    password: user.password,
  };
  const make = (extra: Partial<DealApiClientOptions> = {}) =>
    new DealApiClient({
      baseUrl: `${origin}/current/`,
      authUrl: origin,
      audience: sim.audience,
      credentials,
      fetch: fetchImpl,
      retries: { maxRetries: 3, baseDelayMs: 5, maxDelayMs: 50 },
      ...clientOptions,
      ...extra,
    });
  return { sim, client: make(), make, credentials, origin, close: () => sim.close() };
}

/** Only the requests to deal and lookup endpoints (not auth). */
export function apiRequests(sim: { requests: { path: string; method: string }[] }) {
  return sim.requests.filter((r) => !r.path.endsWith('/oauth/token') && !r.path.endsWith('/authorize'));
}
