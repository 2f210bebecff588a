/**
 * The simulator's HTTP routes (hono): auth, lookups, deals. Spec: ../shared/spec/deal-api.md §4, §5, §7, §8.
 * Status codes and error bodies are documented in docs/simulator.md ("Behaviour, status codes and error bodies").
 */
import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import {
  DSP_FORBIDDEN_LOOKUPS,
  LOOKUP_RESOURCES,
  PricingModel,
  parseDealDate,
  validateDeal,
  type CompleteDealWrite,
  type DealIssue,
  type DealRead,
  type DealReference,
  type LookupResource,
} from '../deals/rules/index.js';
import { AuthService, PASSWORD_REALM_GRANT, REALM, sameSecret } from './auth.js';
import { canonicalResource, type ReferenceData } from './reference.js';
import type { SimulatorStore, StoredDeal } from './store.js';
import type { SimulatorUser } from './users.js';

/** Everything the routes need. */
export interface AppContext {
  store: SimulatorStore;
  auth: AuthService;
  reference: ReferenceData;
  now: () => number;
  audience: string;
  quotas: { creationsPerDay: number; updatesPerDay: number };
  maxBodyBytes: number;
  openapi: () => unknown;
}

type Env = { Variables: { user: SimulatorUser } };

const DAY_MS = 86_400_000;
const SOON_MS = 7 * DAY_MS;
/** Deals whose end passed this long ago are returned as archived. */
const ARCHIVE_AFTER_MS = 30 * DAY_MS;
/** Largest page of GET /deals (spec 4.2, 8). */
export const MAX_PAGE_SIZE = 100;

/** Sort keys GET /deals accepts (spec 2.7 leaves them open). */
export const SORT_KEYS = ['id', 'dealId', 'name', 'createdAt', 'updatedAt', 'beginDate', 'endDate', 'expirationDate', 'price', 'isActive', 'pricingModel', 'typeId'] as const;

function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

function secondsToNextUtcDay(ms: number): number {
  return Math.max(1, Math.ceil((DAY_MS - (ms % DAY_MS)) / 1000));
}

function dealReference(ref: ReferenceData): DealReference {
  return {
    dsps: new Map(ref.dsps.map((d) => [d.id, d])),
    buyers: new Map(ref.buyers.map((b) => [b.id, b])),
    identityProviders: new Map(ref.identityProviders.map((p) => [p.id, p])),
    complete: true,
  };
}

/** A cross-platform deal id, distinct from the numeric id (spec 2.6). */
export function makeDealId(companyId: number, id: number): string {
  const mix = ((id * 2_654_435_761) ^ (companyId * 40_503)) >>> 0;
  return `EDK-${companyId.toString(36).toUpperCase()}-${mix.toString(36).toUpperCase().padStart(7, '0')}`;
}

/** The read shape of a stored deal at time `now` (spec 2.6): computed and defaulted read-only fields. */
/** The deal type (2.7) a stored deal reads as: guaranteed, direct (fixed price, one buyer) or private auction. */
function dealTypeId(w: StoredDeal['write']): 1 | 2 | 3 {
  return w.pricingModel === PricingModel.GuaranteedPrice ? 3 : w.pricingModel === PricingModel.FixedPrice && w.buyerIds.length === 1 ? 2 : 1;
}

/** The computed states list filters need, without building the whole read view. */
function dealFacts(d: StoredDeal, now: number): { expiration: number | null; isArchived: boolean; isParentDeal: boolean } {
  const w = d.write;
  const end = w.endDate ? parseDealDate(w.endDate) : null;
  const expiration = w.expirationDate ? parseDealDate(w.expirationDate) : end;
  return { expiration, isArchived: end !== null && end < now - ARCHIVE_AFTER_MS, isParentDeal: w.childrenDealIds.length > 0 };
}

