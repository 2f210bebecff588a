/** Validation paths in words. Pure: no DOM, no `node:*`. */

/** Formats a validation (zod) path as `a.b[0].c`; an empty path is the empty string. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else out += out === '' ? String(seg) : `.${String(seg)}`;
  }
  return out;
}
