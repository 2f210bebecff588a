// Runs one command in a process group of its own and ends the whole group (the command and everything it started)
// when its parent goes: when the parent closes this guard's stdin, or dies, even by SIGKILL (the kernel closes the
// pipe then). The e2e engines start Xvfb and WebKitWebDriver through it, so a Playwright worker that is killed leaves
// no display server, driver or browser behind to load the machine for the tests after it.
//
// Usage: node process-guard.mjs <command> [args…]   (stdout and stderr are the command's)
import { spawn } from 'node:child_process';

const [command, ...args] = process.argv.slice(2);
const child = spawn(command, args, { detached: true, stdio: ['ignore', 'inherit', 'inherit'] });

let ending = false;
/** Ends the group: SIGTERM, then SIGKILL for whatever is left a moment later. */
function end() {
  if (ending) return;
  ending = true;
  const kill = (signal) => {
    try {
      process.kill(-child.pid, signal);
    } catch {
      // the group is gone
    }
  };
  kill('SIGTERM');
  setTimeout(() => {
    kill('SIGKILL');
    process.exit(0);
  }, 500).unref();
}

process.stdin.on('end', end);
process.stdin.on('close', end);
process.stdin.resume();
process.on('SIGTERM', end);
process.on('SIGINT', end);
child.on('error', (e) => {
  process.stderr.write(`process-guard: ${command}: ${e.message}\n`);
  process.exit(127);
});
child.on('exit', (code, signal) => {
  // The command ended (by itself, or at SIGTERM): what it started goes with it, then the guard says how it ended.
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // nothing left
  }
  process.exit(code ?? (signal ? 1 : 0));
});
