/**
 * Where the CLI (and any Node program) finds credentials — environment variables, then a config file — and a
 * token cache kept in a file only the user can read.
 */
import { ConfigurationError } from '../../core/config-error.js';
import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import type { CachedToken, Credentials, Grant, TokenCache } from './auth.js';
import { fileErrorText } from '../../core/file-error.js';

/** Connection settings as read from the environment or the config file. */
export interface ConnectionConfig {
  baseUrl?: string;
  authUrl?: string;
  audience?: string;
  grant?: Grant;
  credentials: Partial<Credentials>;
}

/** Environment variables read by {@link loadConnectionConfig}, by setting. */
export const CONFIG_ENV = {
  baseUrl: 'EIDKIT_BASE_URL',
  authUrl: 'EIDKIT_AUTH_URL',
  audience: 'EIDKIT_AUDIENCE',
  grant: 'EIDKIT_GRANT',
  clientId: 'EIDKIT_CLIENT_ID',
  clientSecret: 'EIDKIT_CLIENT_SECRET',
  username: 'EIDKIT_USERNAME',
  password: 'EIDKIT_PASSWORD',
} as const;

/** The default config file: `$XDG_CONFIG_HOME/eidkit/config.json` (or `~/.config/eidkit/config.json`). */
export function defaultConfigPath(env: NodeJS.ProcessEnv = process.env): string {
  return env.EIDKIT_CONFIG ?? join(env.XDG_CONFIG_HOME || join(homedir(), '.config'), 'eidkit', 'config.json');
}

/** The default token file: `$XDG_CACHE_HOME/eidkit/token.json` (or `~/.cache/eidkit/token.json`). */
export function defaultTokenPath(env: NodeJS.ProcessEnv = process.env): string {
  return env.EIDKIT_TOKEN_FILE ?? join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'eidkit', 'token.json');
}

/** A problem with the configuration (missing setting, unreadable file); the message never holds a secret value. */
export class ConfigError extends ConfigurationError {
  override name = 'ConfigError';
}

/**
 * Reads the config file (JSON with the keys of {@link CONFIG_ENV}; missing is fine) and overlays the environment.
 * `warn` receives a line when a file holding a secret can be read by others.
 */
export function loadConnectionConfig(
  options: { path?: string; env?: NodeJS.ProcessEnv; warn?: (line: string) => void } = {},
): ConnectionConfig {
  const env = options.env ?? process.env;
  const path = options.path ?? defaultConfigPath(env);
  let file: Record<string, unknown> = {};
  let text: string | undefined;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || options.path)
      throw new ConfigError(`cannot read config file ${path}: ${fileErrorText(err)}`);
  }
  if (text !== undefined) {
    try {
      file = JSON.parse(text) as Record<string, unknown>;
    } catch {
      throw new ConfigError(`config file ${path} is not valid JSON`);
    }
    if (!file || typeof file !== 'object' || Array.isArray(file))
      throw new ConfigError(`config file ${path} must hold a JSON object`);
    const holdsSecret = typeof file.password === 'string' || typeof file.clientSecret === 'string';
    if (holdsSecret && process.platform !== 'win32' && (statSync(path).mode & 0o077) !== 0) {
      options.warn?.(`warning: ${path} holds a secret and can be read by other users; run: chmod 600 ${path}`);
    }
  }
  const pick = (key: keyof typeof CONFIG_ENV): string | undefined => {
    const fromEnv = env[CONFIG_ENV[key]];
    if (fromEnv) return fromEnv;
    const v = file[key];
    return typeof v === 'string' && v ? v : undefined;
  };
  const grant = pick('grant');
  if (grant !== undefined && grant !== 'password-realm' && grant !== 'client-credentials') {
    throw new ConfigError(`grant must be "password-realm" or "client-credentials", got ${JSON.stringify(grant)}`);
  }
  return {
    baseUrl: pick('baseUrl'),
    authUrl: pick('authUrl'),
    audience: pick('audience'),
    grant: grant,
    credentials: {
      clientId: pick('clientId'),
      clientSecret: pick('clientSecret'),
      username: pick('username'),
      password: pick('password'),
    },
  };
}

/**
 * A {@link TokenCache} in a JSON file created with mode 0600 in a 0700 directory, written atomically. The token is
 * bound to the base URL and the login it was issued for, so switching accounts never reuses it. Without a
 * `principal` (no username or client id at hand) it loads the token cached for the base URL, whoever logged in.
 */
export function fileTokenCache(path: string, scope: { baseUrl: string; principal?: string }): TokenCache {
  return {
    load(): CachedToken | undefined {
      let raw: { baseUrl?: unknown; principal?: unknown; token?: unknown; expiresAt?: unknown } | null;
      try {
        raw = JSON.parse(readFileSync(path, 'utf8')) as typeof raw;
      } catch {
        return undefined;
      }
      if (raw?.baseUrl !== scope.baseUrl || (scope.principal !== undefined && raw?.principal !== scope.principal))
        return undefined;
      if (typeof raw.token !== 'string' || typeof raw.expiresAt !== 'number') return undefined;
      return { token: raw.token, expiresAt: raw.expiresAt };
    },
    save(token: CachedToken): void {
      mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
      const tmp = `${path}.${process.pid}.tmp`;
      writeFileSync(tmp, JSON.stringify({ ...scope, ...token }), { mode: 0o600 });
      chmodSync(tmp, 0o600); // the umask cannot widen it, but an existing file's mode would be kept
      renameSync(tmp, path);
    },
    clear(): void {
      rmSync(path, { force: true });
    },
  };
}
