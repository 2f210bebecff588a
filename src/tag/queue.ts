/**
 * The GPT / Prebid command-queue convention (docs/wire-format.md#the-command-queue): the page pushes
 * functions onto `sas.cmd` before the tag loads; the tag runs them in order, each isolated, then replaces `push`
 * so later pushes run at once and return a count like `Array.prototype.push`.
 */

/** A command queue: an array the page pushes functions onto. */
export type CommandQueue = unknown[];

/**
 * Hands every queued entry in order to `run` (which skips non-functions and guards the rest), then makes `queue.push`
 * run its arguments at once. Commands pushed while the queue drains run in order after the ones already queued. Returns
 * the queue.
 * @example drainQueue(sas.cmd, (fn) => guard(fn, 'sas.cmd'))
 */
export function drainQueue(queue: CommandQueue, run: (cmd: unknown) => void): CommandQueue {
  let count = 0;
  const exec = (cmd: unknown) => {
    count++;
    run(cmd);
  };
  // Commands pushed while the queue drains land at its end (`push` is still the array's own) and run in turn.
  while (queue.length) exec(queue.shift());
  queue.push = (...cmds: unknown[]) => {
    cmds.forEach(exec);
    return count;
  };
  return queue;
}
