/**
 * The guides' whole-program server examples, run as written: a ```js block is copied out of a guide into a file
 * inside the repository (so `eidkit/adserver` resolves to this package's own dist/, as it would from node_modules)
 * and started with `node` on a free loopback port. Used by the unit tests (test/docs/examples.test.ts) and by the
 * browser tests (test/e2e/doc-examples.spec.ts), which call the examples from real pages.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** The first ```js block after `heading` in `docs/<guide>`. */
export function exampleAfter(guide: string, heading: string): string {
  const text = readFileSync(join(root, 'docs', guide), 'utf8');
  const from = text.indexOf(heading);
  const m = /```js\n([\s\S]*?)```/.exec(text.slice(from));
  if (from < 0 || !m) throw new Error(`no js example after ${heading} in ${guide}`);
  return m[1];
}

/** A running example: its base URL, what it printed so far, and how to stop it. */
export interface RunningExample {
  /** `http://127.0.0.1:<port>`, from the line the example prints when it listens. */
  url: string;
  /** Its standard output so far. */
  stdout: () => string;
  /** Stops the process and removes its file. */
  stop: () => Promise<void>;
}

let count = 0;

/**
 * Starts `source` (a whole program that prints `listening on http://127.0.0.1:<port>` on stderr) with `env` added
 * to the environment and `PORT=0`; resolves once it listens.
 */
export async function startExample(source: string, env: Record<string, string> = {}): Promise<RunningExample> {
  const dir = join(root, '.test-results', 'examples');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `example-${process.pid}-${++count}.mjs`);
  writeFileSync(file, source);
  const child = spawn(process.execPath, [file], {
    env: { ...process.env, PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += String(d)));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(file, { force: true });
  };
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`not listening after 20 s: ${stderr}`)), 20_000);
      child.stderr.on('data', (d: Buffer) => {
        stderr += String(d);
        const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stderr);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]);
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`exited ${code}: ${stderr}`));
      });
    });
    return { url, stdout: () => stdout, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}
