// The heap of this process after full garbage collections, for tests that bound what a structure keeps.
// `gc` is exposed at run time (vitest workers do not start with --expose-gc).
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Bytes of heap in use after two full collections (the second frees what the first's finalizers released). */
export function heapAfterGc(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

/** Bytes as MiB with one decimal, for messages. */
export const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
