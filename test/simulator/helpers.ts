import {
  createDealApiSimulator,
  DEMO_USERS,
  passwordRealmForm,
  type DealApiSimulator,
  type DealApiSimulatorOptions,
  type SimulatorUser,
} from '../../src/simulator/index.js';
import { validDeal } from '../deals/fixtures.js';

export const COMPANY = DEMO_USERS[0];
export const OTHER_COMPANY = DEMO_USERS[1];
export const DSP = DEMO_USERS[2];

/** A fetch bound to a base: the in-process handler or a real HTTP origin. */
export type Fetcher = (path: string, init?: RequestInit) => Promise<Response>;

export function inProcess(sim: DealApiSimulator): Fetcher {
  return (path, init) => sim.fetch(path, init);
}

export function overHttp(url: string): Fetcher {
  return (path, init) => fetch(url + path, init);
}

/** A clock tests can move. */
export function clock(start = Date.parse('2030-06-15T12:00:00Z')) {
  let t = start;
  return { now: () => t, advance: (ms: number) => (t += ms), set: (ms: number) => (t = ms) };
}

export function sim(options: DealApiSimulatorOptions = {}): DealApiSimulator {
  return createDealApiSimulator(options);
}

/** Runs the two-step login and returns the user token. */
export async function login(f: Fetcher, user: SimulatorUser = COMPANY, audience?: string): Promise<string> {
  const res = await f('/oauth/token', { method: 'POST', body: passwordRealmForm(user, audience) });
  if (res.status !== 200) throw new Error(`token request failed: ${res.status} ${await res.text()}`);
  const { access_token } = (await res.json()) as { access_token: string };
  const auth = await f('/authorize', { headers: { authorization: `Bearer ${access_token}` } });
  if (auth.status !== 200) throw new Error(`authorize failed: ${auth.status}`);
  return auth.text();
}

/** A JSON request with a user token. */
export function api(f: Fetcher, token: string) {
  return (
    path: string,
    init: { method?: string; body?: unknown; raw?: string; headers?: Record<string, string> } = {},
  ) =>
    f(path, {
      method: init.method ?? 'GET',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...init.headers },
      body: init.raw ?? (init.body === undefined ? undefined : JSON.stringify(init.body)),
    });
}

/** A valid deal body. */
export const dealBody = validDeal;
