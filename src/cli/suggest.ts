/** "Did you mean …?" for a mistyped name. */

/** Edit distance (insertions, deletions, substitutions) between two strings. */
function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++)
      row[j] = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length];
}

/** The known name closest to `wanted` (case-insensitive, at most 2 edits or a prefix of it), or undefined. */
export function closestName(wanted: string, known: readonly string[]): string | undefined {
  const w = wanted.toLowerCase();
  let best: { name: string; d: number } | undefined;
  for (const name of known) {
    const n = name.toLowerCase();
    const d = n.startsWith(w) && w.length >= 3 ? 1 : distance(w, n);
    if (d <= 2 && (!best || d < best.d)) best = { name, d };
  }
  return best?.name;
}
