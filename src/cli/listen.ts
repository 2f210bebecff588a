/**
 * What a command that serves (`simulate`, `tags serve`) says when it cannot listen: a port in use or an address it
 * cannot bind is the user's to change (exit 2, with the way out), never a raw socket error.
 */
import { EXIT } from './exit-codes.js';
import { CliError } from './output.js';

/** The CliError for a failed listen on `host`:`port`, or `err` itself when it is something else. */
export function listenError(err: unknown, host: string, port: number): unknown {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'EADDRINUSE')
    return new CliError(
      `port ${port} on ${host} is already in use: pick another with --port <n> (--port 0 takes any free port)`,
      EXIT.USAGE,
    );
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EACCES')
    return new CliError(`cannot listen on ${host}:${port} (${code})`, EXIT.USAGE);
  return err;
}
