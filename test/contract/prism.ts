/**
 * Stoplight Prism as a validating proxy in front of a listening simulator, the way docs/simulator.md tells users to
 * run it: `prism proxy <document> <upstream> --errors`, on a free loopback port, started and stopped by the test. With
 * `--errors` Prism refuses a request its document refuses (422, or 404 / 405 for a path or method it has not) and
 * answers 500 for a response off the document, each as a problem document of its own `type`.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const CLI = fileURLToPath(new URL('../../node_modules/@stoplight/prism-cli/dist/index.js', import.meta.url));
/** The `type` of every answer Prism writes itself (`…#UNPROCESSABLE_ENTITY`, `…#VIOLATIONS`, …). */
export const PRISM_ERROR = 'https://stoplight.io/prism/errors#';

/** A running Prism proxy. */
export interface PrismProxy {
  /** `http://127.0.0.1:<port>` */
  url: string;
  close(): Promise<void>;
}

/** A port that was free a moment ago (Prism takes a port number, not 0). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** Starts `prism proxy` over `document` (written to a temporary file) in front of `upstream`. */
export async function startPrism(document: Record<string, unknown>, upstream: string): Promise<PrismProxy> {
  const dir = mkdtempSync(join(tmpdir(), 'eidkit-prism-'));
  const file = join(dir, 'deal-api.json');
  writeFileSync(file, JSON.stringify(document));
  const port = await freePort();
  // No CORS headers of Prism's own (they are not the simulator's answer); its log on stdout is drained, not kept.
  const args = [CLI, 'proxy', file, upstream, '--errors', '--cors', 'false', '-h', '127.0.0.1', '-p', String(port)];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  const keep = (d: Buffer) => (log = (log + String(d)).slice(-4000));
  child.stderr.on('data', keep);
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const close = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`Prism did not start in 60 s: ${log}`)), 60_000);
      child.stdout.on('data', (d: Buffer) => {
        keep(d);
        if (log.includes('Prism is listening on')) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`Prism exited ${code}: ${log}`));
      });
    });
  } catch (e) {
    await close();
    throw e;
  }
  return { url: `http://127.0.0.1:${port}`, close };
}
