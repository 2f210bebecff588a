import { describe, expect, test } from 'vitest';
import { drainQueue } from '../../src/tag/queue.js';

describe('drainQueue', () => {
  const runAll = (log: unknown[]) => (cmd: unknown) => (typeof cmd === 'function' ? cmd() : log.push(['skipped', cmd]));

  test('runs queued commands in order, then runs each later push at once', () => {
    const log: unknown[] = [];
    const q: unknown[] = [() => log.push(1), () => log.push(2)];
    drainQueue(q, runAll(log));
    expect(log).toEqual([1, 2]);
    q.push(() => log.push(3));
    expect(log).toEqual([1, 2, 3]);
  });

  test('runs commands pushed while draining after the ones already queued', () => {
    const log: unknown[] = [];
    const q: unknown[] = [];
    q.push(
      () => {
        log.push('a');
        q.push(() => log.push('c'));
      },
      () => log.push('b'),
    );
    drainQueue(q, runAll(log));
    expect(log).toEqual(['a', 'b', 'c']);
  });

  test('push returns a running count like Array.prototype.push', () => {
    const q: unknown[] = [() => 0, () => 0];
    drainQueue(q, () => {});
    expect(q.push(() => 0)).toBe(3);
    expect(
      q.push(
        () => 0,
        () => 0,
      ),
    ).toBe(5);
  });

  test('hands non-function entries to the runner, which decides to skip them', () => {
    const log: unknown[] = [];
    drainQueue([42, null, () => log.push('fn')], runAll(log));
    expect(log).toEqual([['skipped', 42], ['skipped', null], 'fn']);
  });
});
