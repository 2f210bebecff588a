/**
 * Requests generated from the document's own schemas, for every operation, sent to the simulator through Stoplight
 * Prism's validating proxy (`prism proxy --errors`, as docs/simulator.md suggests) and checked by ajv over the served
 * document as well: every response conforms to the document, a request the document accepts is refused only for a
 * reason its schema lists (`x-rules`), and Prism refuses no request the simulator accepts. Seeded, so a failure
 * reproduces.
 */
import fc from 'fast-check';
import { expect, onTestFinished, test } from 'vitest';
import { arbitrary } from './arbitrary.js';
import { COMPANY, DSP, contractRig, explain } from './helpers.js';
import type { Violation } from './validator.js';

type Json = Record<string, unknown>;
/** Requests per operation; more for the deal writes, whose bodies have the most to get right. */
const RUNS = 25;
const RUNS_WITH_DEAL_BODY = 100;
const SEED = 20_301;

test('generated requests for every operation conform, and none the document accepts is refused unlisted', async () => {
  const r = await contractRig(
    { quotas: { creationsPerDay: 100_000, updatesPerDay: 100_000 }, authLimit: { attempts: 1_000_000 } },
    { through: 'prism' },
  );
  onTestFinished(() => r.close());
  const tokens = [await r.login(COMPANY), await r.login(DSP)];
  const seeded = r.sim.seedDeals(40).map((d) => d.id);
  const login = {
    client_id: COMPANY.clientId,
    client_secret: COMPANY.clientSecret,
    username: COMPANY.username,
    password: COMPANY.password,
  };
  const violations: Violation[] = [];
  const covered = new Set<string>();
  let sent = 0;
  let refusedForRule = 0;
  let discarded = 0;
  let proxyRefused = 0;
  const statuses = new Map<string, number>();

  for (const [index, operation] of r.validator.operations.entries()) {
    const op = operation.op;
    const params = (op.parameters ?? []) as Json[];
    const media = Object.entries(((op.requestBody as Json | undefined)?.content ?? {}) as Record<string, Json>)[0];
    const generatedBody = media ? arbitrary(media[1].schema as Json, { forRequest: true }) : fc.constant(undefined);
    // The token request with real credentials half the time, or every one would be refused.
    const body =
      op.operationId === 'requestAccessToken'
        ? fc.oneof(
            generatedBody,
            generatedBody.map((b) => ({ ...(b as Json), ...login })),
          )
        : generatedBody;
    const param = (p: Json) => {
      const own = arbitrary(p.schema as Json);
      // Ids of existing deals half the time, or every generated id would be a 404.
      const values = p.name === 'id' || p.name === 'X-CopyOfDealId' ? fc.oneof(own, fc.constantFrom(...seeded)) : own;
      return p.required ? values : fc.option(values, { nil: undefined });
    };
    const requests = fc.sample(
      fc.record({
        params: fc.tuple(...params.map(param)),
        body: media && !(op.requestBody as Json).required ? fc.option(body, { nil: undefined }) : body,
        token: fc.constantFrom(...tokens),
      }),
      { numRuns: operation.id.endsWith('Deal') && media ? RUNS_WITH_DEAL_BODY : RUNS, seed: SEED + index },
    );
    for (const generated of requests) {
      let path = operation.path;
      const query = new URLSearchParams();
      const headers: Record<string, string> = {};
      const pathParams: Record<string, string> = {};
      params.forEach((p, i) => {
        const v = generated.params[i];
        if (v === undefined) return;
        if (p.in === 'path') {
          pathParams[p.name as string] = String(v);
          path = path.replace(`{${p.name as string}}`, encodeURIComponent(String(v)));
        } else if (p.in === 'query') query.set(p.name as string, String(v));
        else headers[p.name as string] = String(v);
      });
      if (op.security === undefined) headers.authorization = `Bearer ${generated.token}`;
      else if ((op.security as unknown[]).length > 0) continue;
      let text: string | undefined;
      if (generated.body !== undefined && media) {
        headers['content-type'] = media[0];
        text =
          media[0] === 'application/x-www-form-urlencoded'
            ? new URLSearchParams(generated.body as Record<string, string>).toString()
            : JSON.stringify(generated.body);
      }
      const url = `${path}${query.size > 0 ? `?${query}` : ''}`;
      const method = operation.method.toUpperCase();
      const request = { method, url: `http://simulator.local${url}`, headers, body: text ?? '' };
      // Some generated combinations are not valid together (a DealCopyOverrides body without its header): not sent.
      if (r.validator.requestErrors(operation, request, pathParams).length > 0) {
        discarded++;
        continue;
      }
      const e = await r.exchange(url, { method: request.method, headers, body: text });
      sent++;
      covered.add(operation.id);
      if (e.proxy?.refused) proxyRefused++;
      const found = r.check(e);
      const answer = `${operation.id} ${e.response.status}`;
      statuses.set(answer, (statuses.get(answer) ?? 0) + 1);
      violations.push(...found);
      if (found.length === 0 && e.response.status === 400) refusedForRule++;
    }
  }
  console.log(
    `contract (generated requests): operations covered ${covered.size}/${r.validator.operations.length}, ` +
      `generated requests ${sent} (${discarded} the document refuses, not sent), ` +
      `refused for a listed rule ${refusedForRule}, refused by Prism ${proxyRefused} (the simulator refuses them too), ` +
      `violations (ajv and Prism): ${violations.length}`,
  );
  expect(violations, explain(violations.slice(0, 40))).toEqual([]);
  // The generated requests reach the interesting answers, not only refusals.
  const wanted = [
    'requestAccessToken 200',
    'createDeal 201',
    'replaceDeal 200',
    'attachDomainList 204',
    'detachDomainList 204',
  ];
  for (const answer of wanted) {
    expect(statuses.get(answer), `${answer} never happened: ${JSON.stringify([...statuses])}`).toBeGreaterThan(0);
  }
  expect(covered.size).toBe(r.validator.operations.length - 1); // all but GET /authorize, which needs an access token
}, 600_000);
