/**
 * Shared pieces of the contract tests: a simulator, its served document, and exchanges recorded by the test itself,
 * sent to the simulator directly or through Stoplight Prism's validating proxy (prism.ts) over HTTP.
 */
import {
  createDealApiSimulator,
  IN_PROCESS_ORIGIN,
  type DealApiSimulator,
  type DealApiSimulatorOptions,
  type SimulatorExchange,
  type SimulatorUser,
} from '../../src/simulator/index.js';
import { COMPANY, DSP, inProcess, login as twoStepLogin, type Fetcher } from '../simulator/helpers.js';
import { PRISM_ERROR, startPrism, type PrismProxy } from './prism.js';
import { ContractValidator, type Violation } from './validator.js';

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

/** What Prism did with a request sent through it. */
export interface ProxyOutcome {
  /** Prism refused the request itself (its problem `type`, detail); the exchange is then the simulator's own answer. */
  refused?: string;
  /** Prism forwarded the request and found the simulator's response off the document. */
  responseViolation?: string;
}

/** An exchange, and what the proxy said of it when it went through Prism. */
export type CheckedExchange = SimulatorExchange & { proxy?: ProxyOutcome };

/**
 * A simulator, the document it serves, and a way to make exchanges checked against it. With `through: 'prism'` the
 * simulator listens on loopback and every exchange goes through `prism proxy --errors` over that document; call
 * `close()` at the end.
 */
export async function contractRig(options: DealApiSimulatorOptions = {}, { through }: { through?: 'prism' } = {}) {
  const sim: DealApiSimulator = createDealApiSimulator({ now: () => Date.parse('2030-06-15T12:00:00Z'), ...options });
  // With injected faults, the document comes from a twin without them.
  const served = options.faults ? createDealApiSimulator({ ...options, faults: undefined }) : sim;
  const doc = (await (await served.fetch('/openapi.json')).json()) as Record<string, unknown>;
  const validator = validatorFor(doc);
  let proxy: PrismProxy | undefined;
  if (through === 'prism') proxy = await startPrism(doc, (await sim.listen()).url);

  /** Sends one request to the simulator, through Prism when there is one; Prism's own answers are told apart. */
  async function send(url: string, init: RequestInit): Promise<{ res: Response; prismError?: string }> {
    if (!proxy) return { res: await sim.fetch(IN_PROCESS_ORIGIN + url, init) };
    const res = await fetch(proxy.url + url, init);
    // A violation Prism only warns about comes as this header on the forwarded answer: a disagreement all the same.
    const warned = res.headers.get('sl-violations');
    if (!(res.headers.get('content-type') ?? '').includes('problem+json')) {
      return warned ? { res, prismError: `VIOLATIONS (warnings): ${warned}` } : { res };
    }
    const text = await res.clone().text();
    let problem: { type?: string; detail?: string; validation?: unknown } = {};
    try {
      problem = JSON.parse(text) as typeof problem;
    } catch {
      /* not Prism's */
    }
    if (!problem.type?.startsWith(PRISM_ERROR)) return { res };
    return {
      res,
      prismError: `${problem.type.slice(PRISM_ERROR.length)}: ${JSON.stringify(problem.validation ?? problem.detail)}`,
    };
  }

  /** Sends a request and returns the exchange, read by the test (not by any hook of the simulator). */
  async function exchange(path: string, call: Call = {}): Promise<CheckedExchange> {
    const headers: Record<string, string> = { ...call.headers };
    let body: string | undefined;
    if (typeof call.body === 'string') body = call.body;
    else if (call.body !== undefined) {
      body = JSON.stringify(call.body);
      headers['content-type'] ??= 'application/json';
    }
    const method = call.method ?? 'GET';
    const sent = await send(path, { method, headers, body });
    const prismError = sent.prismError;
    let res = sent.res;
    let outcome: ProxyOutcome | undefined;
    if (prismError !== undefined) {
      if (prismError.startsWith('VIOLATIONS') && prismError.includes('"response"')) {
        outcome = { responseViolation: prismError };
      } else {
        // Refused by the proxy, so it never reached the simulator: what the simulator says of it decides.
        outcome = { refused: `${res.status} ${prismError}` };
        res = await sim.fetch(IN_PROCESS_ORIGIN + path, { method, headers, body });
      }
    }
    const responseHeaders = Object.fromEntries(res.headers);
    delete responseHeaders['sl-violations'];
    return {
      request: { method, url: IN_PROCESS_ORIGIN + path, headers, body: body ?? '' },
      response: { status: res.status, headers: responseHeaders, body: await res.text() },
      ...(outcome ? { proxy: outcome } : {}),
    };
  }

  /**
   * Every violation of an exchange: ajv's over the document (validator.ts), a response Prism found off the document,
   * and a request Prism refused that the simulator accepts.
   */
  function check(e: CheckedExchange): Violation[] {
    const out = validator.check(e);
    const label = `${e.request.method} ${new URL(e.request.url).pathname} → ${e.response.status}`;
    const operation = validator.find(e.request.method, new URL(e.request.url).pathname)?.operation.id ?? '(none)';
    if (e.proxy?.responseViolation) {
      out.push({ operation, exchange: label, message: `Prism: ${e.proxy.responseViolation}` });
    }
    if (e.proxy?.refused && e.response.status < 400) {
      out.push({ operation, exchange: label, message: `Prism refused what the simulator accepts: ${e.proxy.refused}` });
    }
    return out;
  }

  /** Calls the simulator through Prism when there is one. */
  const fetcher: Fetcher = async (path, init) => (proxy ? fetch(proxy.url + path, init) : sim.fetch(path, init));
  /** The user token of `user` (the simulator suites' two-step login, through Prism when there is one). */
  const login = (user: SimulatorUser = COMPANY): Promise<string> =>
    twoStepLogin(proxy ? fetcher : inProcess(sim), user);

  /** Stops Prism and the simulator's listener. */
  const close = async () => {
    await proxy?.close();
    await sim.close();
  };

  return { sim, doc, validator, exchange, check, login, close, proxy };
}

/** A short readable line per violation, for failure messages. */
export function explain(violations: { operation: string; message: string; exchange: string }[]): string {
  return violations.map((v) => `${v.exchange} [${v.operation}]: ${v.message}`).join('\n');
}
