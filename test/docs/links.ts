/**
 * Relative links in the docs that point nowhere: a missing file, a file outside the repository, a missing heading,
 * a reference link without its definition.
 */
import { existsSync, statSync } from 'node:fs';
import { join, posix } from 'node:path';
import {
  anchorsOf,
  linksOf,
  markdownFiles,
  readMarkdown,
  undefinedReferencesOf,
  type MarkdownDoc,
} from './markdown.js';

/** A link that points nowhere. */
export interface BrokenLink {
  /** `README.md:42`. */
  at: string;
  target: string;
  reason: string;
}

/** `README.md:42: docs/x.md#y: no heading "y" in docs/x.md`, one a line. */
export function formatBroken(list: BrokenLink[]): string {
  return list.map((b) => `${b.at}: ${b.target}: ${b.reason}`).join('\n');
}

// A scheme (`https:`, `mailto:`) or a protocol-relative `//host` is not ours to check offline.
const EXTERNAL = /^(?:[a-z][a-z0-9+.-]*:|\/\/)/i;

/** Checks every relative link of README.md and docs/**\/*.md under `root`. */
export function brokenLinks(root: string): BrokenLink[] {
  const docs = new Map<string, MarkdownDoc>();
  const load = (file: string) => {
    if (!docs.has(file)) docs.set(file, readMarkdown(root, file));
    return docs.get(file)!;
  };
  const broken: BrokenLink[] = [];
  for (const file of markdownFiles(root)) {
    for (const { target, line } of linksOf(load(file))) {
      if (!target || EXTERNAL.test(target)) continue;
      const reason = checkTarget(root, file, target, load);
      if (reason) broken.push({ at: `${file}:${line}`, target, reason });
    }
    for (const { target, line } of undefinedReferencesOf(load(file))) {
      broken.push({ at: `${file}:${line}`, target, reason: `no link definition ${target}: … in ${file}` });
    }
  }
  return broken;
}

function checkTarget(
  root: string,
  from: string,
  target: string,
  load: (file: string) => MarkdownDoc,
): string | undefined {
  const hash = target.indexOf('#');
  const rawPath = hash < 0 ? target : target.slice(0, hash);
  const anchor = hash < 0 ? undefined : decodeURIComponent(target.slice(hash + 1));
  let path: string;
  try {
    path = decodeURIComponent(rawPath.split('?')[0]);
  } catch {
    return 'cannot be decoded';
  }
  // GitHub reads `/x` from the repository's root and `x` from the linking file's folder.
  const resolved =
    path === '' ? from : posix.normalize(path.startsWith('/') ? path.slice(1) : posix.join(posix.dirname(from), path));
  if (resolved === '..' || resolved.startsWith('../'))
    return 'points outside the repository (readers on GitHub or npm do not have it)';
  const full = join(root, resolved);
  if (!existsSync(full)) return `${resolved} does not exist`;
  if (anchor === undefined || anchor === '') return undefined;
  if (!resolved.endsWith('.md') || statSync(full).isDirectory()) return undefined; // `#L10` line anchors of source files
  const anchors = anchorsOf(load(resolved.replace(/^\.\//, '')));
  return anchors.has(anchor) ? undefined : `no heading "${anchor}" in ${resolved}`;
}