/** The read shape (2.6) of a stored deal at time `now`: write fields plus computed read-only fields. */
export function toRead(d: StoredDeal, ref: ReferenceData, now: number): DealRead {
  const w = d.write;
  const { expiration, isArchived, isParentDeal } = dealFacts(d, now);
  const typeId = dealTypeId(w);
  const segmentCost = (expr: string, table: ReferenceData['audienceSegments']) => {
    const ids = expr.split(/[;,]/).map((t) => Number(t.replace(/^\s*NOT\s+/i, '').trim())).filter(Number.isInteger);
    return Math.max(0, ...ids.map((id) => table.find((s) => s.id === id)?.cpm ?? 0));
  };
  return {
    id: d.id,
    dealId: d.dealId,
    ...w,
    createdAt: d.createdAt,
    updatedAt: d.updatedAt,
    expirationDateUtc: expiration === null ? null : new Date(expiration).toISOString(),
    isDisabledByRegulator: false,
    isParentDeal,
    isArchived,
    isEditable: !isArchived,
    isExclusive: w.buyerIds.length === 1 || w.dspIds.length === 1,
    isDealPlus: false,
    typeId,
    priorityId: typeId === 3 ? 3 : typeId === 2 ? 2 : 1,
    dealCriticalityId: typeId === 3 ? 2 : 1,
    throttlingRate: 0,
    customVendorCost: w.minCompanyVendorCost ?? 0,
    keywordTargeting: '',
    keywordIdsTargeting: '',
    semanticSegmentsDataCost: segmentCost(w.semanticSegmentsTargeting, ref.semanticSegments),
    audienceSegmentsDataCost: segmentCost(w.audienceSegmentsTargeting, ref.audienceSegments),
    viewabilityDataCost: w.viewabilityTargetingPercentage === null ? 0 : 0.05,
    videoCompletionDataCost: w.videoCompletionTargetingPercentage === null ? 0 : 0.05,
  } as DealRead;
}

function fieldError(c: Context, field: string, message: string, status: 400 | 404 = 400) {
  return c.json({ message: `${field}: ${message}`, errors: [{ field, message }] }, status);
}

function validationError(c: Context, issues: DealIssue[]) {
  // Spec 7: the multiple-buyer refusal is said in `message`, followed by the DSP id.
  const multiBuyer = issues.find((i) => i.message.startsWith('Deal cannot target DSPs'));
  const first = issues[0];
  const message = multiBuyer
    ? multiBuyer.message
    : `The deal is invalid: ${first.path || '(deal)'}: ${first.message}${issues.length > 1 ? ` (and ${issues.length - 1} more)` : ''}`;
  return c.json({ message, errors: issues.map((i) => ({ field: i.path, message: i.message })) }, 400);
}

async function readJson(c: Context): Promise<{ ok: true; value: unknown } | { ok: false; response: Response }> {
  const text = await c.req.text();
  if (text.trim() === '') {
    return { ok: false, response: fieldError(c, '', 'the request body is empty; send a JSON object') };
  }
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (err) {
    return {
      ok: false,
      response: c.json({ message: 'The request body is not valid JSON', errors: [{ field: '', message: (err as Error).message }] }, 400),
    };
  }
}

type Parsed<T> = { ok: true; value: T } | { ok: false; field: string; message: string };

function parseIntParam(raw: string | undefined, field: string, min: number): Parsed<number | undefined> {
  if (raw === undefined || raw === '') return { ok: true, value: undefined };
  if (!/^\d+$/.test(raw) || Number(raw) < min) return { ok: false, field, message: `must be an integer of at least ${min}` };
  return { ok: true, value: Number(raw) };
}

function parseIdList(raw: string | undefined, field: string): Parsed<number[] | undefined> {
  if (raw === undefined || raw.trim() === '') return { ok: true, value: undefined };
  const parts = raw.split(',').map((s) => s.trim());
  if (!parts.every((p) => /^\d+$/.test(p))) return { ok: false, field, message: 'must be comma-separated integers, e.g. 1,2,3' };
  return { ok: true, value: parts.map(Number) };
}

