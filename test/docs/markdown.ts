/** The project's Markdown as the docs checks see it: which files, their headings' anchors, links and code blocks. */
import MarkdownIt, { type Token } from 'markdown-it';
import GithubSlugger from 'github-slugger';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const md = new MarkdownIt({ html: true });

/** The documentation a reader browses: README.md and docs/**\/*.md, except the generated API reference (docs/api). */
export function markdownFiles(root: string): string[] {
  const files = existsSync(join(root, 'README.md')) ? ['README.md'] : [];
  if (existsSync(join(root, 'docs'))) {
    const inDocs = readdirSync(join(root, 'docs'), { recursive: true, encoding: 'utf8' })
      .map((f) => `docs/${f.replaceAll('\\', '/')}`)
      .filter((f) => f.endsWith('.md') && !f.startsWith('docs/api/'));
    files.push(...inDocs.sort());
  }
  return files;
}

/** A parsed Markdown file. */
export interface MarkdownDoc {
  /** Path relative to the root, with forward slashes. */
  file: string;
  tokens: Token[];
}

/** Parses a file under `root`. */
export function readMarkdown(root: string, file: string): MarkdownDoc {
  return { file, tokens: md.parse(readFileSync(join(root, file), 'utf8'), {}) };
}

/** The anchors a link can target in a document: GitHub's heading slugs (with `-1`, `-2` for repeats) and HTML ids. */
export function anchorsOf(doc: MarkdownDoc): Set<string> {
  const slugger = new GithubSlugger();
  const anchors = new Set<string>();
  doc.tokens.forEach((token, i) => {
    if (token.type === 'heading_open') {
      const inline = doc.tokens[i + 1];
      const text = (inline.children ?? [])
        .filter((c) => c.type === 'text' || c.type === 'code_inline')
        .map((c) => c.content)
        .join('');
      anchors.add(slugger.slug(text));
    }
  });
  const html = [...doc.tokens, ...doc.tokens.flatMap((t) => t.children ?? [])].filter(
    (t) => t.type === 'html_block' || t.type === 'html_inline',
  );
  for (const token of html)
    for (const m of token.content.matchAll(/\b(?:id|name)\s*=\s*["']([^"']+)["']/g)) anchors.add(m[1]);
  return anchors;
}

/** A link target as written, with the 1-based line of the block it stands in. */
export interface MarkdownLink {
  target: string;
  line: number;
}

/** Every link and image target in a document (Markdown syntax, reference definitions, and `href`/`src` in HTML). */
export function linksOf(doc: MarkdownDoc): MarkdownLink[] {
  const links: MarkdownLink[] = [];
  const fromHtml = (html: string, line: number) => {
    for (const m of html.matchAll(/\b(?:href|src)\s*=\s*["']([^"']+)["']/g)) links.push({ target: m[1], line });
  };
  for (const token of doc.tokens) {
    const line = (token.map?.[0] ?? 0) + 1;
    if (token.type === 'html_block') fromHtml(token.content, line);
    for (const child of token.children ?? []) {
      if (child.type === 'link_open') links.push({ target: String(child.attrGet('href') ?? ''), line });
      else if (child.type === 'image') links.push({ target: String(child.attrGet('src') ?? ''), line });
      else if (child.type === 'html_inline') fromHtml(child.content, line);
    }
  }
  return links;
}

/**
 * Reference links whose label has no definition (`[text][label]`, `[label][]` with no `[label]: target`): Markdown
 * prints them as plain text, so a reader sees brackets instead of a link.
 */
export function undefinedReferencesOf(doc: MarkdownDoc): MarkdownLink[] {
  const found: MarkdownLink[] = [];
  for (const token of doc.tokens) {
    for (const child of token.children ?? []) {
      if (child.type !== 'text') continue;
      // Not after a word or `]`, so `arr[0][1]` in prose is no reference.
      for (const m of child.content.matchAll(/(?<![\w\]])\[([^\]]+)\]\[([^\]]*)\]/g)) {
        found.push({ target: `[${m[2] || m[1]}]`, line: (token.map?.[0] ?? 0) + 1 });
      }
    }
  }
  return found;
}

/** A fenced code block: its language (first word of the info string), text and the 1-based line of its first line. */
export interface CodeBlock {
  lang: string;
  text: string;
  line: number;
}

/** Every fenced code block of a document. */
export function codeBlocksOf(doc: MarkdownDoc): CodeBlock[] {
  return doc.tokens
    .filter((t) => t.type === 'fence')
    .map((t) => ({ lang: t.info.trim().split(/\s+/)[0].toLowerCase(), text: t.content, line: (t.map?.[0] ?? 0) + 2 }));
}
