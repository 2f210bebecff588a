/**
 * Terminal renderings of plans and apply results: one aligned line per key, field changes indented below it,
 * a quota line and a summary. Plain ASCII markers (+ ~ - = ! ?) so the output reads the same in any terminal
 * and log. `--json` prints the objects themselves instead.
 */
import type { ApplyItem, ApplyResult } from './apply.js';
import type { Plan, PlanAction, PlanItem } from './plan.js';
import { terminalSafe } from '../../core/terminal.js';

const MARK: Record<PlanAction, string> = {
  create: '+',
  update: '~',
  pause: '~',
  resume: '~',
  delete: '-',
  'no-change': '=',
  refused: '!',
  orphan: '?',
};

const MAX_VALUE = 80;

/** A value as shown in a diff line: JSON, cut at 80 characters. */
export function showValue(value: unknown): string {
  const text = value === undefined ? 'null' : JSON.stringify(value);
  return text.length > MAX_VALUE ? `${text.slice(0, MAX_VALUE - 1)}…` : text;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

function detail(item: PlanItem): string {
  const parts: string[] = [];
  if (item.name !== undefined) parts.push(JSON.stringify(item.name));
  if (item.deferredUntil)
    parts.push(`deferred to ${item.deferredUntil} (daily ${item.action === 'create' ? 'creation' : 'update'} quota)`);
  if (item.drift) parts.push('changed outside eidkit since the last apply');
  if (item.reason) parts.push(item.reason);
  return parts.join('  ');
}

/** Aligned rows; every field and sub-line is terminal-safe (a name or server message cannot act on the terminal). */
function rows(raw: [string, string, string, string, string[]][]): string {
  const lines = raw.map(
    (l) => [...l.slice(0, 4).map((f) => terminalSafe(f as string)), l[4].map((s) => terminalSafe(s))] as typeof l,
  );
  const w = [1, 2, 3].map((i) => Math.max(0, ...lines.map((l) => (l[i] as string).length)));
  return lines
    .map(([mark, action, key, id, sub]) => {
      const last = sub.shift() ?? '';
      const head = `${mark} ${action.padEnd(w[0])}  ${key.padEnd(w[1])}  ${id.padEnd(w[2])}  ${last}`.trimEnd();
      return [head, ...sub.map((s) => `      ${s}`)].join('\n');
    })
    .join('\n');
}

/** The plan as text: one line per key, then the quota and the summary. */
export function formatPlan(plan: Plan, options: { showUnchanged?: boolean } = {}): string {
  const out: string[] = [];
  for (const issue of plan.issues) out.push(terminalSafe(`! file      ${issue.path || '(file)'}: ${issue.message}`));
  const shown = plan.items.filter((i) => options.showUnchanged !== false || i.action !== 'no-change');
  const lines = shown.map((item): [string, string, string, string, string[]] => {
    const sub = [detail(item)];
    for (const c of item.changes ?? []) sub.push(`${c.field}: ${showValue(c.from)} -> ${showValue(c.to)}`);
    for (const i of item.issues ?? []) sub.push(`${i.path || '(deal)'}: ${i.message}`);
    for (const w of item.warnings ?? []) sub.push(`warning: ${w.path}: ${w.message}`);
    return [
      MARK[item.action],
      item.action === 'no-change' ? 'no change' : item.action,
      item.key,
      item.id !== undefined ? `#${item.id}` : '',
      sub,
    ];
  });
  if (lines.length) out.push(rows(lines));
  const q = plan.quota;
  out.push('');
  out.push(
    `Quota today (${q.day} UTC, resets ${q.resetsAt}): ${q.creationsLeft} of ${q.creationsPerDay} creations and ${q.updatesLeft} of ${q.updatesPerDay} updates left (estimated from the live deals)`,
  );
  const s = plan.summary;
  if (!plan.changes && !s.refused && !plan.issues.length) {
    out.push(`No changes: the live deals match ${plan.source}.`);
  } else {
    const days = new Map<string, number>();
    for (const i of plan.items) if (i.deferredUntil) days.set(i.deferredUntil, (days.get(i.deferredUntil) ?? 0) + 1);
    const deferred = s.deferred
      ? ` (${[...days]
          .sort()
          .map(([d, n]) => `${n} on ${d}`)
          .join(', ')})`
      : '';
    out.push(
      `Plan: ${s.create} to create, ${s.update} to update, ${s.pause} to pause, ${s.resume} to resume, ${s.delete} to delete, ` +
        `${s.noChange} unchanged, ${s.refused} refused, ${s.orphan} not in the file, ${s.deferred} deferred${deferred}.`,
    );
  }
  return out.join('\n') + '\n';
}

const DONE: Record<PlanAction, string> = {
  create: 'created',
  update: 'updated',
  pause: 'paused',
  resume: 'resumed',
  delete: 'deleted',
  'no-change': 'unchanged',
  refused: 'refused',
  orphan: 'left',
};

/** One apply outcome as a phrase: `created #100027 (recovered by key)`, `deferred to 2026-11-25`, `failed: …`. */
export function describeApplyItem(item: ApplyItem): string {
  const id = item.id !== undefined ? ` #${item.id}` : '';
  if (item.status === 'done')
    return `${DONE[item.action]}${id}${item.recovered ? ' (its answer was lost; found by its key)' : ''}`;
  if (item.status === 'deferred')
    return `deferred to ${item.deferredUntil} (daily ${item.action === 'create' ? 'creation' : 'update'} quota)`;
  if (item.status === 'skipped') return 'skipped: invalid (--skip-invalid)';
  return `failed: ${item.error?.message ?? 'unknown error'}`;
}

/** The apply result as text: one line per piece of work, then the summary. */
export function formatApplyResult(result: ApplyResult, source: string): string {
  const lines = result.items.map((i): [string, string, string, string, string[]] => [
    i.status === 'done' ? MARK[i.action] : i.status === 'failed' ? '!' : '>',
    i.status === 'done' ? DONE[i.action] : i.status,
    i.key,
    i.id !== undefined ? `#${i.id}` : '',
    [
      i.status === 'done'
        ? i.recovered
          ? 'its answer was lost; found by its key'
          : ''
        : describeApplyItem(i).replace(/^\w+:? ?/, ''),
    ],
  ]);
  const s = result.summary;
  const out = lines.length ? [rows(lines), ''] : [];
  out.push(
    `Applied ${source}: ${s.created} created${s.recovered ? ` (${s.recovered} recovered by key)` : ''}, ${s.updated} updated, ${s.paused} paused, ${s.resumed} resumed, ${s.deleted} deleted; ` +
      `${s.deferred} deferred, ${s.failed} failed, ${s.skipped} skipped.`,
  );
  if (s.deferred)
    out.push(
      `${plural(s.deferred, 'change')} wait for the daily quota: run apply again on ${result.nextDay} (UTC) or later.`,
    );
  else if (result.complete) out.push('Done: a plan now shows no changes.');
  return out.join('\n') + '\n';
}
