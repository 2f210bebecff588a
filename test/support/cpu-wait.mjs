// How long a process waited for a CPU (ready to run, no core free): on this 2-core machine, shared with other jobs, a
// process can wait longer than a latency budget through no fault of its own. Tests with a latency budget measure it
// and hold the code to its budget on the time it had a core (the fleet tests, the fuzz acceptance of bombs).
import { readFileSync } from 'node:fs';
/**
 * How long process `pid` has waited for a CPU since it started, in ms: the run-queue wait of its main thread
 * (`/proc/<pid>/schedstat`, second field, ns). NaN where it cannot be read. On a loaded machine a process can be
 * ready to run and not get a core for longer than a take's timeout: the difference of two readings says how long.
 */
export function runDelayMs(pid = 'self') {
  try {
    return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[1]) / 1e6;
  } catch {
    return NaN;
  }
}

/**
 * Samples the run-queue wait of each process of `pids` (`'self'` for this one) every 10 ms until `stop()`, which
 * returns the most any one of them waited for a CPU within any `windowMs` (a take's timeout: what can make a take late
 * is the wait within its own window, not the phase's total). A sample the load itself delayed past the window counts
 * its whole gap.
 */
export function sampleWaits(pids, windowMs = 100) {
  const series = pids.map(() => []);
  const tick = () => {
    const t = performance.now();
    pids.forEach((pid, i) => series[i].push([t, runDelayMs(pid)]));
  };
  tick();
  const timer = setInterval(tick, 10);
  return {
    stop() {
      clearInterval(timer);
      tick();
      let most = 0;
      for (const s of series) {
        for (let i = 0, j = 1; j < s.length; j++) {
          while (i < j - 1 && s[j][0] - s[i][0] > windowMs) i++;
          const waited = s[j][1] - s[i][1];
          if (Number.isFinite(waited)) most = Math.max(most, waited);
        }
      }
      return most;
    },
  };
}
