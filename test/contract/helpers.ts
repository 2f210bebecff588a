/** Shared pieces of the contract tests: a simulator, its served document, and exchanges recorded by the test itself. */
import {
  createDealApiSimulator,
  IN_PROCESS_ORIGIN,
  type DealApiSimulator,
  type DealApiSimulatorOptions,
  type SimulatorExchange,
  type SimulatorUser,
} from '../../src/simulator/index.js';
import { COMPANY, DSP, inProcess, login as twoStepLogin } from '../simulator/helpers.js';
import { ContractValidator } from './validator.js';

export { COMPANY, DSP };

/** A request as a test sends it. */
export interface Call {
  method?: string;
  headers?: Record<string, string>;
  /** JSON-encoded unless a string. */
  body?: unknown;
}

const validators = new Map<string, ContractValidator>();

/** One validator per distinct document (compiling the schemas is the slow part). */
export function validatorFor(doc: Record<string, unknown>): ContractValidator {
  const key = JSON.stringify(doc);
  let v = validators.get(key);
  if (!v) validators.set(key, (v = new ContractValidator(doc)));
  return v;
}

/** A simulator, the document it serves, and a way to make exchanges checked against it. */
export async function contractRig(options: DealApiSimulatorOptions = {}) {
  const sim: DealApiSimulator = createDealApiSimulator({ now: () => Date.parse('2030-06-15T12:00:00Z'), ...options });
  // With injected faults, the document comes from a twin without them.
  const served = options.faults ? createDealApiSimulator({ ...options, faults: undefined }) : sim;
  const doc = (await (await served.fetch('/openapi.json')).json()) as Record<string, unknown>;
  const validator = validatorFor(doc);

  /** Sends a request and returns the exchange, read by the test (not by any hook of the simulator). */
  async function exchange(path: string, call: Call = {}): Promise<SimulatorExchange> {
    const headers: Record<string, string> = { ...call.headers };
    let body: string | undefined;
    if (typeof call.body === 'string') body = call.body;
    else if (call.body !== undefined) {
      body = JSON.stringify(call.body);
      headers['content-type'] ??= 'application/json';
    }
    const url = IN_PROCESS_ORIGIN + path;
    const res = await sim.fetch(url, { method: call.method ?? 'GET', headers, body });
    return {
      request: { method: call.method ?? 'GET', url, headers, body: body ?? '' },
      response: { status: res.status, headers: Object.fromEntries(res.headers), body: await res.text() },
    };
  }

  /** The user token of `user` (the simulator suites' two-step login). */
  const login = (user: SimulatorUser = COMPANY): Promise<string> => twoStepLogin(inProcess(sim), user);

  return { sim, doc, validator, exchange, login };
}

/** A short readable line per violation, for failure messages. */
export function explain(violations: { operation: string; message: string; exchange: string }[]): string {
  return violations.map((v) => `${v.exchange} [${v.operation}]: ${v.message}`).join('\n');
}
