// Side-by-side timing shared by the benchmarks: interleaved rounds, each timing every case back to back, so a
// busy machine slows both sides of a ratio alike.

/** Mean time per call of `fn` over `n` calls, in nanoseconds: wall time, or this process's CPU time with `cpu`. */
export function time(fn, n, cpu = false) {
  if (cpu) {
    // CPU time: on a machine shared with other jobs, time spent waiting for a core would otherwise land on
    // whichever case happened to be running.
    const t0 = process.cpuUsage();
    for (let i = 0; i < n; i++) fn();
    const t = process.cpuUsage(t0);
    return ((t.user + t.system) * 1000) / n;
  }
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) fn();
  return Number(process.hrtime.bigint() - t0) / n;
}

/**
 * Runs `cases` (name → function) in `rounds` interleaved rounds of `iterations` calls after a warm-up; returns per
 * case the time per call of each round (`perOp`) and its ratio to the first case's in the same round (`ratios`).
 */
export function interleavedRounds(cases, { rounds, iterations, warmup, cpu = false }) {
  const names = Object.keys(cases);
  for (const fn of Object.values(cases)) time(fn, warmup, cpu);
  globalThis.gc?.(); // once, before measuring: a forced collection inside the rounds only adds outliers
  const perOp = Object.fromEntries(names.map((k) => [k, []]));
  const ratios = Object.fromEntries(names.map((k) => [k, []]));
  for (let r = 0; r < rounds; r++) {
    // Alternate the order each round so neither side always runs first.
    const order = r % 2 ? [...names].reverse() : names;
    const t = {};
    for (const name of order) t[name] = time(cases[name], iterations, cpu);
    for (const name of names) {
      perOp[name].push(t[name]);
      ratios[name].push(t[name] / t[names[0]]);
    }
  }
  return { perOp, ratios };
}

/** The `q` quantile (0 to 1) of `xs`; 0.5 is the median. */
export const quantile = (xs, q) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) * q)];
