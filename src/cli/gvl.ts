/**
 * `eidkit gvl fetch`: downloads the IAB Global Vendor List (the newest, or a version from the archive), checks it,
 * and saves it where the loader reads it (`createGvlLoader({ dir })`), for servers without outbound access.
 * Registered on the program by ./index.ts.
 */
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { mkdir, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import {
  fetchVendorList,
  GVL_ARCHIVE_URL,
  GVL_FETCH_DEFAULTS,
  GVL_LATEST_URL,
  GvlFetchError,
  writeFileAtomic,
} from '../adserver/consent/index.js';
import { EXIT } from './exit-codes.js';
import { CliError, examples, outJson, outText } from './output.js';

const whole = (name: string, max: number) => (raw: string) => {
  if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > max) {
    throw new InvalidArgumentError(`${name} must be a whole number from 1 to ${max}`);
  }
  return Number(raw);
};

/** The exit code of a failed download: the server's error, a list refused, or the network. */
const exitOf = (e: GvlFetchError) =>
  e.kind === 'status' ? EXIT.API : e.kind === 'invalid' || e.kind === 'too-large' ? EXIT.VALIDATION : EXIT.NETWORK;

/** Where the list goes: into a folder as `vendor-list-v{N}.json` (the loader's name), or to the file named. */
async function targetOf(out: string, version: number): Promise<string> {
  const path = resolve(out);
  const isDir = out.endsWith('/') || (await stat(path).catch(() => undefined))?.isDirectory();
  if (!isDir) return path;
  await mkdir(path, { recursive: true });
  return join(path, `vendor-list-v${version}.json`);
}

/** Adds `eidkit gvl fetch` to the program. */
export function registerGvlCommands(program: Command): void {
  const gvl = program
    .command('gvl')
    .description('the IAB Global Vendor List the forwarding policy checks (docs/ad-server.md)');

  const fetch = gvl
    .command('fetch')
    .description('download the Global Vendor List (v3), check it, and save it for createGvlLoader({ dir })')
    .option('--url <url>', 'where the list is (default: the IAB newest, or its archive with --list-version)')
    .option('--list-version <n>', 'a version from the archive rather than the newest', whole('--list-version', 4095))
    .option('--out <path>', 'a folder (saved as vendor-list-v<N>.json) or a file', '.')
    .option('--timeout <ms>', 'deadline of the download', whole('--timeout', 600_000), GVL_FETCH_DEFAULTS.timeoutMs)
    .option('--json', 'print what was saved as JSON')
    .action(async (opts: { url?: string; listVersion?: number; out: string; timeout: number; json?: boolean }) => {
      const url =
        opts.url ??
        (opts.listVersion ? GVL_ARCHIVE_URL.replace('{version}', String(opts.listVersion)) : GVL_LATEST_URL);
      let fetched;
      try {
        fetched = await fetchVendorList(url, { timeoutMs: opts.timeout });
      } catch (e) {
        if (e instanceof GvlFetchError) throw new CliError(e.message, exitOf(e));
        throw e;
      }
      const { list, text } = fetched;
      if (opts.listVersion && list.version !== opts.listVersion) {
        throw new CliError(`${url}: holds version ${list.version}, not ${opts.listVersion}`, EXIT.VALIDATION);
      }
      const path = await targetOf(opts.out, list.version);
      await writeFileAtomic(path, text);
      const saved = {
        path,
        version: list.version,
        vendors: list.vendorCount,
        deleted: list.deletedCount,
        lastUpdated: list.lastUpdated,
        bytes: Buffer.byteLength(text),
      };
      if (opts.json) await outJson(saved);
      else
        await outText(
          `saved Global Vendor List version ${saved.version} (${saved.vendors} vendors, ${saved.deleted} deleted, ` +
            `updated ${saved.lastUpdated}, ${saved.bytes} bytes) to ${path}\n`,
        );
    });
  examples(
    fetch,
    'eidkit gvl fetch --out /var/cache/eidkit/gvl/',
    'eidkit gvl fetch --list-version 150 --out /var/cache/eidkit/gvl/',
    'eidkit gvl fetch --url https://mirror.example/vendor-list.json --out vendor-list.json',
  );
}
