/**
 * The simulator's HTTP app (hono): the body limit, the OpenAPI document, then the routes in order (auth, the user
 * token check, deals, lookups), served under /current and /, with the JSON 404 and 500. Status codes and error
 * bodies are documented in docs/simulator.md ("Behaviour, status codes and error bodies"), and the answers these
 * layers give every route in routes/operation.ts (SHARED_RESPONSES), which the OpenAPI document is built from.
 */
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { registerTokenRoutes, requireUserToken } from './routes/auth.js';
import type { ApiEnv, AppContext } from './routes/context.js';
import { registerDealListRoutes } from './routes/deal-list.js';
import { registerDealRoutes } from './routes/deals.js';
import { registerLookupRoutes } from './routes/lookups.js';
import { GET_DOCUMENT } from './routes/auth-operations.js';
import { route } from './routes/operation.js';

/** Builds the hono app of one simulator. */
export function createApp(ctx: AppContext): Hono<ApiEnv> {
  const api = new Hono<ApiEnv>();

  api.use(
    '*',
    bodyLimit({
      maxSize: ctx.maxBodyBytes,
      onError: (c) => {
        // The body is refused unread: over HTTP, the rest of it would still arrive on this connection, so close it
        // rather than let a kept-alive socket break the caller's next request ("other side closed").
        c.header('Connection', 'close');
        return c.json(
          { message: `The request body is larger than ${ctx.maxBodyBytes} bytes`, code: 'PAYLOAD_TOO_LARGE' },
          413,
        );
      },
    }),
  );

  route(api, GET_DOCUMENT, (c) =>
    c.body(ctx.openapi(new URL(c.req.url).origin), 200, { 'content-type': 'application/json' }),
  );

  // Order matters: the token routes come before the user-token check, /deals/countBreakdown before /deals/:id,
  // and the lookups' /:resource last.
  registerTokenRoutes(api, ctx);
  // --- Every other call needs a user token (step 3 of the login). ----------------------------------------------------
  api.use('*', requireUserToken(ctx));
  registerDealListRoutes(api, ctx);
  registerDealRoutes(api, ctx);
  registerLookupRoutes(api, ctx);

  const app = new Hono<ApiEnv>();
  app.route('/current', api);
  app.route('/', api);
  app.notFound((c) =>
    c.json({ message: `No route for ${c.req.method} ${new URL(c.req.url).pathname}`, code: 'NOT_FOUND' }, 404),
  );
  app.onError((err, c) => {
    // Never echo internals (a failed disk write, say) beyond a short reason; nothing was acknowledged.
    return c.json(
      { message: `Internal simulator error: ${err instanceof Error ? err.name : 'error'}`, code: 'INTERNAL' },
      500,
    );
  });
  return app;
}
