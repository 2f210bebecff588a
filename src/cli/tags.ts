/** `eidkit tags build|serve`: per-network tag delivery (src/operator), registered on the program by ./index.ts. */
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { serve } from '@hono/node-server';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import {
  buildTags,
  createTagApp,
  loadNetworksConfig,
  NetworksConfigError,
  TAG_CACHE_CONTROL,
  type NetworksConfig,
} from '../operator/index.js';
import { EXIT } from './exit-codes.js';
import { CliError, outText, say } from './output.js';
import { listenError } from './listen.js';
import { terminalSafe } from '../core/terminal.js';

const port = (raw: string): number => {
  if (!/^\d+$/.test(raw) || Number(raw) > 65535) throw new InvalidArgumentError('--port must be an integer 0-65535');
  return Number(raw);
};

/** The networks file; one that does not load is refused as invalid input (exit 3), naming each network and field. */
function networksOf(file: string): NetworksConfig {
  try {
    return loadNetworksConfig(file);
  } catch (e) {
    if (e instanceof NetworksConfigError) throw new CliError(e.message, EXIT.VALIDATION);
    throw e;
  }
}

/** A progress line on stderr: rewritten in place on a terminal, a line every 10% otherwise (logs stay short). */
function progress(label: string) {
  const tty = process.stderr.isTTY;
  let lastTenth = -1;
  return (done: number, total: number) => {
    if (total < 50) return;
    if (tty) {
      process.stderr.write(`\r${label} ${done}/${total}${done === total ? '\n' : ''}`);
    } else if (Math.floor((done * 10) / total) > lastTenth) {
      lastTenth = Math.floor((done * 10) / total);
      process.stderr.write(`${label} ${done}/${total}\n`);
    }
  };
}

/** Adds `eidkit tags build` and `eidkit tags serve` to the program. */
export function registerTagsCommands(program: Command): void {
  const tags = program.command('tags').description('per-network tag delivery for operators (docs/operator.md)');

  tags
    .command('build')
    .description(
      'write tag/<network_id>/sas.js and sas.debug.js (+ .gz, .br) for every network, a default, and manifest.json',
    )
    .requiredOption('--networks <file>', 'networks configuration (JSON)')
    .requiredOption('--out <dir>', 'output folder (e.g. cdn/)')
    .addHelpText('after', '\nExample:\n  eidkit tags build --networks networks.json --out cdn/')
    .action(async (opts: { networks: string; out: string }) => {
      const config = networksOf(resolve(opts.networks));
      const started = performance.now();
      const r = await buildTags({ config, outDir: resolve(opts.out), onProgress: progress('networks') });
      const secs = ((performance.now() - started) / 1000).toFixed(2);
      await outText(
        `built ${r.networks} networks (${r.networks - 1} configured + default) in ${secs} s: ` +
          `${r.written} files written, ${r.unchanged} unchanged${r.removed ? `, ${r.removed} networks removed` : ''}; manifest ${resolve(opts.out, 'manifest.json')}\n`,
      );
    });

  tags
    .command('serve')
    .description('serve /tag/<network_id>/sas.js and sas.debug.js (ETag, 304, gzip/brotli, CORS)')
    .requiredOption('--networks <file>', 'networks configuration (JSON)')
    .option('--port <n>', 'port to listen on (0 = any free port)', port, 8090)
    .option('--host <host>', 'address to bind', '127.0.0.1')
    .addHelpText(
      'after',
      `\nCache-Control: ${TAG_CACHE_CONTROL}\nReload: send SIGHUP to re-read the networks file (a bad file is reported and the running configuration kept).\n` +
        'Example:\n  eidkit tags serve --networks networks.json --port 8090\n  kill -HUP <pid>   # after editing networks.json',
    )
    .action(async (opts: { networks: string; port: number; host: string }) => {
      const file = resolve(opts.networks);
      let config = networksOf(file);
      const app = createTagApp({ config: () => config });
      // SIGHUP re-reads the file, as daemons do; a file that does not load never replaces the one being served.
      const reload = () => {
        try {
          config = loadNetworksConfig(file);
          const n = Object.keys(config.networks).length;
          say(`eidkit tags: reloaded ${file} (${n} network${n === 1 ? '' : 's'})`);
        } catch (e) {
          say(
            `eidkit tags: ${file} not reloaded, still serving the previous configuration: ${terminalSafe(e instanceof Error ? e.message : String(e))}`,
          );
        }
      };
      // The signals are handled from the start: a reload sent as soon as the pid is printed must not end the process.
      let server: ReturnType<typeof serve> | undefined;
      let stopping = false;
      let stopped!: () => void;
      const done = new Promise<void>((resolve) => (stopped = resolve));
      const stop = () => {
        stopping = true;
        process.off('SIGINT', stop);
        process.off('SIGTERM', stop);
        process.off('SIGHUP', reload);
        if (server) server.close(() => stopped());
        else stopped();
      };
      process.on('SIGHUP', reload);
      process.on('SIGINT', stop);
      process.on('SIGTERM', stop);
      try {
        server = await new Promise<ReturnType<typeof serve>>((listening, fail) => {
          const s = serve({ fetch: app.fetch, port: opts.port, hostname: opts.host }, () => listening(s));
          s.once('error', fail);
        });
      } catch (e) {
        stop();
        throw listenError(e, opts.host, opts.port);
      }
      if (stopping)
        server.close(() => stopped()); // stopped while it was starting
      else {
        const { address, port: p } = server.address() as AddressInfo;
        await outText(
          `eidkit tags: serving http://${address.includes(':') ? `[${address}]` : address}:${p}/tag/<network_id>/sas.js (pid ${process.pid}: kill -HUP ${process.pid} reloads ${opts.networks})\n`,
        );
      }
      await done;
    });
}
