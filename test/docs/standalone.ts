/**
 * References that point outside the repository (documents a clone does not have, issue numbers) and links from
 * code comments to guide sections that do not exist. The repository stands alone: comments say why and link
 * `docs/…` sections, where the protocol facts are stated.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { anchorsOf, readMarkdown } from './markdown.js';

/** One kind of reference a clone cannot follow, and what to write instead. */
export interface OutsideRule {
  name: string;
  pattern: RegExp;
  instead: string;
}

// The patterns are written so that this file does not match them itself.
/** Every kind of reference that points outside the repository. */
export const OUTSIDE_RULES: OutsideRule[] = [
  {
    name: 'path to the specifications folder',
    pattern: /shared\/(?:spec|reference)\b/,
    instead: 'link the guide section (docs/wire-format.md, docs/deal-rules.md)',
  },
  {
    name: 'specification file name',
    pattern: /extended-ids\.md|deal-api\.md|domain-note[s]/,
    instead: 'link the guide section (docs/wire-format.md, docs/deal-rules.md)',
  },
  {
    name: 'issue number',
    pattern: /\bissues? #?\d+\b/i,
    instead: 'say why; git history says when',
  },
  {
    name: 'specification section number',
    pattern: /\bspec(?:ification)?(?: sections?)? §?\d/i,
    instead: 'link the guide section',
  },
  {
    name: 'section sign without a public standard',
    // A section of an RFC or of OpenRTB is a public standard anyone can read; a bare section number is not.
    pattern: /(?<!\b(?:RFC \d+|OpenRTB [\d.]+),? ?)§ ?\d/,
    instead: 'link the guide section, or name the public standard before the section sign',
  },
  {
    name: 'comment opening with a section number',
    // `// 2.1: exactly one of…`: a numbered section of a document the clone does not have.
    pattern: /^\s*(?:\/\/|\*)\s+\d+\.\d+(?: \/ [\d.]+)?:/,
    instead: 'say the rule in words and link the guide section',
  },
];

/** A line that points outside the repository. */
export interface OutsideReference {
  /** `src/x.ts:12`. */
  at: string;
  rule: string;
  text: string;
}

/** The files git would search: tracked ones, and new ones not ignored. */
export function repositoryFiles(root: string): string[] {
  const out = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], { cwd: root });
  return out
    .toString('utf8')
    .split('\0')
    .filter((f) => f !== '' && existsSync(join(root, f)));
}

/** The rules a line breaks, by name. */
export function rulesBroken(line: string): string[] {
  return OUTSIDE_RULES.filter((r) => r.pattern.test(line)).map((r) => r.name);
}

/** Every line of `files` under `root` that breaks one of {@link OUTSIDE_RULES}. */
export function outsideReferences(root: string, files: string[]): OutsideReference[] {
  const found: OutsideReference[] = [];
  for (const file of files) {
    const text = readFileSync(join(root, file), 'utf8');
    if (text.includes('\0')) continue; // binary
    text.split('\n').forEach((line, i) => {
      for (const rule of rulesBroken(line))
        found.push({ at: `${file}:${i + 1}`, rule, text: line.trim().slice(0, 160) });
    });
  }
  return found;
}

/** A `docs/x.md#anchor` written in a code file whose guide or heading does not exist. */
export interface DeadGuideLink {
  at: string;
  target: string;
  reason: string;
}

const GUIDE_LINK = /\bdocs\/([\w-]+\.md)(?:#([\w-]+))?/g;

/** Every `docs/<guide>.md#<anchor>` written outside the Markdown files (comments, messages) that points nowhere. */
export function deadGuideLinks(root: string, files: string[]): DeadGuideLink[] {
  const anchors = new Map<string, Set<string> | undefined>();
  const anchorsIn = (guide: string) => {
    if (!anchors.has(guide)) {
      const file = `docs/${guide}`;
      anchors.set(guide, existsSync(join(root, file)) ? anchorsOf(readMarkdown(root, file)) : undefined);
    }
    return anchors.get(guide);
  };
  const dead: DeadGuideLink[] = [];
  for (const file of files.filter((f) => !f.endsWith('.md'))) {
    readFileSync(join(root, file), 'utf8')
      .split('\n')
      .forEach((line, i) => {
        for (const [target, guide, anchor] of line.matchAll(GUIDE_LINK)) {
          const known = anchorsIn(guide);
          const reason = !known
            ? `docs/${guide} does not exist`
            : anchor && !known.has(anchor)
              ? `no heading "${anchor}" in docs/${guide}`
              : '';
          if (reason) dead.push({ at: `${file}:${i + 1}`, target, reason });
        }
      });
  }
  return dead;
}
