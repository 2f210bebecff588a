// The e2e suites' WebKit engine (test/e2e/support/engines/webkit.ts) on a busy machine: a worker that dies leaves no
// Xvfb, driver or browser behind, and a browser that cannot get the inspector port WebKitWebDriver chose for it (the
// driver binds port 0, closes it and starts the browser on it: anything may take it meanwhile) no longer holds its
// session for ever. Needs WebKitWebDriver and Xvfb (`npm test` installs them first).
import { afterEach, describe, expect, test } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findMiniBrowser, launchWebKit } from '../e2e/support/engines/webkit.js';
import { descendants, guarded } from '../e2e/support/engines/processes.js';

const dirs: string[] = [];
afterEach(() => {
  delete process.env.WEBKIT_MINIBROWSER;
  dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true }));
});

/** True while a process runs (a zombie waiting for its parent counts as gone). */
function alive(pid: number): boolean {
  try {
    return !/^\S+ \(.*\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

describe('processes the WebKit engine starts', () => {
  test('end with their worker even when it cannot clean up (its pipe to the guard closes, as at SIGKILL)', async () => {
    // A command that starts a child of its own, as WebKitWebDriver starts the browser.
    const g = guarded('sh', ['-c', 'sleep 300 & sleep 300']);
    await new Promise((r) => setTimeout(r, 300));
    const group = descendants(g.proc.pid!);
    expect(group.length).toBeGreaterThanOrEqual(3); // sh and its two sleeps
    // The worker is killed: the kernel closes its end of the guard's stdin.
    g.proc.stdin!.destroy();
    await expect.poll(() => group.filter(alive), { timeout: 5_000 }).toEqual([]);
  });

  test('Xvfb, the driver and the browser of a WebKit launcher all run under such a guard', async () => {
    const launcher = await launchWebKit();
    try {
      const page = await launcher.newPage({ thirdPartyStorage: false });
      await page.goto('about:blank');
      const cmd = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      const parent = (pid: number) =>
        Number(
          readFileSync(`/proc/${pid}/stat`, 'utf8')
            .replace(/^.*\) \S+ /, '')
            .split(' ')[0],
        );
      const guardedBy = (pid: number): boolean => {
        for (let p = parent(pid); p > 1; p = parent(p)) if (cmd(p).includes('process-guard.mjs')) return true;
        return false;
      };
      const engine = descendants(process.pid).filter(
        (pid) =>
          !cmd(pid).includes('process-guard.mjs') &&
          /Xvfb|WebKitWebDriver|MiniBrowser|WebKitWebProcess|WebKitNetworkProcess/.test(cmd(pid)),
      );
      expect(engine.length).toBeGreaterThanOrEqual(4);
      expect(engine.filter((pid) => !guardedBy(pid)).map(cmd)).toEqual([]);
      await page.close();
    } finally {
      await launcher.close();
    }
  }, 60_000);
});

describe('a new WebKit session', () => {
  test('whose inspector port another socket took starts all the same, on another driver', async () => {
    const miniBrowser = findMiniBrowser();
    expect(miniBrowser && existsSync(miniBrowser)).toBe(true);
    const dir = mkdtempSync(join(tmpdir(), 'eidkit-webkit-'));
    dirs.push(dir);
    // The browser binary, wrapped: the first time, another process listens on the inspector port first.
    const wrapper = join(dir, 'browser.sh');
    writeFileSync(
      wrapper,
      `#!/bin/sh
if [ ! -e "${dir}/taken" ]; then
  touch "${dir}/taken"
  port=\${WEBKIT_INSPECTOR_SERVER##*:}
  "${process.execPath}" -e "require('net').createServer(() => {}).listen($port, '127.0.0.1'); setTimeout(() => {}, 60000)" &
  echo $! > "${dir}/thief"
  sleep 0.5
fi
exec "${miniBrowser}" "$@"
`,
    );
    chmodSync(wrapper, 0o755);
    process.env.WEBKIT_MINIBROWSER = wrapper;
    const launcher = await launchWebKit();
    try {
      const started = Date.now();
      const page = await launcher.newPage({ thirdPartyStorage: false });
      expect(Date.now() - started).toBeLessThan(30_000);
      await page.goto('about:blank');
      expect(await page.evaluate(() => 6 * 7)).toBe(42);
      expect(existsSync(join(dir, 'taken'))).toBe(true);
      await page.close();
    } finally {
      await launcher.close();
      const thief = Number(readFileSync(join(dir, 'thief'), 'utf8'));
      if (alive(thief)) process.kill(thief, 'SIGKILL');
    }
  }, 60_000);
});
