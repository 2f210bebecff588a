/**
 * How the `deals`, `lookups` and `login` commands reach a deal API: the connection options, and a session on a
 * configured service (environment, config file, token cache) or on a simulator started in-process (--simulator).
 */
import type { Command } from 'commander';
import { EXIT } from './exit-codes.js';
import { CliError, say } from './output.js';
import {
  ConfigError,
  CONFIG_ENV,
  DealApiClient,
  defaultTokenPath,
  fileTokenCache,
  loadConnectionConfig,
  type DealApiClientOptions,
} from '../deals/index.js';
import { intArg } from './deals-io.js';

/** The connection options of every command that talks to the API. */
export interface ConnectionFlags {
  simulator?: boolean;
  as?: string;
  simulatorData?: string;
  config?: string;
  tokenFile?: string;
  cache?: boolean;
  baseUrl?: string;
  authUrl?: string;
  timeout?: number;
  verbose?: boolean;
}

/** Adds the connection options. */
export function connectionOptions(cmd: Command): Command {
  return cmd
    .option('--simulator', 'run against a deal API simulator started in-process (no credentials needed)')
    .option('--as <user>', 'with --simulator: which demo user (company, other, dsp)', 'company')
    .option(
      '--simulator-data <file>',
      'with --simulator: keep its deals in this file between commands (or $EIDKIT_SIMULATOR_DATA)',
    )
    .option('--config <file>', `config file (default $EIDKIT_CONFIG or ~/.config/eidkit/config.json)`)
    .option(
      '--token-file <file>',
      'user token cache, created readable by you only (default ~/.cache/eidkit/token.json)',
    )
    .option('--no-cache', 'neither read nor write the token cache')
    .option('--base-url <url>', `service base URL (or $${CONFIG_ENV.baseUrl})`)
    .option('--auth-url <url>', `identity provider URL (or $${CONFIG_ENV.authUrl})`)
    .option('--timeout <ms>', 'per-request timeout in milliseconds', intArg('--timeout', 1), 30_000)
    .option('-v, --verbose', 'log every request to stderr (secrets are never logged)');
}

interface Session {
  client: DealApiClient;
  close(): Promise<void>;
}

/** A client on a simulator started in this process, logged in as one of its demo users (`--as`). */
async function simulatorSession(flags: ConnectionFlags, base: Partial<DealApiClientOptions>): Promise<Session> {
  const { createDealApiSimulator, DEMO_SEED_DEALS, IN_PROCESS_ORIGIN } = await import('../simulator/index.js');
  const dataFile = flags.simulatorData ?? process.env.EIDKIT_SIMULATOR_DATA;
  const simulator = createDealApiSimulator({ seed: { deals: DEMO_SEED_DEALS }, ...(dataFile ? { dataFile } : {}) });
  const wanted = flags.as ?? 'company';
  const users = simulator.users;
  const user =
    users.find((u) => u.username === wanted) ??
    users.find((u) => u.username.split('@')[0] === wanted) ??
    (wanted === 'company'
      ? users.find((u) => u.kind === 'company')
      : wanted === 'dsp'
        ? users.find((u) => u.kind === 'dsp')
        : undefined);
  if (!user) throw new CliError(`--as ${wanted}: no such demo user (try company, other or dsp)`, EXIT.USAGE);
  const client = new DealApiClient({
    ...base,
    baseUrl: `${IN_PROCESS_ORIGIN}/current/`,
    authUrl: IN_PROCESS_ORIGIN,
    audience: simulator.audience,
    fetch: simulator.fetch,
    credentials: {
      clientId: user.clientId,
      clientSecret: user.clientSecret,
      username: user.username,
      password: user.password,
    },
  });
  return { client, close: () => simulator.close() };
}

async function openSession(flags: ConnectionFlags): Promise<Session> {
  const timeoutMs = flags.timeout ?? 30_000;
  // -v: requests are logged from the client's hooks (logRequests); the logger adds token refreshes and retries.
  const logger = flags.verbose ? { info: say, warn: say } : { warn: (m: string) => say(`warning: ${m}`) };
  const base: Partial<DealApiClientOptions> = { timeoutMs, logger };
  if (flags.simulator) return simulatorSession(flags, base);
  const config = loadConnectionConfig({ path: flags.config, warn: say });
  const baseUrl = flags.baseUrl ?? config.baseUrl;
  const authUrl = flags.authUrl ?? config.authUrl;
  if (!baseUrl || !authUrl) {
    // Name only what is missing: a message asking for a setting the user already made sends them looking elsewhere.
    const unset = [
      !baseUrl && `${CONFIG_ENV.baseUrl} (or --base-url)`,
      !authUrl && `${CONFIG_ENV.authUrl} (or --auth-url)`,
    ].filter(Boolean);
    const none = !baseUrl && !authUrl;
    throw new ConfigError(
      `${none ? 'no service configured' : 'service half configured'}: set ${unset.join(' and ')}${none ? ' (and the credentials)' : ''}, use a config file, or try --simulator`,
    );
  }
  const { clientId, clientSecret, username, password } = config.credentials;
  const grant = config.grant ?? 'password-realm';
  const missing = [
    !clientId && CONFIG_ENV.clientId,
    !clientSecret && CONFIG_ENV.clientSecret,
    grant === 'password-realm' && !username && CONFIG_ENV.username,
    grant === 'password-realm' && !password && CONFIG_ENV.password,
  ].filter(Boolean);
  const principal = grant === 'password-realm' ? username : clientId;
  const tokenCache =
    flags.cache === false ? undefined : fileTokenCache(flags.tokenFile ?? defaultTokenPath(), { baseUrl, principal });
  // A cached user token (eidkit login) lets commands run with only the base and auth URLs set: without the
  // username or client id, the token cached for this base URL is used, whoever logged in.
  const cached = missing.length ? await tokenCache?.load() : undefined;
  if (missing.length && !(cached && cached.expiresAt > Date.now())) {
    throw new ConfigError(
      `missing credentials: set ${missing.join(', ')} (or put them in the config file), then run eidkit login`,
    );
  }
  // The identity provider refuses a token request without the audience (a bare 400): name the setting instead.
  if (!missing.length && !config.audience) {
    throw new ConfigError(
      `missing setting: set ${CONFIG_ENV.audience} (the audience given with the credentials) or "audience" in the config file`,
    );
  }
  const client = new DealApiClient({
    ...base,
    baseUrl,
    authUrl,
    audience: config.audience ?? '',
    grant,
    ...(missing.length
      ? { token: cached!.token }
      : { credentials: { clientId: clientId!, clientSecret: clientSecret!, username, password }, tokenCache }),
  });
  return { client, close: async () => undefined };
}

/** `-v`: one stderr line per HTTP attempt, from the client's `response` hook (URLs scrubbed, no headers). */
function logRequests(client: DealApiClient): void {
  client.on('response', (e) => {
    const url = new URL(e.url);
    say(
      `${e.method} ${url.pathname}${url.search} → ${e.status ?? e.error} (${e.elapsedMs} ms${e.attempt > 1 ? `, attempt ${e.attempt}` : ''})`,
    );
  });
}

/** Runs `fn` with a client, then closes the session (an in-process simulator included). */
export async function withSession(flags: ConnectionFlags, fn: (client: DealApiClient) => Promise<void>): Promise<void> {
  const session = await openSession(flags);
  if (flags.verbose) logRequests(session.client);
  try {
    await fn(session.client);
  } finally {
    await session.close();
  }
}
