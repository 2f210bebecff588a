/** A tiny scripted deal API for unit tests of the client's transport, tokens and paging (injected fetch). */
export interface Seen {
  method: string;
  url: URL;
  headers: Headers;
  body: string;
}

export type Handler = (req: Seen, n: number) => Response | Promise<Response> | Error;

export const SECRETS = {
  clientId: 'client-id-123',
  clientSecret: 'client-secret-XYZ987',
  username: 'alice@example.com',
  password: 'hunter2-correct-horse',
};

export function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(status === 204 ? null : JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json', ...headers },
  });
}

/** A fetch that records requests and answers /oauth/token and /authorize itself unless `routes` does. */
export function fakeApi(routes: Handler, opts: { accessToken?: string; userToken?: string; expiresIn?: number } = {}) {
  const seen: Seen[] = [];
  let tokenCount = 0;
  let authorizeCount = 0;
  const accessToken = opts.accessToken ?? 'ACCESS-TOKEN-aaaa';
  const userToken = opts.userToken ?? 'USER-TOKEN-bbbb';
  const fetch = async (input: RequestInfo | URL, init: RequestInit = {}) => {
    const url = new URL(String(input instanceof Request ? input.url : input));
    const req: Seen = {
      method: init.method ?? 'GET',
      url,
      headers: new Headers(init.headers),
      body: String(init.body ?? ''),
    };
    seen.push(req);
    if (url.pathname.endsWith('/oauth/token')) {
      tokenCount++;
      const r = await routes(req, tokenCount);
      if (r instanceof Error) throw r;
      if (r.status !== 599) return r;
      return json({ access_token: accessToken, expires_in: opts.expiresIn ?? 36000, token_type: 'Bearer' });
    }
    if (url.pathname.endsWith('/authorize')) {
      authorizeCount++;
      const r = await routes(req, authorizeCount);
      if (r instanceof Error) throw r;
      if (r.status !== 599) return r;
      if (req.headers.get('authorization') !== `Bearer ${accessToken}`) return json({ message: 'bad token' }, 401);
      return new Response(userToken, { status: 200, headers: { 'content-type': 'text/plain' } });
    }
    const r = await routes(req, seen.length);
    if (r instanceof Error) throw r;
    return r;
  };
  return {
    fetch: fetch,
    seen,
    api: () => seen.filter((s) => !s.url.pathname.endsWith('/oauth/token') && !s.url.pathname.endsWith('/authorize')),
    get tokenCount() {
      return tokenCount;
    },
    get authorizeCount() {
      return authorizeCount;
    },
  };
}

/** The default answer for auth routes: let the fake handle them. */
export const PASS = (): Response => new Response(null, { status: 599 });

export function connectionRefused(): Error {
  return Object.assign(new TypeError('fetch failed'), {
    cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }),
  });
}

export function connectionReset(): Error {
  return Object.assign(new TypeError('fetch failed'), {
    cause: Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }),
  });
}

export const clientOptions = (fetch: typeof globalThis.fetch) => ({
  baseUrl: 'https://api.test/v1',
  authUrl: 'https://auth.test',
  audience: 'https://api.test',
  credentials: { ...SECRETS },
  fetch,
  retries: { maxRetries: 3, baseDelayMs: 1, maxDelayMs: 5, maxRetryAfterMs: 2_000 },
  referenceChecks: false,
});

/** The rejection of `p` (fails the test when `p` resolves). */
export async function caught(p: Promise<unknown>): Promise<any> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}
