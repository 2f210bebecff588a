/** Helpers for the plan / apply tests: a simulator and client sharing one injectable clock, and deals files. */
import { stringify } from 'yaml';
import {
  createDealApiSimulator,
  IN_PROCESS_ORIGIN,
  type DealApiSimulatorOptions,
} from '../../../src/simulator/index.js';
import { DealApiClient, parseDealsFile, type DealApiClientOptions } from '../../../src/deals/index.js';

/** A simulator and a client (in process) on a clock the test moves. */
export function setup(options: DealApiSimulatorOptions = {}, clientOptions: Partial<DealApiClientOptions> = {}) {
  const clock = { t: Date.parse('2026-03-02T09:00:00Z') };
  const now = () => clock.t;
  const sim = createDealApiSimulator({ now, ...options });
  const user = sim.users.find((u) => u.kind === 'company')!;
  const make = (extra: Partial<DealApiClientOptions> = {}) =>
    new DealApiClient({
      baseUrl: `${IN_PROCESS_ORIGIN}/current/`,
      authUrl: IN_PROCESS_ORIGIN,
      audience: sim.audience,
      credentials: {
        clientId: user.clientId,
        clientSecret: user.clientSecret,
        username: user.username,
        password: user.password,
      },
      fetch: sim.fetch,
      now,
      retries: { maxRetries: 6, baseDelayMs: 1, maxDelayMs: 5, maxRetryAfterMs: 2_000 },
      ...clientOptions,
      ...extra,
    });
  return { sim, clock, client: make(), make, nextDay: () => (clock.t += 86_400_000) };
}

/** `n` desired deals (fixed price, one buyer, one country each), keyed deal-01, deal-02, … */
export function manyDeals(n: number): Record<string, unknown>[] {
  const countries = ['FR', 'DE', 'IT', 'ES', 'NL'];
  return Array.from({ length: n }, (_, i) => ({
    key: `deal-${String(i + 1).padStart(2, '0')}`,
    name: `Deal ${i + 1}`,
    price: Math.round((1 + i * 0.25) * 100) / 100,
    buyerIds: [101 + (i % 3)],
    countryCodes: [countries[i % countries.length]],
    ...(i % 4 === 0 ? { platformIds: [1, 3] } : {}),
  }));
}

/** Shared defaults of the test files. */
export const DEFAULTS = {
  isActive: true,
  beginDate: null,
  endDate: null,
  currency: 'EUR',
  pricingModel: 1,
  minCompanyVendorCost: 0.1,
};

/** A parsed deals file (through YAML text, as a user would write it). */
export function dealsFile(deals: Record<string, unknown>[], extra: Record<string, unknown> = {}) {
  return parseDealsFile(stringify({ defaults: DEFAULTS, ...extra, deals }), 'deals.yaml');
}
