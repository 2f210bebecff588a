/**
 * Recording the simulator's traffic: each answered request and its response (headers and bodies), with every
 * credential scrubbed (the users' passwords and client secrets, and the tokens the simulator issues), for the
 * `onExchange` option, `eidkit simulate --record` and the `EIDKIT_SIMULATOR_RECORD` file. The contract tests
 * check such recordings against the OpenAPI document (docs/simulator.md "The OpenAPI document").
 */
import { appendFileSync } from 'node:fs';
import { REDACTED } from '../deals/rules/index.js';
import { Redactor } from '../deals/client/redact.js';
import type { SimulatorUser } from './users.js';

/** One request and the response the simulator gave it, credentials replaced by `[REDACTED]`. */
export interface SimulatorExchange {
  request: { method: string; url: string; headers: Record<string, string>; body: string };
  response: { status: number; headers: Record<string, string>; body: string };
}

/** The simulator's tokens (`sim_at_…`, `sim_ut_…`), wherever they appear. */
const TOKEN = /sim_(?:at|ut)_[A-Za-z0-9_-]+/g;

/** Builds the scrubber of one simulator: its users' secrets and its tokens. */
export function exchangeRecorder(users: readonly SimulatorUser[]) {
  // The client's redactor: every spelling a secret may take in a request (as is, form-encoded, percent-encoded,
  // JSON-escaped) and any bearer credential; then the tokens this simulator issued, wherever they appear.
  const redactor = new Redactor();
  for (const u of users) {
    redactor.add(u.password);
    redactor.add(u.clientSecret);
  }
  const scrub = (text: string) => redactor.redact(text).replace(TOKEN, REDACTED);
  const headers = (h: Headers) => Object.fromEntries([...h].map(([k, v]) => [k, scrub(v)]));
  /** The scrubbed exchange of a request and its response (copies of both are read; the originals are untouched). */
  return async (request: Request, response: Response): Promise<SimulatorExchange> => {
    const [reqBody, resBody] = await Promise.all([request.text().catch(() => ''), response.text().catch(() => '')]);
    return {
      request: {
        method: request.method,
        url: scrub(request.url),
        headers: headers(request.headers),
        body: scrub(reqBody),
      },
      response: { status: response.status, headers: headers(response.headers), body: scrub(resBody) },
    };
  };
}

/** A sink that appends each exchange to `file` as one JSON line (NDJSON). */
export function appendExchanges(file: string): (exchange: SimulatorExchange) => void {
  return (exchange) => appendFileSync(file, `${JSON.stringify(exchange)}\n`, { mode: 0o600 });
}