function parseBool(raw: string | undefined, field: string): Parsed<boolean | undefined> {
  if (raw === undefined || raw === '') return { ok: true, value: undefined };
  const v = raw.toLowerCase();
  if (v !== 'true' && v !== 'false') return { ok: false, field, message: 'must be true or false' };
  return { ok: true, value: v === 'true' };
}

function parseDateParam(raw: string | undefined, field: string): Parsed<number | undefined> {
  if (raw === undefined || raw === '') return { ok: true, value: undefined };
  const ms = parseDealDate(raw);
  if (!/^\d{4}-\d{2}-\d{2}/.test(raw) || Number.isNaN(ms)) return { ok: false, field, message: 'must be an ISO 8601 date-time (read as UTC)' };
  return { ok: true, value: ms };
}

/** Builds the hono app of one simulator. */
export function createApp(ctx: AppContext): Hono<Env> {
  const { store, auth, reference, now } = ctx;
  const dealRef = dealReference(reference);
  const api = new Hono<Env>();

  api.use('*', bodyLimit({
    maxSize: ctx.maxBodyBytes,
    onError: (c) => {
      // The body is refused unread: over HTTP, the rest of it would still arrive on this connection, so close it
      // rather than let a kept-alive socket break the caller's next request ("other side closed").
      c.header('Connection', 'close');
      return c.json({ message: `The request body is larger than ${ctx.maxBodyBytes} bytes`, code: 'PAYLOAD_TOO_LARGE' }, 413);
    },
  }));

  api.get('/openapi.json', (c) => c.json(ctx.openapi() as object));

  // --- Spec 5 step 1: the identity provider's token endpoint. -------------------------------------------------
  api.post('/oauth/token', async (c) => {
    const type = (c.req.header('content-type') ?? '').toLowerCase();
    const text = await c.req.text();
    let form: Record<string, string>;
    if (type.includes('application/json')) {
      try {
        const raw = JSON.parse(text) as Record<string, unknown>;
        form = Object.fromEntries(Object.entries(raw ?? {}).map(([k, v]) => [k, String(v)]));
      } catch {
        return c.json({ error: 'invalid_request', error_description: 'The body is not valid JSON' }, 400);
      }
    } else {
      form = Object.fromEntries(new URLSearchParams(text));
    }
    const grant = form.grant_type;
    if (!grant) return c.json({ error: 'invalid_request', error_description: 'Missing required parameter: grant_type' }, 400);
    if (grant !== PASSWORD_REALM_GRANT && grant !== 'client_credentials') {
      return c.json({ error: 'unsupported_grant_type', error_description: `Unsupported grant type: ${grant}` }, 400);
    }
    const required = grant === PASSWORD_REALM_GRANT
      ? ['client_id', 'client_secret', 'username', 'password', 'realm', 'audience']
      : ['client_id', 'client_secret', 'audience'];
    const missing = required.find((k) => !form[k]);
    if (missing) return c.json({ error: 'invalid_request', error_description: `Missing required parameter: ${missing}` }, 400);

    // Spec 5 / 8: 10 attempts per 5 minutes per user, counted whether or not they succeed.
    const key = grant === PASSWORD_REALM_GRANT ? `user:${form.username.toLowerCase()}` : `client:${form.client_id}`;
    const wait = auth.countAttempt(key);
    if (wait !== null) {
      c.header('Retry-After', String(wait));
      return c.json({ error: 'too_many_attempts', error_description: `Too many authentication attempts; retry in ${wait} s` }, 429);
    }
    if (!auth.knowsClient(form.client_id)) return c.json({ error: 'access_denied', error_description: 'Unauthorized' }, 401);
    if (!auth.clientSecretMatches(form.client_id, form.client_secret)) {
      return c.json({ error: 'invalid_client', error_description: 'Client authentication failed' }, 401);
    }
    if (form.audience !== ctx.audience) {
      return c.json({ error: 'access_denied', error_description: `Service not found: ${form.audience}` }, 403);
    }
    let user: SimulatorUser | undefined;
    let ttl = auth.limits.tokenTtlSeconds;
    if (grant === PASSWORD_REALM_GRANT) {
      if (form.realm !== REALM) return c.json({ error: 'invalid_request', error_description: `Unknown realm: ${form.realm}` }, 400);
      user = auth.user(form.username);
      const good = !!user && user.clientId === form.client_id && sameLogin(user, form.password);
      if (!good) return c.json({ error: 'invalid_grant', error_description: 'Wrong email or password.' }, 403);
    } else {
      // The client-credentials flavour maps the client to its first user (domain notes: 600 s tokens).
      user = auth.users.find((u) => u.clientId === form.client_id);
      ttl = auth.limits.clientCredentialsTtlSeconds;
    }
    const token = auth.issue('access', user!, ttl);
    c.header('Cache-Control', 'no-store');
    return c.json({ access_token: token, expires_in: ttl, token_type: 'Bearer' });
  });

  const sameLogin = (user: SimulatorUser, password: string) => sameSecret(user.password, password);

  // --- Spec 5 step 2: the user token. ---------------------------------------------------------------------------
  api.get('/authorize', (c) => {
    const r = auth.check(c.req.header('authorization'), 'access');
    if (!r.ok) {
      c.header('WWW-Authenticate', 'Bearer error="invalid_token"');
      return c.json({ message: r.message, code: r.code }, 401);
    }
    const token = auth.issue('user', r.user, auth.limits.tokenTtlSeconds);
    c.header('Cache-Control', 'no-store');
    return c.text(token);
  });

  // --- Every other call needs a user token (spec 5 step 3). ----------------------------------------------------
  api.use('*', async (c, next) => {
    const r = auth.check(c.req.header('authorization'), 'user');
    if (!r.ok) {
      c.header('WWW-Authenticate', 'Bearer error="invalid_token"');
      return c.json({ message: r.message, code: r.code }, 401);
    }
    c.set('user', r.user);
    await next();
  });

  const forbiddenForDsp = (c: Context<Env>, what: string) =>
    c.json({ message: `DSP callers cannot use ${what}`, code: 'FORBIDDEN_FOR_DSP' }, 403);

  const notFound = (c: Context, id: string) => c.json({ message: `Deal ${id} not found`, code: 'NOT_FOUND' }, 404);

  /** The caller's deal with this path id, or undefined (other companies' deals are invisible: 404, not 403). */
  function ownDeal(c: Context<Env>): StoredDeal | undefined {
    const raw = c.req.param('id') ?? '';
    if (!/^\d+$/.test(raw)) return undefined;
    const d = store.deals.get(Number(raw));
    return d && d.companyId === c.get('user').companyId ? d : undefined;
  }

  function quota(companyId: number): { day: string; creations: number; updates: number } {
    const day = utcDay(now());
    const q = store.quotas.get(companyId);
    return q && q.day === day ? q : { day, creations: 0, updates: 0 };
  }

  function quotaExceeded(c: Context, code: 'CREATION_QUOTA_EXCEEDED' | 'UPDATE_QUOTA_EXCEEDED', limit: number) {
    c.header('Retry-After', String(secondsToNextUtcDay(now())));
    const what = code === 'CREATION_QUOTA_EXCEEDED' ? 'creations' : 'updates';
    return c.json({ message: `Daily quota of ${limit} deal ${what} reached; it resets at 00:00 UTC`, code }, 429);
  }

  function bumpQuota(companyId: number, field: 'creations' | 'updates'): () => void {
    const before = store.quotas.get(companyId);
    const q = { ...quota(companyId) };
    q[field] += 1;
    store.quotas.set(companyId, q);
    return () => (before ? store.quotas.set(companyId, before) : store.quotas.delete(companyId));
  }

  const read = (d: StoredDeal) => toRead(d, reference, now());

  // --- Deals ------------------------------------------------------------------------------------------------------
  api.get('/deals/countBreakdown', (c) => {
    const company = c.get('user').companyId;
    const t = now();
    const out = { total: 0, active: 0, paused: 0, archived: 0, expiringSoon: 0, byType: { PrivateAuction: 0, DirectDeal: 0, GuaranteedDeal: 0 } };
    const names = { 1: 'PrivateAuction', 2: 'DirectDeal', 3: 'GuaranteedDeal' } as const;
    for (const d of store.deals.values()) {
      if (d.companyId !== company) continue;
      const r = read(d);
      out.total++;
      if (r.isArchived) out.archived++;
      else if (r.isActive) out.active++;
      else out.paused++;
      const exp = r.expirationDateUtc ? Date.parse(r.expirationDateUtc) : null;
      if (exp !== null && exp >= t && exp <= t + SOON_MS) out.expiringSoon++;
      out.byType[names[r.typeId as 1 | 2 | 3]]++;
    }
    return c.json(out);
  });

  api.get('/deals', (c) => {
    const q = c.req.query();
    const checks = {
      limit: parseIntParam(q.limit, 'limit', 1),
      offset: parseIntParam(q.offset, 'offset', 0),
      since: parseDateParam(q.createdOrModifiedSince, 'createdOrModifiedSince'),
      metricsBegin: parseDateParam(q.metricsBeginDate, 'metricsBeginDate'),
      metricsEnd: parseDateParam(q.metricsEndDate, 'metricsEndDate'),
      isArchived: parseBool(q.isArchived, 'isArchived'),
      isSoonExpired: parseBool(q.isSoonExpired, 'isSoonExpired'),
      isParentDeal: parseBool(q.isParentDeal, 'isParentDeal'),
      sortAsc: parseBool(q.sortAsc, 'sortAsc'),
      buyerIds: parseIdList(q.buyerIds, 'buyerIds'),
      dspIds: parseIdList(q.dspIds, 'dspIds'),
      partnerIds: parseIdList(q.partnerIds, 'partnerIds'),
      formatIds: parseIdList(q.formatIds, 'formatIds'),
      platformIds: parseIdList(q.platformIds, 'platformIds'),
    };
    const errors = Object.values(checks).filter((r): r is { ok: false; field: string; message: string } => !r.ok);
    const sortBy = q.sortBy ? SORT_KEYS.find((k) => k.toLowerCase() === q.sortBy.toLowerCase()) : 'id';
    if (!sortBy) errors.push({ ok: false, field: 'sortBy', message: `must be one of ${SORT_KEYS.join(', ')}` });
    if (errors.length > 0) {
      return c.json({ message: `Invalid query: ${errors[0].field}: ${errors[0].message}`, errors: errors.map(({ field, message }) => ({ field, message })) }, 400);
    }
    const v = <T>(p: Parsed<T>) => (p as { value: T }).value;
    const limit = Math.min(v(checks.limit) ?? MAX_PAGE_SIZE, MAX_PAGE_SIZE);
    const offset = v(checks.offset) ?? 0;
    const t = now();
    const company = c.get('user').companyId;
    const intersects = (have: readonly number[], want: number[] | undefined) => !want || have.some((x) => want.includes(x));
    const since = v(checks.since);
    const archived = v(checks.isArchived);
    const soon = v(checks.isSoonExpired);
    const parent = v(checks.isParentDeal);
    // Filter and sort on cheap facts of the stored deal; the full read view (2.6) is built only for the page,
    // so one page of a 10,000-deal company costs a sort, not 10,000 read views.
    const sortKey = (d: StoredDeal): unknown => {
      if (key === 'id' || key === 'dealId') return d[key];
      if (key === 'createdAt' || key === 'updatedAt') return parseDealDate(d[key]);
      if (key === 'typeId') return dealTypeId(d.write);
      const x = (d.write as Record<string, unknown>)[key];
      return x !== null && x !== undefined && key.endsWith('Date') ? parseDealDate(String(x)) : x;
    };
    const key = sortBy!;
    const needFacts = archived !== undefined || parent !== undefined || soon !== undefined;
    const rows: Array<{ d: StoredDeal; k: unknown }> = [];
    for (const d of store.deals.values()) {
      if (d.companyId !== company) continue;
      if (since !== undefined && !(Date.parse(d.updatedAt) > since || Date.parse(d.createdAt) > since)) continue;
      if (needFacts) {
        const f = dealFacts(d, t);
        if (archived !== undefined && f.isArchived !== archived) continue;
        if (parent !== undefined && f.isParentDeal !== parent) continue;
        if (soon !== undefined) {
          const exp = f.expiration;
          if ((exp !== null && exp >= t && exp <= t + SOON_MS) !== soon) continue;
        }
      }
      const w = d.write;
      // Legacy partner ids are today's DSP ids (spec 2.1); formats are impression types.
      if (!intersects(w.buyerIds ?? [], v(checks.buyerIds))) continue;
      if (!intersects(w.dspIds ?? [], v(checks.dspIds))) continue;
      if (!intersects(w.dspIds ?? [], v(checks.partnerIds))) continue;
      if (!intersects(w.impressionTypeIds ?? [], v(checks.formatIds))) continue;
      if (!intersects(w.platformIds ?? [], v(checks.platformIds))) continue;
      rows.push({ d, k: sortKey(d) });
    }
    const asc = v(checks.sortAsc) ?? true;
    rows.sort((a, b) => {
      const x = a.k;
      const y = b.k;
      let cmp = 0;
      if (x === null || x === undefined) cmp = y === null || y === undefined ? 0 : 1;
      else if (y === null || y === undefined) cmp = -1;
      else {
        cmp = (x as number) < (y as number) ? -1 : (x as number) > (y as number) ? 1 : 0;
        if (!asc) cmp = -cmp;
      }
      return cmp !== 0 ? cmp : a.d.id - b.d.id;
    });
    const total = rows.length;
    const page = rows.slice(offset, offset + limit).map((r) => read(r.d));
    // RFC 5988 Link header: first / prev / next / last pages, keeping every other query parameter.
    const link = (rel: string, off: number) => {
      const u = new URL(c.req.url);
      u.searchParams.set('offset', String(off));
      u.searchParams.set('limit', String(limit));
      return `<${u.toString()}>; rel="${rel}"`;
    };
    const lastOffset = total === 0 ? 0 : Math.floor((total - 1) / limit) * limit;
    const links = [link('first', 0)];
    if (offset > 0) links.push(link('prev', Math.max(0, offset - limit)));
    if (offset + limit < total) links.push(link('next', offset + limit));
    links.push(link('last', lastOffset));
    c.header('X-Pagination-Total-Count', String(total));
    c.header('Link', links.join(', '));
    return c.json(page);
  });

  api.get('/deals/:id', (c) => {
    const d = ownDeal(c);
    return d ? c.json(read(d)) : notFound(c, c.req.param('id'));
  });

  api.post('/deals', async (c) => {
    const user = c.get('user');
    const body = await readJson(c);
    if (!body.ok) return body.response;
    let input = body.value;
    const copyOf = c.req.header('x-copyofdealid');
    if (copyOf !== undefined) {
      const source = /^\d+$/.test(copyOf.trim()) ? store.deals.get(Number(copyOf.trim())) : undefined;
      if (!source || source.companyId !== user.companyId) return fieldError(c, 'X-CopyOfDealId', `deal ${copyOf} not found`, 404);
      if (input === null || typeof input !== 'object' || Array.isArray(input)) return validationError(c, [{ path: '', message: 'the deal must be a JSON object' }]);
      const given = input as Record<string, unknown>;
      input = { ...source.write, name: `${source.write.name} (copy)`, ...given };
    }
    if (user.kind === 'dsp' && input && typeof input === 'object' && (input as Record<string, unknown>).domainListId != null) {
      return forbiddenForDsp(c, 'domain lists');
    }
    const r = validateDeal(input, { mode: 'create', now: now(), reference: dealRef });
    if (!r.ok) return validationError(c, r.issues);
    const q = quota(user.companyId);
    if (q.creations >= ctx.quotas.creationsPerDay) return quotaExceeded(c, 'CREATION_QUOTA_EXCEEDED', ctx.quotas.creationsPerDay);
    const stamp = new Date(now()).toISOString();
    const id = store.nextId;
    const deal: StoredDeal = {
      companyId: user.companyId,
      id,
      dealId: makeDealId(user.companyId, id),
      createdAt: stamp,
      updatedAt: stamp,
      historyId: store.nextHistoryId,
      write: r.value!,
    };
    let undoQuota = () => {};
    store.commit(
      () => {
        store.nextId++;
        store.nextHistoryId++;
        store.deals.set(id, deal);
        undoQuota = bumpQuota(user.companyId, 'creations');
      },
      () => {
        store.deals.delete(id);
        store.nextId--;
        store.nextHistoryId--;
        undoQuota();
      },
    );
    c.header('Location', new URL(`deals/${id}`, new URL('./', c.req.url)).toString());
    c.header('X-HistoryId', String(deal.historyId));
    warn(c, r.warnings);
    return c.json(read(deal), 201);
  });

  api.put('/deals/:id', async (c) => {
    const user = c.get('user');
    const existing = ownDeal(c);
    if (!existing) return notFound(c, c.req.param('id'));
    const body = await readJson(c);
    if (!body.ok) return body.response;
    const stored = { ...existing.write, id: existing.id, dealId: existing.dealId };
    if (user.kind === 'dsp' && body.value && typeof body.value === 'object' && ((body.value as Record<string, unknown>).domainListId ?? null) !== existing.write.domainListId) {
      return forbiddenForDsp(c, 'domain lists');
    }
    if (!read(existing).isEditable) {
      return c.json({ message: `Deal ${existing.id} is archived and can no longer be edited`, errors: [{ field: '', message: 'the deal is archived' }] }, 400);
    }
    const r = validateDeal(body.value, { mode: 'update', stored, now: now(), reference: dealRef });
    if (!r.ok) return validationError(c, r.issues);
    if (quota(user.companyId).updates >= ctx.quotas.updatesPerDay) return quotaExceeded(c, 'UPDATE_QUOTA_EXCEEDED', ctx.quotas.updatesPerDay);
    const next = replaceWrite(existing, r.value!);
    let undoQuota = () => {};
    store.commit(
      () => {
        store.nextHistoryId++;
        store.deals.set(existing.id, next);
        undoQuota = bumpQuota(user.companyId, 'updates');
      },
      () => {
        store.nextHistoryId--;
        store.deals.set(existing.id, existing);
        undoQuota();
      },
    );
    c.header('X-HistoryId', String(next.historyId));
    warn(c, r.warnings);
    return c.json(read(next));
  });

  function replaceWrite(existing: StoredDeal, write: CompleteDealWrite): StoredDeal {
    return { ...existing, write, updatedAt: new Date(now()).toISOString(), historyId: store.nextHistoryId };
  }

  function warn(c: Context, warnings: DealIssue[]) {
    if (warnings.length > 0) c.header('Warning', warnings.map((w) => `299 eidkit-simulator "${w.path}: ${w.message.replace(/"/g, "'")}"`).join(', '));
  }

  api.delete('/deals/:id', (c) => {
    const d = ownDeal(c);
    if (!d) return notFound(c, c.req.param('id'));
    store.commit(() => store.deals.delete(d.id), () => store.deals.set(d.id, d));
    return c.body(null, 204);
  });

  api.post('/deals/:id/domainlists', async (c) => {
    if (c.get('user').kind === 'dsp') return forbiddenForDsp(c, 'the domain-list operations');
    const d = ownDeal(c);
    if (!d) return notFound(c, c.req.param('id'));
    const body = await readJson(c);
    if (!body.ok) return body.response;
    const b = body.value as Record<string, unknown> | null;
    if (b === null || typeof b !== 'object' || Array.isArray(b)) return fieldError(c, '', 'must be a JSON object with domainListId');
    const unknownKey = Object.keys(b).find((k) => k !== 'domainListId');
    if (unknownKey) return fieldError(c, unknownKey, `unknown field "${unknownKey}"`);
    const listId = b.domainListId;
    if (typeof listId !== 'number' || !Number.isInteger(listId) || listId <= 0) return fieldError(c, 'domainListId', 'must be a positive integer');
    if (!reference.domainLists.some((l) => l.id === listId)) return fieldError(c, 'domainListId', `unknown domain list ${listId}`);
    const next = replaceWrite(d, { ...d.write, domainListId: listId });
    store.commit(() => { store.nextHistoryId++; store.deals.set(d.id, next); }, () => { store.nextHistoryId--; store.deals.set(d.id, d); });
    return c.body(null, 204);
  });

  api.delete('/deals/:id/domainlists', async (c) => {
    if (c.get('user').kind === 'dsp') return forbiddenForDsp(c, 'the domain-list operations');
    const d = ownDeal(c);
    if (!d) return notFound(c, c.req.param('id'));
    // The body is optional (spec 4 leaves it open); when it names a list, it must be the attached one.
    const text = await c.req.text();
    if (text.trim() !== '') {
      let b: unknown;
      try { b = JSON.parse(text); } catch (err) {
        return c.json({ message: 'The request body is not valid JSON', errors: [{ field: '', message: (err as Error).message }] }, 400);
      }
      const listId = (b as Record<string, unknown> | null)?.domainListId;
      if (listId !== undefined && listId !== d.write.domainListId) {
        return fieldError(c, 'domainListId', `domain list ${JSON.stringify(listId)} is not attached to deal ${d.id}`);
      }
    }
    if (d.write.domainListId !== null) {
      const next = replaceWrite(d, { ...d.write, domainListId: null });
      store.commit(() => { store.nextHistoryId++; store.deals.set(d.id, next); }, () => { store.nextHistoryId--; store.deals.set(d.id, d); });
    }
    return c.body(null, 204);
  });

  // --- Lookups (spec 4.1) --------------------------------------------------------------------------------------
  api.get('/:resource', (c) => {
    const resource = canonicalResource(c.req.param('resource'), LOOKUP_RESOURCES);
    if (!resource) return c.json({ message: `No such resource: ${c.req.param('resource')}`, code: 'NOT_FOUND' }, 404);
    if (c.get('user').kind === 'dsp' && DSP_FORBIDDEN_LOOKUPS.includes(resource)) return forbiddenForDsp(c, `the ${resource} lookup`);
    const q = c.req.query();
    const checks = [parseIdList(q.ids, 'ids'), parseIntParam(q.limit, 'limit', 0), parseIntParam(q.offset, 'offset', 0)];
    const bad = checks.find((r): r is { ok: false; field: string; message: string } => !r.ok);
    if (bad) return fieldError(c, bad.field, bad.message);
    const [ids, limit, offset] = checks.map((r) => (r as { value: unknown }).value) as [number[] | undefined, number | undefined, number | undefined];
    const search = (q.extendedSearch ?? '').trim().toLowerCase();
    let items = (reference[resource as LookupResource] as Array<{ id: number; name: string; extendedName?: string; code?: string }>).filter(
      (item) =>
        (!ids || ids.includes(item.id)) &&
        (!search || item.name.toLowerCase().includes(search) || (item.extendedName ?? '').toLowerCase().includes(search) || (item.code ?? '').toLowerCase() === search),
    );
    c.header('X-Pagination-Total-Count', String(items.length));
    items = items.slice(offset ?? 0, limit === undefined ? undefined : (offset ?? 0) + limit);
    return c.json(items);
  });

  const app = new Hono<Env>();
  app.route('/current', api);
  app.route('/', api);
  app.notFound((c) => c.json({ message: `No route for ${c.req.method} ${new URL(c.req.url).pathname}`, code: 'NOT_FOUND' }, 404));
  app.onError((err, c) => {
    // Never echo internals (a failed disk write, say) beyond a short reason; nothing was acknowledged.
    return c.json({ message: `Internal simulator error: ${err instanceof Error ? err.name : 'error'}`, code: 'INTERNAL' }, 500);
  });
  return app;
}
